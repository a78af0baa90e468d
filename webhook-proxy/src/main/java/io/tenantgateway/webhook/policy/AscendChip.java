package io.tenantgateway.webhook.policy;

import static java.util.Objects.requireNonNull;

import java.util.Comparator;
import java.util.List;

/**
 * One entry of {@code vnpus.configs} (or of a bare {@code vnpus:} list): an Ascend chip HAMi runs one backend for
 * when {@code --enable-ascend=true}. Absent keys are Go's zero values.
 *
 * @param templates the vNPU templates, sorted by memory ascending (HAMi sorts them before use)
 */
public record AscendChip(String commonWord, String chipName, String resourceName, String resourceMemoryName,
        String resourceCoreName, long memoryAllocatable, long memoryCapacity, int memoryFactor,
        String runtimeClassName, boolean overwriteEnv, List<Template> templates, boolean superPod) {

    /** A vNPU template: name and memory in MiB. */
    public record Template(String name, long memory) {
        public Template {
            requireNonNull(name, "name");
        }
    }

    public AscendChip {
        requireNonNull(commonWord, "commonWord");
        requireNonNull(chipName, "chipName");
        resourceName = requireNonNull(resourceName, "resourceName").trim();
        resourceMemoryName = requireNonNull(resourceMemoryName, "resourceMemoryName").trim();
        resourceCoreName = requireNonNull(resourceCoreName, "resourceCoreName").trim();
        requireNonNull(runtimeClassName, "runtimeClassName");
        templates = requireNonNull(templates, "templates").stream().sorted(Comparator.comparingLong(Template::memory))
                .toList();
    }

    /** A chip as HAMi's chart configures it: {@code huawei.com/<CW>}, {@code -memory}, {@code -core}. */
    static AscendChip chart(String commonWord, String chipName, long allocatable, long capacity, int memoryFactor,
            boolean superPod, Template... templates) {
        String name = "huawei.com/" + commonWord;
        return new AscendChip(commonWord, chipName, name, name + "-memory", name + "-core", allocatable, capacity,
                memoryFactor, "", false, List.of(templates), superPod);
    }
}
