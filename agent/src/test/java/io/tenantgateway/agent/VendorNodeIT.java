package io.tenantgateway.agent;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.tenantgateway.agent.admin.AdminServer;
import io.tenantgateway.agent.admin.AgentStatus;
import io.tenantgateway.agent.devices.DeviceRegistrationSnapshot;
import io.tenantgateway.agent.health.HealthCheck;
import io.tenantgateway.agent.http.HttpLoop;
import io.tenantgateway.agent.locks.LockSnapshot;
import io.tenantgateway.agent.node.NodeIdentity;
import io.tenantgateway.agent.node.NodeRegistrations;
import io.tenantgateway.agent.node.OwnNode;
import io.tenantgateway.agent.testing.JarProcess;
import io.tenantgateway.agent.testing.JarProcess.Result;
import io.tenantgateway.hami.HamiRelease;
import io.tenantgateway.tunnel.TunnelConfig;
import io.tenantgateway.tunnel.client.AgentSnapshot;
import io.tenantgateway.webhook.RecentAdmissions;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * One Node carrying every HAMi vendor's register annotation and every capacity HAMi's scheduler derives devices from,
 * read as HAMi's scheduler reads it: through {@code tenant-gateway annotations decode -} (the built jar, a child
 * process) with each vendor's ids, types, memory, core masks, NUMA split and {@code devicevendor}, and the same Node,
 * served by an API server and read by the agent's own-node view, on {@code /debug/devices} with the same devices.
 */
@Timeout(180)
@EnableKubernetesMockClient(crud = true, https = false)
class VendorNodeIT {
    private static final JsonMapper JSON = JsonMapper.builder().build();

    KubernetesMockServer server;
    KubernetesClient client;

    @TempDir
    Path dir;

    /** Every vendor's annotation (one that HAMi cannot read) and capacity, on node {@code test}. */
    private static String node() {
        ObjectNode node = JSON.createObjectNode().put("apiVersion", "v1").put("kind", "Node");
        ObjectNode metadata = node.putObject("metadata").put("name", "test");
        metadata.putObject("labels").put("node.kubernetes.io/instance-type", "inf2.xlarge");
        ObjectNode a = metadata.putObject("annotations");
        a.put("hami.io/node-handshake", "Reported 2026-01-01 00:00:00");
        a.put("hami.io/node-nvidia-register", "[{\"id\":\"GPU-a\",\"count\":10,\"devmem\":23028,\"devcore\":100,"
                + "\"type\":\"NVIDIA L4\",\"health\":true}]");
        a.put("hami.io/node-dcu-register", "DCU-a,2,32752,100,DCU-K100,0,true,0,hami-core:");
        a.put("hami.io/node-register-Ascend910B3", "[{\"id\":\"Ascend910B3-0\",\"count\":4,\"devmem\":65536,"
                + "\"devcore\":20,\"type\":\"Ascend910B3\",\"health\":true,\"custominfo\":{\"NetworkID\":0}}]");
        a.put("hami.io/node-register-Ascend910B4", "not-json");
        a.put("hami.io/node-register-xpu", "[{\"id\":\"XPU-0\",\"count\":4,\"devmem\":24576,\"devcore\":100,"
                + "\"type\":\"XPU\",\"health\":true}]");
        a.put("hami.io/node-amd-register", "[{\"id\":\"AMD-0\",\"count\":1,\"devmem\":196608,\"devcore\":100,"
                + "\"type\":\"MI300X\",\"health\":true}]");
        a.put("hami.io/node-va-register", "[{\"id\":\"VA-0\",\"count\":1,\"devmem\":16384,\"devcore\":50,"
                + "\"type\":\"VA1\",\"health\":true}]");
        a.put("hami.io/node-biren-register", "[{\"id\":\"BR-0\",\"count\":1,\"devmem\":65536,\"devcore\":30,"
                + "\"type\":\"BR106\",\"health\":true}]");
        a.put("metax-tech.com/node-gpu-devices", "[{\"uuid\":\"m-0\",\"model\":\"MXC500\",\"totalDevCount\":16,"
                + "\"totalCompute\":100,\"totalVRam\":65536,\"numa\":1,\"healthy\":true,\"qosPolicy\":\"best-effort\","
                + "\"linkZone\":2}]");
        a.put("enflame.com/gcu-drs-capacity", "{\"devices\":[{\"index\":\"1\",\"minor\":\"3\",\"capacity\":4}],"
                + "\"profiles\":{\"2g.12gb\":\"0\",\"4g.24gb\":\"1\"}}");
        a.put("hami.io/node-MR-V100-register", "g-0,1,2,3,MR-V100,0,true,0,hami-core:");
        node.putObject("status").set("capacity", JSON.readTree("""
                {"cpu": "8", "cambricon.com/mlu.smlu.vcore": "1", "cambricon.com/mlu.smlu.vmemory": "1",
                 "mthreads.com/sgpu-core": "1", "mthreads.com/sgpu-memory": "1", "metax-tech.com/gpu": "1",
                 "kunlunxin.com/xpu": "2", "enflame.com/gcu": "1", "enflame.com/gcu-count": "1",
                 "aws.amazon.com/neuron": "2", "aws.amazon.com/neuroncore": "4", "amd.com/gpu": "1"}
                """));
        return JSON.writeValueAsString(node);
    }

