package io.tenantgateway.webhook.policy;

import static java.util.Objects.requireNonNull;

/**
 * One entry of {@code iluvatars:}: an Iluvatar chip HAMi runs one backend for when {@code --enable-iluvatar=true}.
 * Absent keys are {@code ""}.
 */
public record IluvatarChip(String chipName, String commonWord, String resourceCountName, String resourceMemoryName,
        String resourceCoreName) {

    public IluvatarChip {
        requireNonNull(chipName, "chipName");
        requireNonNull(commonWord, "commonWord");
        resourceCountName = requireNonNull(resourceCountName, "resourceCountName").trim();
        resourceMemoryName = requireNonNull(resourceMemoryName, "resourceMemoryName").trim();
        resourceCoreName = requireNonNull(resourceCoreName, "resourceCoreName").trim();
    }

    /** A chip as HAMi's chart configures it: {@code iluvatar.ai/<chip>-vgpu}, {@code .vMem}, {@code .vCore}. */
    static IluvatarChip chart(String chip) {
        String prefix = "iluvatar.ai/" + chip;
        return new IluvatarChip(chip, chip, prefix + "-vgpu", prefix + ".vMem", prefix + ".vCore");
    }
}
