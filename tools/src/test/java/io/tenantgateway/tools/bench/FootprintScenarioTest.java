package io.tenantgateway.tools.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

class FootprintScenarioTest {
    @Test
    void theClassCountIsReadFromVmMetaspace() {
        // jcmd PID VM.metaspace of JDK 17, its first lines.
        String out = """
                19586:

                Total Usage - 36 loaders, 2498 classes (915 shared):
                  Non-Class:  270 chunks,     10.11 MB capacity,    7.74 MB ( 77%) committed
                """;
        assertThat(FootprintScenario.parseMetaspace(out)).isEqualTo(Map.of("classes", 2498L, "shared", 915L,
                "loaders", 36L));
    }

    @Test
    void aJvmWithoutAnArchiveCountsNoneShared() {
        // jcmd PID VM.metaspace of JDK 17 when no class-data archive is mapped (a stale archive beside the jar).
        String out = """
                12620:

                Total Usage - 172 loaders, 5171 classes:
                  Non-Class:  1043 chunks,     22.10 MB capacity,   21.83 MB ( 99%) committed
                """;
        assertThat(FootprintScenario.parseMetaspace(out)).isEqualTo(Map.of("classes", 5171L, "shared", 0L,
                "loaders", 172L));
    }

    @Test
    void anAnswerWithoutTheTotalIsAnError() {
        assertThat(FootprintScenario.parseMetaspace("19586:\nCould not attach\n")).containsOnlyKeys("error")
                .extractingByKey("error").asString().contains("Could not attach");
    }
}
