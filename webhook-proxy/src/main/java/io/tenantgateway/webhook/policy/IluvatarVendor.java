package io.tenantgateway.webhook.policy;

import static java.util.Objects.requireNonNull;

import java.util.List;
import java.util.Optional;

/** HAMi's Iluvatar backend for one chip (spec §3.2): cores for multi-device requests, the container name in env. */
public final class IluvatarVendor implements ChipVendors.Chip {
    /** Upstream's spelling. */
    public static final String CONTAINER_NAME_ENV = "SOL_CONTINER_NAME";

    /** HAMi's {@code MemoryFactor}: one unit of vMem is 256 MiB. */
    static final int MEMORY_FACTOR = 256;

    private final IluvatarChip chip;
    private final QuotaNames quota;

    public IluvatarVendor(IluvatarChip chip) {
        this.chip = requireNonNull(chip, "chip");
        this.quota = QuotaNames.of(chip.resourceCountName(), chip.resourceMemoryName(), chip.resourceCoreName(),
                MEMORY_FACTOR, QuotaNames.allocatedAnnotation(chip.commonWord()));
    }

    @Override
    public QuotaNames quotaNames() {
        return quota;
    }

    @Override
    public String name() {
        return chip.commonWord();
    }

    @Override
    public String countName() {
        return chip.resourceCountName();
    }

    @Override
    public List<String> writtenNames() {
        return chip.resourceCoreName().isEmpty() ? List.of() : List.of(chip.resourceCoreName());
    }

    @Override
    public boolean mutate(ContainerNode container, PodNode pod) {
        Optional<Quantity> count = container.limit(chip.resourceCountName());
        if (count.isEmpty()) {
            return false;
        }
        long n = count.get().value();
        if (n > 1 && !chip.resourceCoreName().isEmpty()) {
            container.putLimit(chip.resourceCoreName(), Quantity.format(n * 100));
        }
        if (!container.hasEnv(CONTAINER_NAME_ENV) && !container.name().isEmpty()) {
            container.appendEnv(CONTAINER_NAME_ENV, container.name());
        }
        return true;
    }
}
