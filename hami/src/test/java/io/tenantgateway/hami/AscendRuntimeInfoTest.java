package io.tenantgateway.hami;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

/** {@code huawei.com/<CW>} as HAMi's scheduler writes it and the Ascend plugin reads it (VENDOR-PLUGINS.md §5.4). */
class AscendRuntimeInfoTest {
    @Test
    void readsEveryShapeTheSchedulerWritesAndWritesThemBack() {
        String template = "[{\"UUID\":\"A-1\",\"temp\":\"vir05_1c_8g\",\"memory\":8192}]";
        String hamiCore = "[{\"UUID\":\"A-1\",\"memory\":4096,\"core\":40}]";

        assertThat(AscendRuntimeInfo.decode(template)).containsExactly(new AscendRuntimeInfo("A-1", "vir05_1c_8g",
                8192L, null));
        assertThat(AscendRuntimeInfo.decode(hamiCore)).containsExactly(new AscendRuntimeInfo("A-1", "", 4096L, 40L));
        assertThat(AscendRuntimeInfo.encode(AscendRuntimeInfo.decode(template))).isEqualTo(template);
        assertThat(AscendRuntimeInfo.encode(AscendRuntimeInfo.decode(hamiCore))).isEqualTo(hamiCore);
        assertThat(AscendRuntimeInfo.annotationKey("Ascend910B4")).isEqualTo("huawei.com/Ascend910B4");
    }

    @Test
    void readsAsGoDoesKeysInAnyCaseUnknownKeysIgnoredAndTheLastDuplicateUuidWins() {
        List<AscendRuntimeInfo> infos = AscendRuntimeInfo.decode(
                "[{\"uuid\":\"A\",\"TEMP\":\"t1\",\"x\":1},null,{\"UUID\":\"\",\"temp\":\"t0\"},{\"UUID\":\"A\","
                        + "\"temp\":\"t2\",\"memory\":0}]");

        assertThat(infos).hasSize(3);
        assertThat(AscendRuntimeInfo.lookup(infos)).containsOnlyKeys("A").extractingByKey("A")
                .isEqualTo(new AscendRuntimeInfo("A", "t2", 0L, null));
    }

    @Test
    void refusesWhatGoRefusesWithGosText() {
        assertThatThrownBy(() -> AscendRuntimeInfo.decode("{}")).hasMessage("json: cannot unmarshal object into Go"
                + " value of type []server.RuntimeInfo");
        assertThatThrownBy(() -> AscendRuntimeInfo.decode("[{\"memory\":\"8g\"}]")).hasMessage("json: cannot"
                + " unmarshal string into Go struct field RuntimeInfo.memory of type int64");
        assertThatThrownBy(() -> AscendRuntimeInfo.decode("")).hasMessage("unexpected end of JSON input");
    }
}