    private static final String EXPECTED_V210 = """
            {
              "hami.io/node-nvidia-register": {"devices": [{"id": "GPU-a", "count": 10, "devmem": 23028,
                  "devcore": 100, "type": "NVIDIA L4", "health": true, "devicevendor": "NVIDIA"}]},
              "hami.io/node-dcu-register": {"devices": [{"id": "DCU-a", "count": 2, "devmem": 32752, "devcore": 100,
                  "type": "DCU-K100", "mode": "hami-core", "health": true, "devicevendor": "DCU"}]},
              "hami.io/node-register-Ascend910B3": {"devices": [{"id": "Ascend910B3-0", "count": 4, "devmem": 65536,
                  "devcore": 20, "type": "Ascend910B3", "health": true, "devicevendor": "Ascend910B3",
                  "custominfo": {"NetworkID": 0}}]},
              "hami.io/node-register-Ascend910B4": {"error": "invalid character 'o' in literal null (expecting 'u')"},
              "hami.io/node-register-xpu": {"devices": [{"id": "XPU-0", "count": 4, "devmem": 24576, "devcore": 100,
                  "type": "XPU", "health": true, "devicevendor": "XPU"}]},
              "hami.io/node-amd-register": {"devices": [{"id": "AMD-0", "count": 1, "devmem": 196608,
                  "devcore": 100, "type": "MI300X", "health": true, "devicevendor": "AMD"}]},
              "hami.io/node-va-register": {"devices": [{"id": "VA-0", "count": 1, "devmem": 16384, "devcore": 100,
                  "type": "VA1", "health": true, "devicevendor": "Vastai"}]},
              "hami.io/node-biren-register": {"devices": [{"id": "BR-0", "count": 1, "devmem": 65536,
                  "devcore": 100, "type": "BR106", "health": true, "devicevendor": "Biren"}]},
              "metax-tech.com/node-gpu-devices": {"devices": [{"id": "m-0", "count": 16, "devmem": 65536,
                  "devcore": 100, "type": "Metax-SGPU", "numa": 1, "health": true, "devicevendor": "Metax-SGPU",
                  "custominfo": {"Model": "MXC500", "QosPolicy": "best-effort", "LinkZone": 2}}]},
              "enflame.com/gcu-drs-capacity": {"devices": [{"id": "test-enflame-drs-1", "index": 1, "count": 4,
                  "devmem": 24576, "devcore": 100, "type": "Enflame", "health": true, "devicevendor": "Enflame",
                  "custominfo": {"minor": "3", "index": "1", "maxSlice": 4,
                      "profiles": {"2g.12gb": "0", "4g.24gb": "1"}}}]},
              "hami.io/node-MR-V100-register": {"devices": [{"id": "g-0", "count": 1, "devmem": 2, "devcore": 3,
                  "type": "MR-V100", "mode": "hami-core", "health": true, "devicevendor": "MR-V100"}]},
              "status.capacity": {"devices": [
                  {"id": "test-cambricon-mlu-0", "count": 100, "devmem": 25600, "devcore": 100, "type": "MLU",
                   "health": true, "devicevendor": "MLU"},
                  {"id": "test-mthreads-0", "count": 100, "devmem": 8192, "devcore": 16, "type": "Mthreads",
                   "health": true, "devicevendor": "Mthreads"},
                  {"id": "test-metax-0", "count": 1, "devmem": 65536, "devcore": 100, "type": "Metax-GPU",
                   "health": true, "devicevendor": "Metax-GPU"},
                  {"id": "test-kunlun-0", "count": 100, "devmem": 98304, "devcore": 100, "type": "kunlun",
                   "health": true, "devicevendor": "kunlun"},
                  {"id": "test-kunlun-1", "index": 1, "count": 100, "devmem": 98304, "devcore": 100,
                   "type": "kunlun", "numa": 1, "health": true, "devicevendor": "kunlun"},
                  {"id": "test-GCU-0", "count": 1, "devmem": 100, "devcore": 100, "type": "GCU", "health": true,
                   "devicevendor": "GCU"},
                  {"id": "test-AWSNeuron-0", "count": 2, "devcore": 3, "type": "AWSNeuron", "health": true,
                   "devicevendor": "AWSNeuron", "custominfo": {"AWSNodeType": "inf2.xlarge"}},
                  {"id": "test-AWSNeuron-1", "index": 1, "count": 2, "devcore": 3, "type": "AWSNeuron",
                   "health": true, "devicevendor": "AWSNeuron", "custominfo": {"AWSNodeType": "inf2.xlarge"}}]}
            }
            """;

