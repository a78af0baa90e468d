package io.tenantgateway.tools.hamisim;

import static org.assertj.core.api.Assertions.assertThat;

import io.tenantgateway.tools.hamisim.AscendTemplates.Trimmed;
import io.tenantgateway.webhook.policy.AscendChip;
import io.tenantgateway.webhook.policy.DeviceConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** HAMi's {@code trimMemory} over the chart's chips (VENDOR-PLUGINS.md §2.7, §5.3). */
@Timeout(60)
class AscendTemplatesTest {
    private static AscendChip chip(String commonWord) {
        return AscendTemplates.chip(DeviceConfig.defaults().vnpus(), commonWord).orElseThrow();
    }

    @ParameterizedTest(name = "{0} {1} MiB → {2} {3}")
    @CsvSource({
            // the smallest template at least as large
            "Ascend910B4, 1, 8192, vir05_1c_8g",
            "Ascend910B4, 8192, 8192, vir05_1c_8g",
            "Ascend910B4, 8193, 16384, vir10_3c_16g",
            "Ascend910B4, 16384, 16384, vir10_3c_16g",
            // beyond every template, up to the capacity: the whole card, no name
            "Ascend910B4, 16385, 32768, ''",
            "Ascend910B4, 32768, 32768, ''",
            // beyond the capacity: invalid
            "Ascend910B4, 32769, 0, ''",
            "Ascend910B3, 8192, 16384, vir05_1c_16g",
            "Ascend910B3, 32768, 32768, vir10_3c_32g",
            "Ascend910B3, 65536, 65536, ''",
            "Ascend310P, 3072, 3072, vir01",
            "Ascend310P, 3073, 6144, vir02",
            "Ascend310P, 12288, 12288, vir04",
            // 310P: allocatable 21527 is less than the capacity 24576; a whole card is the allocatable memory
            "Ascend310P, 21527, 21527, ''",
            "Ascend310P, 24576, 21527, ''",
            "Ascend310P, 24577, 0, ''"})
    void trimsAsHamisSchedulerDoes(String commonWord, long memory, long trimmed, String template) {
        assertThat(AscendTemplates.trim(chip(commonWord), memory)).isEqualTo(new Trimmed(trimmed, template));
    }

    @Test
    void onlyConfiguredChipsAreFound() {
        assertThat(AscendTemplates.chip(DeviceConfig.defaults().vnpus(), "Ascend910B4")).isPresent();
        assertThat(AscendTemplates.chip(DeviceConfig.defaults().vnpus(), "Ascend999")).isEmpty();
    }
}
