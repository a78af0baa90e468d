package io.tenantgateway.webhook.policy;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.hami.HamiRelease;
import java.util.List;
import java.util.Optional;

/**
 * HAMi's Ascend backend for one chip (spec §3.4, only with {@code --enable-ascend=true}): hides the chip from
 * containers that do not ask for it (with {@code overwriteEnv}), rounds memory up to a vNPU template, and rejects
 * what the chip cannot split.
 */
public final class AscendVendor implements ChipVendors.Chip {
    public static final String VISIBLE_DEVICES_ENV = "ASCEND_VISIBLE_DEVICES";
    public static final String VNPU_MODE_ANNOTATION = "huawei.com/vnpu-mode";
    public static final String HAMI_CORE = "hami-core";
    static final String SUPER_POD_CHIP = "Ascend910C";
    /** HAMi v2.9's postStart for hami-core mode. */
    static final String[] LIMITER_POST_START = {"bash", "-c",
        "export RUST_LOG=info\n/hami-vnpu-core/limiter > /tmp/limiter_manager.log 2>&1 &"};

    private final AscendChip chip;
    private final HamiRelease compat;
    private final QuotaNames quota;

    public AscendVendor(AscendChip chip, HamiRelease compat) {
        this.chip = requireNonNull(chip, "chip");
        this.compat = requireNonNull(compat, "compat");
        this.quota = QuotaNames.of(chip.resourceName(), chip.resourceMemoryName(), chip.resourceCoreName(),
                chip.memoryFactor(), QuotaNames.allocatedAnnotation(chip.commonWord()));
    }

    @Override
    public String name() {
        return chip.commonWord();
    }

    @Override
    public QuotaNames quotaNames() {
        return quota;
    }

    @Override
    public String countName() {
        return chip.resourceName();
    }

    @Override
    public List<String> writtenNames() {
        return chip.resourceMemoryName().isEmpty() ? List.of() : List.of(chip.resourceMemoryName());
    }

    /** With {@code overwriteEnv}, a container that does not ask for the chip gets an empty visible-devices entry. */
    @Override
    public boolean actsOnEveryContainer() {
        return chip.overwriteEnv();
    }

    @Override
    public void mutateUnasked(ContainerNode container) {
        if (chip.overwriteEnv()) {
            container.appendEnv(VISIBLE_DEVICES_ENV, "");
        }
    }

    @Override
    public boolean mutate(ContainerNode container, PodNode pod) {
        Optional<Quantity> countLimit = container.limit(chip.resourceName());
        if (countLimit.isEmpty()) {
            mutateUnasked(container);
            return false;
        }
        long count = countLimit.get().value();
        if (chip.commonWord().equals(SUPER_POD_CHIP) && (compat == HamiRelease.V2_9 || chip.superPod())) {
            if (count == 1) {
                container.putLimit(chip.resourceName(), Quantity.format(2));
                if (container.request(chip.resourceName()).isPresent()) {
                    container.putRequest(chip.resourceName(), Quantity.format(2));
                }
            } else if (count % 2 != 0) {
                throw new VendorException("Ascend910C device request must be 1 or 2*n, got " + count);
            }
        }
        boolean hamiCore = HAMI_CORE.equals(pod.annotation(VNPU_MODE_ANNOTATION));
        if (compat == HamiRelease.V2_10) {
            if (!hamiCore && !chip.resourceCoreName().isEmpty()
                    && container.limitOrRequest(chip.resourceCoreName()).map(Quantity::value).orElse(0L) > 0) {
                throw new VendorException(chip.resourceCoreName()
                        + " is only supported in hami-core (soft split) mode");
            }
        } else if (hamiCore && !container.hasPostStart()) {
            container.setPostStartCommand(LIMITER_POST_START);
        }
        long memory = memory(container, hamiCore);
        if (count > 1 && !hamiCore && memory != chip.memoryAllocatable()) {
            throw new VendorException(compat == HamiRelease.V2_9 ? "vNPU nor supported for multiple devices"
                    : "vNPU not supported for multiple devices");
        }
        if (!chip.resourceMemoryName().isEmpty()) {
            if (compat == HamiRelease.V2_9 && !container.hasRequestsMap()) {
                throw VendorException.nilMapPanic();
            }
            container.putLimit(chip.resourceMemoryName(), Quantity.format(memory));
            container.putRequest(chip.resourceMemoryName(), Quantity.format(memory));
        }
        if (!pod.hasRuntimeClassName() && !chip.runtimeClassName().isEmpty()) {
            pod.setRuntimeClassName(chip.runtimeClassName());
        }
        return true;
    }

    /** Rule 5: the memory the container gets, in MiB. */
    private long memory(ContainerNode container, boolean hamiCore) {
        Optional<Quantity> asked = container.limit(chip.resourceMemoryName());
        if (asked.isEmpty()) {
            return chip.memoryAllocatable();
        }
        long value = asked.get().value();
        if (hamiCore) {
            return value;
        }
        for (AscendChip.Template template : chip.templates()) {
            if (template.memory() >= value) {
                return template.memory();
            }
        }
        if (value <= chip.memoryCapacity()) {
            return chip.memoryAllocatable();
        }
        throw new VendorException(chip.resourceMemoryName() + " " + value + " is invalid");
    }
}
