package io.tenantgateway.common.config;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class FlagValuesTest {
    enum Mode { DEVICE_PLUGIN, OBSERVE }

    @Test
    void aConstantIsSpelledInLowerCaseWithDashes() {
        assertThat(FlagValues.of(Mode.DEVICE_PLUGIN)).isEqualTo("device-plugin");
        assertThat(FlagValues.list(Mode.class, " or ")).isEqualTo("device-plugin or observe");
    }

    @Test
    void findIgnoresCaseAndSurroundingBlanksAndFindsNothingElse() {
        assertThat(FlagValues.find(Mode.class, " Device-Plugin ")).contains(Mode.DEVICE_PLUGIN);
        assertThat(FlagValues.find(Mode.class, "observe")).contains(Mode.OBSERVE);
        assertThat(FlagValues.find(Mode.class, "device_plugin")).isEmpty();
        assertThat(FlagValues.find(Mode.class, "")).isEmpty();
        assertThat(FlagValues.find(Mode.class, null)).isEmpty();
    }
}