    @Test
    void annotationsDecodeReadsEveryVendorAsHamisSchedulerAndDebugDevicesShowsTheSame() throws Exception {
        String node = node();
        Result v210 = run(node, "annotations", "decode", "-");
        assertThat(v210.exitCode()).as("Ascend910B4's value does not decode: " + v210.err()).isEqualTo(1);
        JsonNode decoded = JSON.readTree(v210.out());
        assertThat(decoded).isEqualTo(JSON.readTree(EXPECTED_V210));

        Result v29 = run(node, "annotations", "decode", "--hami-compat=v2.9", "-");
        assertThat(v29.exitCode()).as(v29.err()).isEqualTo(1);
        assertThat(JSON.readTree(v29.out()).path("status.capacity").path("devices").valueStream()
                .map(d -> d.path("id").asString() + " " + d.path("type").asString() + " " + d.path("devmem").asInt()))
                .as("v2.9 also derives Enflame shared and AMD devices")
                .containsExactly("test-cambricon-mlu-0 MLU 25600", "test-mthreads-0 Mthreads 8192",
                        "test-metax-0 Metax-GPU 65536", "test-kunlun-0 kunlun 98304", "test-kunlun-1 kunlun 98304",
                        "test-GCU-0 GCU 100", "test-enflame-0 Enflame 100", "test-AWSNeuron-0 AWSNeuron 0",
                        "test-AWSNeuron-1 AWSNeuron 0", "test-AMDGPU-0 AMDGPU 192000");

        // The same Node from an API server, read by the agent's own-node view, on /debug/devices.
        client.nodes().resource(Serialization.unmarshal(node, Node.class)).create();
        OwnNode own = new OwnNode(client, NodeIdentity.known("test"), Runnable::run, Clock.systemUTC(),
                HamiRelease.V2_10);
        assertThat(own.fetched().state()).as("read inline by the direct executor")
                .isEqualTo(NodeRegistrations.State.PENDING);
        NodeRegistrations read = own.fetched();
        assertThat(read.state()).as(read.detail()).isEqualTo(NodeRegistrations.State.READ);
        HttpLoop loop = new HttpLoop("vendor-node-it");
        loop.start();
        AdminServer admin = new AdminServer(loop, "127.0.0.1", 0, new RegistrationsOnly(own), "test");
        try {
            admin.start();
            HttpResponse<String> response = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(
                    "http://127.0.0.1:" + admin.boundPort() + "/debug/devices")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
            JsonNode registrations = JSON.readTree(response.body()).path("registrations");
            assertThat(registrations.path("hamiCompat").asString()).isEqualTo("v2.10");
            assertThat(viewOfDebugDevices(registrations)).isEqualTo(decoded);
        } finally {
            admin.close();
            loop.close();
        }
    }

