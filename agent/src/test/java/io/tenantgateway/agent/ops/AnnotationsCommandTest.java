package io.tenantgateway.agent.ops;

import static org.assertj.core.api.Assertions.assertThat;

import io.tenantgateway.agent.testing.CliRun;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@code tenant-gateway annotations decode KEY=VALUE…} in-process: table output and bad input (exit 2, one line). */
@Timeout(60)
class AnnotationsCommandTest {

    @Test
    void decodesKeyValuePairsAsATableWithTheV29Decoder() {
        CliRun run = CliRun.of("annotations", "decode", "--hami-compat=v2.9", "--output", "table",
                "hami.io/node-dcu-register=DCU-a,x,32752,100,DCU-K100,0,true:", "hami.io/node-nvidia-register=[]");
        assertThat(run.exitCode()).as(run.both()).isEqualTo(1);
        assertThat(run.out()).contains("hami.io/node-dcu-register (Hygon)")
                .containsPattern("DCU-a +0 +0 +32752 +100 +DCU-K100 +0 +hami-core +healthy")
                .contains("hami.io/node-nvidia-register (NVIDIA)", "  error: no gpu found on node");
    }

    @Test
    void v210ErrorsAreHamisAndJsonIsTheDefault() {
        CliRun run = CliRun.of("annotations", "decode", "hami.io/node-dcu-register=DCU-a,x,1,1,T,0,true:");
        assertThat(run.exitCode()).isEqualTo(1);
        assertThat(run.out()).contains(
                "\"error\" : \"invalid count field: strconv.ParseInt: parsing \\\"x\\\": invalid syntax\"");
    }

    @Test
    void badInputExitsTwoWithOneLine() {
        CliRun unknownKey = CliRun.of("annotations", "decode", "hami.io/mutex.lock=x");
        assertThat(unknownKey.exitCode()).as(unknownKey.both()).isEqualTo(2);
        assertThat(unknownKey.err().strip()).startsWith("error: KEY: hami.io/mutex.lock (expected: ").doesNotContain("\n");

        CliRun release = CliRun.of("annotations", "encode", "hami.io/node-nvidia-register", "--hami-compat=v3");
        assertThat(release.exitCode()).isEqualTo(2);
        assertThat(release.err().strip()).isEqualTo("error: --hami-compat: 'v3' (expected: one of v2.10, v2.9)");

        CliRun output = CliRun.of("annotations", "decode", "--output=yaml", "hami.io/node-nvidia-register=[]");
        assertThat(output.exitCode()).isEqualTo(2);
        assertThat(output.err().strip()).isEqualTo("error: --output: yaml (expected: json or table)");
    }
}
