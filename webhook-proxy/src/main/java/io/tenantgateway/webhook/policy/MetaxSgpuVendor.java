package io.tenantgateway.webhook.policy;

import java.util.Optional;
import java.util.Set;

/** HAMi's Metax sGPU backend (spec §3.5): app class and QoS policy annotations. */
public final class MetaxSgpuVendor implements Vendor {
    public static final String APP_CLASS_ANNOTATION = "metax-tech.com/sgpu-app-class";
    public static final String QOS_POLICY_ANNOTATION = "metax-tech.com/sgpu-qos-policy";
    static final String DEFAULT_QOS = "best-effort";
    private static final Set<String> APP_CLASSES = Set.of("online", "offline");
    private static final Set<String> QOS_POLICIES = Set.of("best-effort", "fixed-share", "burst-share");

    /** HAMi's {@code MemoryFactor}: a bare vmemory number is GiB. */
    static final int MEMORY_FACTOR = 1024;

    private final String vcountName;
    private final QuotaNames quota;

    public MetaxSgpuVendor(VendorBlock block) {
        this.vcountName = block.name("resourceVCountName");
        this.quota = QuotaNames.of(vcountName, block.name("resourceVMemoryName"), block.name("resourceVCoreName"),
                MEMORY_FACTOR, "hami.io/metax-sgpu-devices-allocated").readingLimitsOnly();
    }

    @Override
    public QuotaNames quotaNames() {
        return quota;
    }

    /**
     * HAMi's sGPU request (limits only): 100 cores without a vcore limit; vmemory as a bare number is GiB, with a
     * unit it is bytes (HAMi looks for a letter in Go's canonical form, which also writes a bare multiple of 1000
     * with a suffix: {@code 2000} is {@code 2k}); values out of the int32 range leave the container uncounted.
     */
    @Override
    public DeviceRequest request(ContainerNode container) {
        long count = container.limit(vcountName).flatMap(Quantity::exactLong).orElse(0L);
        if (count <= 0 || count > QuotaNames.MAX_INT32) {
            return DeviceRequest.NONE;
        }
        long cores = 100;
        Optional<Long> vcore = container.limit(quota.coreName()).flatMap(Quantity::exactLong);
        if (vcore.isPresent()) {
            if (vcore.get() < 0 || vcore.get() > QuotaNames.MAX_INT32) {
                return DeviceRequest.NONE;
            }
            cores = vcore.get();
        }
        long memory = 0;
        Optional<Quantity> vmemory = container.limit(quota.memoryName());
        Optional<Long> whole = vmemory.flatMap(Quantity::exactLong);
        if (whole.isPresent()) {
            long v = whole.get();
            if (hasUnit(vmemory.get(), v)) {
                memory = v / 1024 / 1024;
            } else if (v < 0 || v > QuotaNames.MAX_INT32 / MEMORY_FACTOR) {
                return DeviceRequest.NONE;
            } else {
                memory = v * MEMORY_FACTOR;
            }
            if (memory < 0 || memory > QuotaNames.MAX_INT32) {
                return DeviceRequest.NONE;
            }
        }
        return new DeviceRequest(count, memory, cores);
    }

    private static boolean hasUnit(Quantity quantity, long value) {
        boolean letter = quantity.toString().chars().anyMatch(Character::isLetter);
        return letter || (value != 0 && value % 1000 == 0);
    }

    @Override
    public String name() {
        return "Metax-SGPU";
    }

    @Override
    public boolean mutate(ContainerNode container, PodNode pod) {
        Optional<Quantity> vcount = container.limit(vcountName);
        if (vcount.isEmpty()) {
            return false;
        }
        String appClass = pod.annotation(APP_CLASS_ANNOTATION);
        if (appClass != null && !APP_CLASSES.contains(appClass)) {
            throw new VendorException(APP_CLASS_ANNOTATION + " must be set one of [online, offline]");
        }
        if (appClass != null && vcount.get().value() != 1) {
            throw new VendorException("app-class pod must request single device");
        }
        if (!"online".equals(appClass)) {
            String qos = pod.annotation(QOS_POLICY_ANNOTATION);
            if (qos == null) {
                pod.putAnnotation(QOS_POLICY_ANNOTATION, DEFAULT_QOS);
            } else if (!QOS_POLICIES.contains(qos)) {
                throw new VendorException(QOS_POLICY_ANNOTATION
                        + " must be set one of [best-effort, fixed-share, burst-share]");
            }
        }
        return true;
    }
}
