package io.tenantgateway.agent;

import static org.assertj.core.api.Assertions.assertThat;

import io.tenantgateway.agent.devices.MockInventory;
import io.tenantgateway.agent.devices.SimulatedVendor;
import io.tenantgateway.agent.testing.JarProcess;
import io.tenantgateway.hami.RegisteredDevice;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
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
                      "health": true}]},
                  "hami.io/node-dcu-register": {"devices": [
                      {"id": "DCU-a", "count": 2, "devmem": 32752, "devcore": 100, "type": "DCU-K100",
                       "mode": "hami-core", "health": true},
                      {"id": "DCU-b", "count": 2, "devmem": 32752, "devcore": 100, "type": "DCU-K100", "numa": 1,
                       "mode": "hami-core"}]},
                  "hami.io/node-register-Ascend910B4": {"devices": [{"id": "Ascend910B4-9f1e", "index": 5,
                      "count": 4, "devmem": 32768, "devcore": 20, "type": "Ascend910B4", "health": true,
                      "custominfo": {"NetworkID": 1}}]},
                  "metax-tech.com/node-gpu-devices": {"devices": [{"id": "m-0", "count": 16, "devmem": 65536,
                      "devcore": 100, "numa": 1, "health": true}]},
                  "enflame.com/gcu-drs-capacity": {"devices": [{"id": "gpu-7-enflame-drs-1", "index": 1,
                      "count": 4, "devmem": 24576, "devcore": 100, "type": "Enflame", "health": true,
                      "devicevendor": "Enflame", "custominfo": {"minor": "3", "index": "1", "maxSlice": 4,
                      "profiles": {"2g.12gb": "0", "4g.24gb": "1"}}}]},
                  "hami.io/node-MR-V100-register": {"error":
                      "invalid index field: strconv.Atoi: parsing \\"x\\": invalid syntax"},
                  "hami.io/node-va-register": {"error": "invalid character 'V' looking for beginning of value"},
                  "enflame.com/gcu": {"devices": [{"id": "gpu-7-enflame.com/gcu-0", "count": 1, "devcore": 100,
                      "type": "Enflame GCU", "health": true}]}
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

    private record Result(int exitCode, String out, String err) {
    }

    /** {@code java -jar tenant-gateway.jar args…} with {@code stdin} on its standard input. */
    private Result run(String stdin, String... args) throws IOException, InterruptedException {
        Path input = Files.writeString(dir.resolve("stdin"), stdin, StandardCharsets.UTF_8);
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java")
                .toString(), "-XX:TieredStopAtLevel=1", "-XX:-UsePerfData", "-jar",
                JarProcess.jar().toAbsolutePath().toString()));
        command.addAll(List.of(args));
        Process process = new ProcessBuilder(command).redirectInput(input.toFile()).start();
        CompletableFuture<String> err = CompletableFuture.supplyAsync(() -> read(process.getErrorStream()));
        String out = read(process.getInputStream());
        assertThat(process.waitFor(120, TimeUnit.SECONDS)).as("%s finished", command).isTrue();
        return new Result(process.exitValue(), out, err.join());
    }

    private static String read(java.io.InputStream stream) {
        try {
            return new String(stream.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "<unreadable: " + e + ">";
        }
    }
}
