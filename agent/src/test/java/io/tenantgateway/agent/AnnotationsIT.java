package io.tenantgateway.agent;

import static org.assertj.core.api.Assertions.assertThat;

import io.tenantgateway.agent.devices.MockInventory;
import io.tenantgateway.agent.devices.SimulatedVendor;
import io.tenantgateway.agent.testing.AgentProcess;
import io.tenantgateway.agent.testing.JarProcess;
import io.tenantgateway.agent.testing.JarProcess.Result;
import io.tenantgateway.hami.RegisteredDevice;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * {@code tenant-gateway annotations} in the built jar (two JVM launches): decode a Node as {@code kubectl get node -o
 * json} prints it, with several vendors' register annotations and one malformed, and encode a value byte for byte.
 */
@Timeout(180)
class AnnotationsIT {
    private static final JsonMapper JSON = JsonMapper.builder().build();

    @TempDir
    Path dir;

    @Test
    void decodesEveryRegisterAnnotationOfANodeFromStdin() throws Exception {
        String node = """
                {"apiVersion":"v1","kind":"Node","metadata":{"name":"gpu-7","annotations":{
                  "hami.io/node-handshake":"Reported 2026-01-01 00:00:00",
                  "hami.io/node-nvidia-register":"[{\\"id\\":\\"GPU-a\\",\\"index\\":1,\\"count\\":10,\\"devmem\\":23028,\\"devcore\\":100,\\"type\\":\\"NVIDIA GeForce RTX 4090\\",\\"mode\\":\\"hami-core\\",\\"health\\":true,\\"devicepairscore\\":{}}]",
                  "hami.io/node-dcu-register":"DCU-a,2,32752,100,DCU-K100,0,true,0,hami-core:DCU-b,2,32752,100,DCU-K100,1,false:",
                  "hami.io/node-register-Ascend910B4":"[{\\"id\\":\\"Ascend910B4-9f1e\\",\\"index\\":5,\\"count\\":4,\\"devmem\\":32768,\\"devcore\\":20,\\"type\\":\\"Ascend910B4\\",\\"health\\":true,\\"custominfo\\":{\\"NetworkID\\":1}}]",
                  "metax-tech.com/node-gpu-devices":"[{\\"uuid\\":\\"m-0\\",\\"model\\":\\"MXC500\\",\\"totalDevCount\\":16,\\"totalCompute\\":100,\\"totalVRam\\":65536,\\"numa\\":1,\\"healthy\\":true}]",
                  "enflame.com/gcu-drs-capacity":"{\\"devices\\":[{\\"index\\":\\"1\\",\\"minor\\":\\"3\\",\\"capacity\\":4}],\\"profiles\\":{\\"2g.12gb\\":\\"0\\",\\"4g.24gb\\":\\"1\\"}}",
                  "hami.io/node-MR-V100-register":"g-0,1,2,3,MR-V100,0,true,x,hami-core:",
                  "hami.io/node-va-register":"VA-a,1,2,3,VA,0,true:"
                }},"status":{"capacity":{"cpu":"8","enflame.com/gcu":"1"}}}
                """;
        Result result = run(node, "annotations", "decode", "-");

        assertThat(result.exitCode()).as(result.err()).isEqualTo(1); // two values have errors
        assertThat(JSON.readTree(result.out())).isEqualTo(JSON.readTree("""
                {
                  "hami.io/node-nvidia-register": {"devices": [{"id": "GPU-a", "index": 1, "count": 10,
                      "devmem": 23028, "devcore": 100, "type": "NVIDIA GeForce RTX 4090", "mode": "hami-core",
                      "health": true, "devicevendor": "NVIDIA"}]},
                  "hami.io/node-dcu-register": {"devices": [
                      {"id": "DCU-a", "count": 2, "devmem": 32752, "devcore": 100, "type": "DCU-K100",
                       "mode": "hami-core", "health": true, "devicevendor": "DCU"},
                      {"id": "DCU-b", "count": 2, "devmem": 32752, "devcore": 100, "type": "DCU-K100", "numa": 1,
                       "mode": "hami-core", "devicevendor": "DCU"}]},
                  "hami.io/node-register-Ascend910B4": {"devices": [{"id": "Ascend910B4-9f1e", "index": 5,
                      "count": 4, "devmem": 32768, "devcore": 20, "type": "Ascend910B4", "health": true,
                      "devicevendor": "Ascend910B4", "custominfo": {"NetworkID": 1}}]},
                  "metax-tech.com/node-gpu-devices": {"devices": [{"id": "m-0", "count": 16, "devmem": 65536,
                      "devcore": 100, "type": "Metax-SGPU", "numa": 1, "health": true, "devicevendor": "Metax-SGPU",
                      "custominfo": {"Model": "MXC500", "QosPolicy": "", "LinkZone": 0}}]},
                  "enflame.com/gcu-drs-capacity": {"devices": [{"id": "gpu-7-enflame-drs-1", "index": 1,
                      "count": 4, "devmem": 24576, "devcore": 100, "type": "Enflame", "health": true,
                      "devicevendor": "Enflame", "custominfo": {"minor": "3", "index": "1", "maxSlice": 4,
                      "profiles": {"2g.12gb": "0", "4g.24gb": "1"}}}]},
                  "hami.io/node-MR-V100-register": {"error":
                      "invalid index field: strconv.Atoi: parsing \\"x\\": invalid syntax"},
                  "hami.io/node-va-register": {"error": "invalid character 'V' looking for beginning of value"},
                  "status.capacity": {"devices": [{"id": "gpu-7-GCU-0", "count": 1, "devmem": 100, "devcore": 100,
                      "type": "GCU", "health": true, "devicevendor": "GCU"}]}
                }
                """));
    }

