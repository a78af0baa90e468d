package io.tenantgateway.agent.node;

import static org.assertj.core.api.Assertions.assertThat;

import io.tenantgateway.agent.node.NodeRegistrations.Registration;
import io.tenantgateway.hami.HamiRelease;
import io.tenantgateway.hami.RegisterCodec;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The status page's decoding of a node's registrations: doctor's, with bounds. */
class NodeRegistrationsTest {
    private static final Instant AT = Instant.parse("2026-11-30T12:00:00Z");
    private static final String NVIDIA = "hami.io/node-nvidia-register";

    private static String nvidia(int devices) {
        StringBuilder value = new StringBuilder("[");
        for (int i = 0; i < devices; i++) {
            value.append(i == 0 ? "" : ",").append("{\"id\":\"GPU-").append(i).append("\",\"index\":").append(i)
                    .append(",\"count\":10,\"devmem\":81920,\"devcore\":100,\"type\":\"NVIDIA A100\",\"health\":true}");
        }
        return value.append(']').toString();
    }

    @Test
    void decodesEveryVendorAsDoctorDoes() {
        Map<String, String> annotations = new LinkedHashMap<>();
        annotations.put(NVIDIA, nvidia(2));
        annotations.put("hami.io/node-handshake", "Reported 2026-11-30 11:59:50");
        annotations.put("hami.io/node-register-Ascend910B4", "[{\"id\":\"a\",\"count\":\"4\"}]");
        Map<String, String> capacity = Map.of("cambricon.com/mlu.smlu.vcore", "200", "cambricon.com/mlu.smlu.vmemory",
                "96");

        NodeRegistrations read = NodeRegistrations.decode("worker-1", annotations, capacity, AT, "API get");

        Map<String, RegisterCodec.Result> doctor = RegisterCodec.decodeNode(annotations, capacity, HamiRelease.V2_10,
                "worker-1");
        assertThat(read.registrations()).extracting(Registration::key).containsExactlyElementsOf(doctor.keySet());
        assertThat(read.registrations()).allSatisfy(r -> {
            RegisterCodec.Result result = doctor.get(r.key());
            assertThat(r.error()).isEqualTo(result.error());
            assertThat(r.devices()).isEqualTo(result.isOk() ? result.devices() : java.util.List.of());
        });
        assertThat(read.registrations()).extracting(r -> r.vendor() + (r.fromCapacity() ? " (capacity)" : ""))
                .containsExactly("NVIDIA", "Ascend", "Cambricon (capacity)");
        assertThat(read.registrations().get(1).error())
                .isEqualTo("json: cannot unmarshal string into Go struct field DeviceInfo.count of type int32");
        assertThat(read.failing()).isEqualTo(1);
        assertThat(read).extracting(NodeRegistrations::state, NodeRegistrations::node, NodeRegistrations::readAt,
                NodeRegistrations::source, NodeRegistrations::notShown)
                .containsExactly(NodeRegistrations.State.READ, "worker-1", AT, "API get", 0);
    }

    @Test
    void keepsAtMost64DevicesOfARegistrationAndCountsThemAll() {
        Registration nvidia = NodeRegistrations.decode("n", Map.of(NVIDIA, nvidia(100)), Map.of(), AT, "x")
                .registrations().get(0);
        assertThat(nvidia.deviceCount()).isEqualTo(100);
        assertThat(nvidia.devices()).hasSize(NodeRegistrations.MAX_DEVICES).last()
                .satisfies(d -> assertThat(d.id()).isEqualTo("GPU-63"));
    }

    @Test
    void decodesAtMost32RegistrationsAndNoValueOver64KiB() {
        Map<String, String> annotations = new LinkedHashMap<>();
        annotations.put(NVIDIA, "[" + " ".repeat(NodeRegistrations.MAX_VALUE_CHARS) + "]");
        for (int i = 0; i < 40; i++) {
            annotations.put("hami.io/node-register-chip" + i, "x");
        }
        NodeRegistrations read = NodeRegistrations.decode("n", annotations, Map.of("aws.amazon.com/neuron", "1"), AT,
                "x");

        assertThat(read.registrations()).hasSize(NodeRegistrations.MAX_REGISTRATIONS);
        assertThat(read.notShown()).isEqualTo(42 - 32); // 41 register keys and one capacity vendor, 32 shown
        assertThat(read.registrations().get(0).error()).isEqualTo("value of 65538 characters not decoded here"
                + " (expected: at most 65536; tenant-gateway annotations decode reads it)");
        assertThat(read.registrations().get(31).key()).isEqualTo("hami.io/node-register-chip30");
    }
}
