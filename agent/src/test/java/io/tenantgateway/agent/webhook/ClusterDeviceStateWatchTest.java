package io.tenantgateway.agent.webhook;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Quantity;
import io.tenantgateway.agent.webhook.ClusterDeviceStateWatch.NeuronNames;
import io.tenantgateway.webhook.policy.DeviceConfig;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** HAMi's per-Node rules (v2.10 AWS Neuron {@code GetNodeDevices}, v2.9 Enflame {@code GetNodeDevices}). */
class ClusterDeviceStateWatchTest {
    private static final NeuronNames CHART = NeuronNames.of(DeviceConfig.defaults());

    private static Map<String, Quantity> capacity(String... pairs) {
        Map<String, Quantity> capacity = new LinkedHashMap<>();
        for (int i = 0; i < pairs.length; i += 2) {
            capacity.put(pairs[i], new Quantity(pairs[i + 1]));
        }
        return capacity;
    }

    private static long neuron(String... pairs) {
        return ClusterDeviceStateWatch.neuronCoresPerDevice(capacity(pairs), CHART);
    }

    @Test
    void neuronCoresPerDeviceIsCoresOverDevicesCappedAtTwo() {
        assertThat(CHART).isEqualTo(new NeuronNames("aws.amazon.com/neuron", "aws.amazon.com/neuroncore"));
        assertThat(neuron("aws.amazon.com/neuron", "2", "aws.amazon.com/neuroncore", "2")).isEqualTo(1);
        assertThat(neuron("aws.amazon.com/neuron", "16", "aws.amazon.com/neuroncore", "32")).isEqualTo(2);
        assertThat(neuron("aws.amazon.com/neuron", "1", "aws.amazon.com/neuroncore", "8")).as("capped").isEqualTo(2);
        assertThat(neuron("aws.amazon.com/neuron", "2", "aws.amazon.com/neuroncore", "3")).as("integer division")
                .isEqualTo(1);
        // HAMi keeps looking (its value stays 0) while a node has fewer cores than devices or none at all.
        assertThat(neuron("aws.amazon.com/neuron", "4", "aws.amazon.com/neuroncore", "2")).isEqualTo(-1);
        assertThat(neuron("aws.amazon.com/neuron", "4")).isEqualTo(-1);
        // Not a Neuron node: no count, a zero count, or one that is not a whole number.
        assertThat(neuron("aws.amazon.com/neuroncore", "2")).isEqualTo(-1);
        assertThat(neuron("aws.amazon.com/neuron", "0", "aws.amazon.com/neuroncore", "2")).isEqualTo(-1);
        assertThat(neuron("aws.amazon.com/neuron", "1500m", "aws.amazon.com/neuroncore", "2")).isEqualTo(-1);
        assertThat(neuron("cpu", "8")).isEqualTo(-1);
        // A device config without the awsneuron block names nothing.
        assertThat(ClusterDeviceStateWatch.neuronCoresPerDevice(capacity("aws.amazon.com/neuron", "2",
                "aws.amazon.com/neuroncore", "2"), NeuronNames.of(DeviceConfig.parse("nvidia: {}\n", "test"))))
                .isEqualTo(-1);
    }

    @Test
    void enflameFactorIsSharedOverCardsFromHamisConstantNames() {
        assertThat(ClusterDeviceStateWatch.enflameFactor(capacity("enflame.com/gcu-count", "2",
                "enflame.com/shared-gcu", "8"))).isEqualTo(4);
        assertThat(ClusterDeviceStateWatch.enflameFactor(capacity("enflame.com/gcu-count", "3",
                "enflame.com/shared-gcu", "8"))).as("integer division").isEqualTo(2);
        assertThat(ClusterDeviceStateWatch.enflameFactor(capacity("enflame.com/gcu-count", "2")))
                .as("an Enflame node without shared-gcu sets 0, as in HAMi").isZero();
        assertThat(ClusterDeviceStateWatch.enflameFactor(capacity("enflame.com/gcu-count", "0",
                "enflame.com/shared-gcu", "8"))).isEqualTo(-1);
        assertThat(ClusterDeviceStateWatch.enflameFactor(capacity("enflame.com/shared-gcu", "8"))).isEqualTo(-1);
        assertThat(ClusterDeviceStateWatch.enflameFactor(capacity("enflame.com/gcu", "8"))).isEqualTo(-1);
    }

    @Test
    void integerIsGosAsInt64() {
        assertThat(ClusterDeviceStateWatch.integer(new Quantity("2"))).hasValue(2);
        assertThat(ClusterDeviceStateWatch.integer(new Quantity("2k"))).hasValue(2000);
        assertThat(ClusterDeviceStateWatch.integer(new Quantity("1500m"))).isEmpty();
        assertThat(ClusterDeviceStateWatch.integer(new Quantity("100E"))).isEmpty();
        assertThat(ClusterDeviceStateWatch.integer(null)).isEmpty();
    }
}
