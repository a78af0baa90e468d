package io.tenantgateway.agent.ops;

import static org.assertj.core.api.Assertions.assertThat;

import io.tenantgateway.agent.testing.CliRun;
import io.tenantgateway.hami.CapacityVendor;
import io.tenantgateway.hami.HamiRelease;
import io.tenantgateway.hami.RegisterCodec;
import io.tenantgateway.hami.RegisterVendor;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code tenant-gateway annotations decode KEY=VALUE…} in-process: table output, capacity keys, the keys the help
 * lists, and bad input (exit 2, one line).
 */
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

    @Test
    void theHelpListsEveryKeyOfTheHamiTables() {
        for (String command : new String[] {"annotations", "annotations decode"}) {
            CliRun help = CliRun.of((command + " --help").split(" "));
            assertThat(help.exitCode()).as(help.both()).isZero();
            String out = help.out();
            assertThat(out).as(command).contains("Keys:", "hami.io/node-register-CHIP",
                    "hami.io/node-CHIP-register", "cambricon.com/mlu.smlu.vcore", "Node capacity");
            RegisterVendor.TABLE.forEach(v -> assertThat(out).as(command).containsPattern(
                    "\\n  " + java.util.regex.Pattern.quote(AnnotationKeys.pattern(v)) + " +"
                            + java.util.regex.Pattern.quote(v.vendor()) + " "));
            CapacityVendor.TABLE.forEach(v -> {
                assertThat(out).as(command).containsPattern("\\n  " + java.util.regex.Pattern.quote(v.countResource())
                        + " +" + java.util.regex.Pattern.quote(v.vendor()) + " ");
                assertThat(out).as(command).contains(v.memoryResource());
            });
        }
        CliRun encode = CliRun.of("annotations", "encode", "--help");
        assertThat(encode.out()).contains("hami.io/node-nvidia-register", "enflame.com/gcu-drs-capacity")
                .doesNotContain("Node capacity", "cambricon.com/mlu.smlu.vcore");
    }

    @Test
    void aCapacityKeyDecodesAsTheNodesStatusCapacityDoes() {
        CliRun run = CliRun.of("annotations", "decode", "--node=mlu-1", "cambricon.com/mlu.smlu.vcore=400",
                "cambricon.com/mlu.smlu.vmemory=256", "hami.io/node-nvidia-register=[]");

        assertThat(run.exitCode()).as(run.both()).isEqualTo(1); // the empty NVIDIA list is an error
        Map<String, String> capacity = new LinkedHashMap<>();
        capacity.put("cambricon.com/mlu.smlu.vcore", "400");
        capacity.put("cambricon.com/mlu.smlu.vmemory", "256");
        var expected = RegisterCodec.decodeNode(Map.of("hami.io/node-nvidia-register", "[]"), capacity,
                HamiRelease.V2_10, "mlu-1");
        assertThat(run.out().strip()).isEqualTo(AnnotationsCommand.Decode.toJson(expected));
        // 4 MLUs (100 vcore each) of 256 units x 256 MiB x 100 / 400 = 16 GiB
        assertThat(expected.get("cambricon.com/mlu.smlu.vcore").devices()).hasSize(4)
                .allSatisfy(d -> assertThat(d.devmem()).isEqualTo(16384));
        assertThat(run.out()).contains("\"status.capacity\" : {", "\"id\" : \"mlu-1-cambricon-mlu-3\"",
                "\"type\" : \"MLU\"", "\"devicevendor\" : \"MLU\"", "\"error\" : \"no gpu")
                .doesNotContain("\"cambricon.com/mlu.smlu.vcore\" :");

        CliRun amd = CliRun.of("annotations", "decode", "--hami-compat=v2.9", "amd.com/gpu=2");
        assertThat(amd.exitCode()).as(amd.both()).isZero();
        assertThat(amd.out()).contains("\"id\" : \"node-AMDGPU-1\"", "\"devmem\" : 192000");
    }

    @Test
    void capacityHamiWouldNotReadIsRefusedInOneLine() {
        CliRun memoryAlone = CliRun.of("annotations", "decode", "mthreads.com/sgpu-memory=8");
        assertThat(memoryAlone.exitCode()).as(memoryAlone.both()).isEqualTo(2);
        assertThat(memoryAlone.err().strip()).isEqualTo("error: KEY: mthreads.com/sgpu-memory (expected: given with "
                + "mthreads.com/sgpu-core=N: HAMi derives Mthreads devices from the count and reads "
                + "mthreads.com/sgpu-memory only with it)");

        CliRun amd = CliRun.of("annotations", "decode", "amd.com/gpu=2");
        assertThat(amd.exitCode()).as(amd.both()).isEqualTo(2);
        assertThat(amd.err().strip()).isEqualTo("error: KEY: amd.com/gpu (expected: a key HAMi v2.10 reads: only v2.9"
                + " derives AMD devices from amd.com/gpu (--hami-compat))");
        assertThat(amd.out()).isEmpty();

        CliRun encode = CliRun.of("annotations", "encode", "enflame.com/gcu");
        assertThat(encode.exitCode()).as(encode.both()).isEqualTo(2);
        assertThat(encode.err().strip()).isEqualTo("error: KEY: enflame.com/gcu (expected: a HAMi node register key; "
                + "enflame.com/gcu is node capacity, not an annotation: nothing to encode)");
    }

    @Test
    void anUnknownKeyNamesTheNearestOrEveryKey() {
        CliRun typo = CliRun.of("annotations", "decode", "hami.io/node-nvidia-registr=[]");
        assertThat(typo.exitCode()).as(typo.both()).isEqualTo(2);
        assertThat(typo.err().strip()).isEqualTo("error: KEY: hami.io/node-nvidia-registr (expected: a HAMi node "
                + "register key or a capacity resource HAMi reads; did you mean hami.io/node-nvidia-register?)");

        CliRun far = CliRun.of("annotations", "decode", "foo=bar");
        assertThat(far.exitCode()).as(far.both()).isEqualTo(2);
        String line = far.err().strip();
        assertThat(line).startsWith("error: KEY: foo (expected: a HAMi node register key or a capacity resource HAMi "
                + "reads: hami.io/node-nvidia-register, hami.io/node-dcu-register, ").doesNotContain("\n");
        RegisterVendor.TABLE.forEach(v -> assertThat(line).contains(AnnotationKeys.pattern(v) + ","));
        CapacityVendor.TABLE.forEach(v -> assertThat(line).contains(v.countResource()));
    }
}