    /**
     * {@code /debug/devices}' registrations in {@code annotations decode}'s shape: one member per register key, the
     * capacity-derived devices together under {@code status.capacity}, each device without its zero values.
     */
    private static JsonNode viewOfDebugDevices(JsonNode registrations) {
        ObjectNode out = JSON.createObjectNode();
        ArrayNode fromCapacity = JSON.createArrayNode();
        for (JsonNode registration : registrations.path("registrations")) {
            if (registration.path("fromCapacity").asBoolean()) {
                registration.path("devices").forEach(d -> fromCapacity.add(withoutZeros(d)));
                continue;
            }
            ObjectNode member = out.putObject(registration.path("key").asString());
            if (registration.has("error")) {
                member.put("error", registration.path("error").asString());
                continue;
            }
            ArrayNode devices = member.putArray("devices");
            registration.path("devices").forEach(d -> devices.add(withoutZeros(d)));
        }
        if (!fromCapacity.isEmpty()) {
            out.putObject("status.capacity").set("devices", fromCapacity);
        }
        return out;
    }

    private static JsonNode withoutZeros(JsonNode device) {
        ObjectNode copy = (ObjectNode) device.deepCopy();
        List<String> zero = new ArrayList<>();
        copy.properties().forEach(e -> {
            JsonNode v = e.getValue();
            if ((v.isNumber() && v.asLong() == 0) || (v.isString() && v.asString().isEmpty())
                    || (v.isBoolean() && !v.asBoolean()) || (v.isObject() && v.isEmpty())) {
                zero.add(e.getKey());
            }
        });
        zero.forEach(copy::remove);
        return copy;
    }

    /** The admin server's view of an agent that only reads its Node. */
    private record RegistrationsOnly(OwnNode own) implements AgentStatus {
        @Override
        public Map<String, String> config() {
            return Map.of();
        }

        @Override
        public String agentId() {
            return "test";
        }

        @Override
        public Optional<TunnelConfig> tunnelConfig() {
            return Optional.empty();
        }

        @Override
        public Optional<String> nodeName() {
            return Optional.of("test");
        }

        @Override
        public Map<String, HealthCheck.Result> readiness() {
            return Map.of();
        }

        @Override
        public Optional<AgentSnapshot> tunnel() {
            return Optional.empty();
        }

        @Override
        public Optional<DeviceRegistrationSnapshot> devices() {
            return Optional.empty();
        }

        @Override
        public Optional<LockSnapshot> locks() {
            return Optional.empty();
        }

        @Override
        public NodeRegistrations registrations() {
            return own.fetched();
        }

        @Override
        public Optional<RecentAdmissions> admissions() {
            return Optional.empty();
        }
    }

    /** {@code java -jar tenant-gateway.jar args…} with {@code stdin} on its standard input. */
    private Result run(String stdin, String... args) throws IOException, InterruptedException {
        return JarProcess.run(Files.writeString(dir.resolve("stdin"), stdin, StandardCharsets.UTF_8), args);
    }
}