    @Test
    void decodesWhatASimulatedHygonAndAscendNodeRegistersAsHamisSchedulerReadsIt() throws Exception {
        List<SimulatedVendor> vendors = SimulatedVendor.of("worker-b2",
                MockInventory.parseDevices("Ascend910B4:2,DCU-K100:1"));
        ObjectNode node = JSON.createObjectNode().put("apiVersion", "v1").put("kind", "Node");
        ObjectNode annotations = node.putObject("metadata").put("name", "worker-b2").putObject("annotations");
        vendors.forEach(v -> annotations.put(v.vendor().registerKey(), v.register()));

        Result result = run(JSON.writeValueAsString(node), "annotations", "decode", "-");

        assertThat(result.exitCode()).as(result.err()).isZero();
        JsonNode decoded = JSON.readTree(result.out());
        assertThat(decoded.propertyNames()).containsExactlyInAnyOrder("hami.io/node-dcu-register",
                "hami.io/node-register-Ascend910B4");
        for (SimulatedVendor vendor : vendors) {
            JsonNode devices = decoded.path(vendor.vendor().registerKey()).path("devices");
            assertThat(devices.size()).as(vendor.vendor().registerKey()).isEqualTo(vendor.devices().size());
            for (int i = 0; i < devices.size(); i++) {
                RegisteredDevice expected = vendor.devices().get(i);
                JsonNode device = devices.get(i);
                assertThat(device.path("id").asString()).isEqualTo(expected.id());
                assertThat(device.path("index").asLong()).isEqualTo(expected.index());
                assertThat(device.path("count").asInt()).isEqualTo(expected.count());
                assertThat(device.path("devmem").asInt()).isEqualTo(expected.devmem());
                assertThat(device.path("devcore").asInt()).isEqualTo(expected.devcore());
                assertThat(device.path("type").asString()).isEqualTo(expected.type());
                assertThat(device.path("health").asBoolean()).isTrue();
            }
        }
        // As the plugins write them: Hygon's 9-field text (mode "hami"), Ascend's chips with their NetworkID.
        assertThat(decoded.path("hami.io/node-dcu-register").path("devices").get(0).path("mode").asString())
                .isEqualTo("hami");
        assertThat(decoded.path("hami.io/node-dcu-register").path("devices").get(0).path("type").asString())
                .isEqualTo("DCU-K100");
        assertThat(decoded.path("hami.io/node-register-Ascend910B4").path("devices").get(1).path("custominfo")
                .path("NetworkID").asInt()).isZero();
        assertThat(decoded.path("hami.io/node-register-Ascend910B4").path("devices").get(0).path("devmem").asInt())
                .isEqualTo(32768);
    }

