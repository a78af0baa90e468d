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

    private final String vcountName;

    public MetaxSgpuVendor(VendorBlock block) {
        this.vcountName = block.name("resourceVCountName");
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
