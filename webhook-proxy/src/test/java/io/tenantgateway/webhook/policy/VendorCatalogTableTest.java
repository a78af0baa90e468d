package io.tenantgateway.webhook.policy;

import static org.assertj.core.api.Assertions.assertThat;

import io.tenantgateway.hami.HamiRelease;
import io.tenantgateway.hami.HamiVendor;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The webhook's vendor catalogue and chart defaults against the vendor table ({@link HamiVendor}): the backends of a
 * release, in order, by CommonWord; each backend's default resource names.
 */
class VendorCatalogTableTest {

    @ParameterizedTest
    @EnumSource(HamiRelease.class)
    void theCatalogueIsTheTablesBackendsOfTheReleaseInOrder(HamiRelease release) {
        PolicyConfig policy = PolicyConfig.defaults().withCompat(release).withEnableAscend(true)
                .withEnableIluvatar(true);
        List<String> catalogue = DeviceConfig.defaults().vendors(policy).stream().map(Vendor::name).toList();
        List<String> table = Arrays.stream(HamiVendor.values()).filter(v -> v.in(release))
                .map(v -> v.perChip() ? v.display() : v.commonWord(release)).toList();
        assertThat(catalogue).containsExactlyElementsOf(table);
        List<String> switchedOff = DeviceConfig.defaults().vendors(policy.withEnableAscend(false)
                .withEnableIluvatar(false)).stream().map(Vendor::name).toList();
        assertThat(switchedOff).containsExactlyElementsOf(Arrays.stream(HamiVendor.values())
                .filter(v -> v.in(release) && v.switchName().isEmpty()).map(v -> v.commonWord(release)).toList());
    }

    @ParameterizedTest
    @EnumSource(HamiVendor.class)
    void theChartDefaultsNameTheTablesResources(HamiVendor vendor) {
        DeviceConfig defaults = DeviceConfig.defaults();
        List<List<String>> configured = new ArrayList<>();
        switch (vendor) {
            case NVIDIA -> {
                NvidiaConfig nvidia = defaults.nvidia();
                configured.add(List.of(nvidia.resourceCountName(), nvidia.resourceMemoryName(),
                        nvidia.resourceCoreName(), nvidia.resourceMemoryPercentageName()));
            }
            case ASCEND -> defaults.vnpus().forEach(chip -> configured.add(List.of(chip.resourceName(),
                    chip.resourceMemoryName(), chip.resourceCoreName())));
            case ILUVATAR -> defaults.iluvatars().forEach(chip -> configured.add(List.of(chip.resourceCountName(),
                    chip.resourceMemoryName(), chip.resourceCoreName())));
            default -> configured.add(List.copyOf(defaults.block(vendor.block()).values().values()));
        }
        assertThat(configured).isNotEmpty();
        List<String> chips = switch (vendor) {
            case ASCEND -> defaults.vnpus().stream().map(AscendChip::commonWord).toList();
            case ILUVATAR -> defaults.iluvatars().stream().map(IluvatarChip::commonWord).toList();
            default -> List.of("");
        };
        for (int i = 0; i < configured.size(); i++) {
            String chip = chips.get(i);
            List<String> expected = vendor.resources().stream().map(r -> HamiVendor.forChip(r, chip)).toList();
            assertThat(configured.get(i)).as("%s %s", vendor, chip).containsAll(expected);
        }
    }
}