    /**
     * The help promises exit 2 for stdin that is not a Node: each of these is one line saying what came and what was
     * expected, nothing on stdout. An object without kind but with metadata is read as a Node.
     */
    @Test
    void stdinThatIsNotANodeExitsTwoWithOneLine() throws Exception {
        String expected = " (expected: one Node object, kind: Node, as kubectl get node NAME -o json prints it)";
        Map<String, String> inputs = new LinkedHashMap<>();
        inputs.put("{}", "an object with neither kind nor metadata");
        inputs.put("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"annotations\":{}}}",
                "kind Pod");
        inputs.put("{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[{\"kind\":\"Node\"}]}", "kind List");
        inputs.put("[{\"kind\":\"Node\",\"metadata\":{}}]", "a JSON array");
        inputs.put("\"gpu-7\"", "a JSON string");
        for (Map.Entry<String, String> input : inputs.entrySet()) {
            Result result = run(input.getKey(), "annotations", "decode", "-");
            assertThat(result.exitCode()).as(input.getKey() + ": " + result.err()).isEqualTo(2);
            assertThat(result.err().lines()).as(input.getKey())
                    .containsExactly("error: stdin: " + input.getValue() + expected);
            assertThat(result.out()).as(input.getKey()).isEmpty();
        }

        Result noKind = run("{\"metadata\":{\"name\":\"gpu-7\",\"annotations\":{\"hami.io/node-nvidia-register\":"
                + "\"[{\\\"id\\\":\\\"GPU-a\\\",\\\"count\\\":10,\\\"health\\\":true}]\"}}}",
                "annotations", "decode", "-");
        assertThat(noKind.exitCode()).as(noKind.err()).isZero();
        assertThat(JSON.readTree(noKind.out()).path("hami.io/node-nvidia-register").path("devices").get(0).path("id")
                .asString()).isEqualTo("GPU-a");
    }

    @Test
    void encodesByteForByteAndRejectsBadInputWithOneLine() throws Exception {
        Result v29 = run("[{\"id\":\"GPU-a\",\"index\":4,\"count\":10,\"devmem\":23028,\"devcore\":100,"
                        + "\"type\":\"NVIDIA <x>\",\"health\":true}]",
                "annotations", "encode", "hami.io/node-nvidia-register", "--hami-compat=v2.9");
        assertThat(v29.exitCode()).as(v29.err()).isZero();
        assertThat(v29.out()).isEqualTo("[{\"id\":\"GPU-a\",\"index\":4,\"count\":10,\"devmem\":23028,"
                + "\"devcore\":100,\"type\":\"NVIDIA \\u003cx\\u003e\",\"health\":true,\"devicepairscore\":{}}]"
                + System.lineSeparator());
    }

    /**
     * Hostile input through the launcher, as the image runs it, with a 48 MiB heap: 50 MB on stdin, a 100 000-device
     * list, a legacy id that would forge a device, and a Node whose values carry terminal escapes. Each is one line
     * and exit 2, or output with the escapes written out; none runs out of heap (exit 3).
     */
    @Test
    void hostileInputIsRefusedInOneLineOrPrintedEscaped() throws Exception {
        Path huge = dir.resolve("huge.json");
        try (var out = Files.newOutputStream(huge)) {
            byte[] chunk = ("{\"id\":\"GPU-" + "a".repeat(1000) + "\"},").getBytes(StandardCharsets.US_ASCII);
            out.write('[');
            for (long written = 0; written < 50_000_000L; written += chunk.length) {
                out.write(chunk);
            }
        }
        for (String command : List.of("decode -", "encode hami.io/node-nvidia-register")) {
            Result result = launch(huge, command.split(" "));
            assertThat(result.exitCode()).as(result.err()).isEqualTo(2);
            assertThat(result.err().lines()).containsExactly("error: stdin: more than 4194304 bytes (expected: at"
                    + " most 4194304 (4 MiB), more than any Node the API server stores)");
        }

        String device = "{\"id\":\"GPU-x\",\"count\":1}";
        Result many = launch(Files.writeString(dir.resolve("many.json"), "[" + String.join(",",
                java.util.Collections.nCopies(100_000, device)) + "]"), "encode", "hami.io/node-nvidia-register");
        assertThat(many.exitCode()).as(many.err()).isEqualTo(2);
        assertThat(many.err().lines()).containsExactly("error: stdin: more than 1024 devices (expected: at most 1024 in one"
                + " register value)");

        // Unrefused, this id decodes into a second device DCU-b with 999,999 MiB.
        Result forged = launch(Files.writeString(dir.resolve("forged.json"), "[{\"id\":\"DCU-a,1,999999,100,"
                + "DCU-K100,0,true,0,hami-core:DCU-b\",\"count\":2,\"devmem\":100,\"type\":\"DCU-K100\"}]"),
                "encode", "hami.io/node-dcu-register");
        assertThat(forged.exitCode()).as(forged.err()).isEqualTo(2);
        assertThat(forged.err().lines()).containsExactly("error: stdin: device 0: id \"DCU-a,1,999999,100,DCU-K100,0,"
                + "true,0,hami-core:DCU-b\" contains ',' (expected: no ',' or ':' in a legacy-format field: they"
                + " separate the fields and the devices)");
        assertThat(forged.out()).isEmpty();

        String hostile = "GPU-\u001b]52;c;aGk=\u0007\r\u001b[2J\u009b";
        ObjectNode node = JSON.createObjectNode().put("kind", "Node");
        ObjectNode annotations = node.putObject("metadata").put("name", "gpu-7").putObject("annotations");
        annotations.put("hami.io/node-nvidia-register", "[{\"id\":" + JSON.writeValueAsString(hostile)
                + ",\"count\":1,\"type\":\"NVIDIA\\tL4\",\"health\":true}]");
        annotations.put("hami.io/node-dcu-register", "DCU-a,x\u001b[31m,1,1,T,0,true:");
        Path nodeFile = Files.writeString(dir.resolve("node.json"), JSON.writeValueAsString(node));
        Result table = launch(nodeFile, "decode", "--output=table", "-");
        assertThat(table.exitCode()).as(table.err()).isEqualTo(1);
        assertThat(table.out()).doesNotContain("\u001b", "\u0007", "\r", "\u009b").contains(
                "GPU-\\x1b]52;c;aGk=\\a\\r\\x1b[2J\\u009b", "NVIDIA\\tL4",
                "error: invalid count field: strconv.ParseInt: parsing \"x\\x1b[31m\": invalid syntax");
        Result json = launch(nodeFile, "decode", "-");
        assertThat(json.out()).doesNotContain("\u001b", "\u0007", "\r", "\u009b").contains(
                "\"id\" : \"GPU-\\u001B]52;c;aGk=\\u0007\\r\\u001B[2J\\u009b\"");
        assertThat(JSON.readTree(json.out()).path("hami.io/node-nvidia-register").path("devices").get(0).path("id")
                .asString()).as("the same JSON, only escaped").isEqualTo(hostile);
    }

    /**
     * {@code bin/tenant-gateway annotations args…} as the image runs it (the launcher's JVM options and
     * {@code -XX:+ExitOnOutOfMemoryError}), with a 48 MiB heap and {@code stdin} from a file.
     */
    private Result launch(Path stdin, String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of("sh", AgentProcess.launcher().toString(), "annotations"));
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command).redirectInput(stdin.toFile());
        builder.environment().put("PATH", Path.of(System.getProperty("java.home"), "bin") + java.io.File.pathSeparator
                + System.getenv().getOrDefault("PATH", "/usr/bin:/bin"));
        builder.environment().put("TENANT_GATEWAY_JAR", JarProcess.jar().toAbsolutePath().toString());
        builder.environment().put("JAVA_OPTS", "-Xmx48m");
        return JarProcess.finish(builder);
    }

    /** {@code java -jar tenant-gateway.jar args…} with {@code stdin} on its standard input. */
    private Result run(String stdin, String... args) throws IOException, InterruptedException {
        return JarProcess.run(Files.writeString(dir.resolve("stdin"), stdin, StandardCharsets.UTF_8), args);
    }
}
