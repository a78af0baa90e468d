package io.tenantgateway.agent.devices;

import static io.tenantgateway.agent.testing.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.tenantgateway.agent.node.NodeIdentity;
import io.tenantgateway.agent.channels.DeviceDiscovery;
import io.tenantgateway.agent.channels.RegistrationOwnedElsewhere;
import io.tenantgateway.agent.part.Part;
import io.tenantgateway.agent.part.PartContext;
import io.tenantgateway.agent.part.PartManager;
import io.tenantgateway.agent.part.Plan;
import io.tenantgateway.agent.testing.MockApiKubeconfig;
import io.tenantgateway.hami.Annotations;
import io.tenantgateway.hami.NodeVendor;
import io.tenantgateway.hami.RegisteredDevice;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Device registration as a part, next to a stand-in for the device plugin (the part it starts after): the device
 * plugin is told every vendor's devices on {@link DeviceDiscovery#CHANNEL}, and a vendor it reports as owned
 * elsewhere on {@link RegistrationOwnedElsewhere#CHANNEL} is left alone while the others are registered.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@EnableKubernetesMockClient(crud = true, https = false)
class DevicesPartIT {
    static KubernetesClient client;

    @TempDir
    Path dir;

    /** The device plugin's side of the channels: what it publishes at start, what it is told. */
    private static final class DevicePluginStandIn implements Part {
        final List<DeviceDiscovery> discoveries = new CopyOnWriteArrayList<>();
        private final Map<NodeVendor, String> ownedElsewhere;

        DevicePluginStandIn(Map<NodeVendor, String> ownedElsewhere) {
            this.ownedElsewhere = ownedElsewhere;
        }

        @Override
        public Plan plan() {
            return Plan.of("device-plugin");
        }

        @Override
        public void start(PartContext context) {
            ownedElsewhere.forEach((vendor, reason) -> RegistrationOwnedElsewhere.tell(
                    context.channel(RegistrationOwnedElsewhere.CHANNEL), vendor, reason));
            context.channel(DeviceDiscovery.CHANNEL).subscribe(discoveries::add);
        }
    }

    private PartManager manager(String node, String devices, DevicePluginStandIn plugin) throws Exception {
        client.nodes().resource(new NodeBuilder().withNewMetadata().withName(node).endMetadata().build()).create();
        DeviceRegistrationConfig config = DeviceRegistrationConfig.builder(node)
                .mock(MockInventory.parseDevices(devices)).build();
        PartManager manager = new PartManager(List.of(new DevicesPart(config), plugin), new PrometheusRegistry(),
                Clock.systemUTC(), NodeIdentity.of(Optional.of(node)), "test", "agent-1",
                MockApiKubeconfig.write(dir, client), () -> false);
        manager.declareChecks();
        return manager;
    }

    private static String annotation(String node, String key) {
        Node n = client.nodes().withName(node).get();
        return Annotations.get(n.getMetadata().getAnnotations(), key);
    }

    @Test
    void theDevicePluginIsToldEveryVendorsDevicesAndAVendorOwnedElsewhereIsLeftAlone() throws Exception {
        String node = "mixed-worker";
        DevicePluginStandIn plugin = new DevicePluginStandIn(Map.of(NodeVendor.HYGON,
                "hygon.com_dcunum is served by another device plugin"));
        try (PartManager manager = manager(node, "Ascend910B4:2,DCU-K100,A100-80GB", plugin)) {
            manager.start();

            await().atMost(WAIT).untilAsserted(() -> assertThat(annotation(node, "hami.io/node-handshake-Ascend910B4")).isNotNull());
            assertThat(annotation(node, Annotations.NODE_NVIDIA_REGISTER)).isNotNull();
            assertThat(annotation(node, "hami.io/node-dcu-register")).as("Hygon's plugin writes it").isNull();
            assertThat(annotation(node, "hami.io/node-handshake-dcu")).isNull();

            DeviceDiscovery expected = DeviceDiscovery.found(new MockDeviceSource(node,
                    MockInventory.parseDevices("A100-80GB"), 10).discover(), SimulatedVendor.of(node,
                    MockInventory.parseDevices("Ascend910B4:2,DCU-K100")).stream()
                    .map(v -> new DeviceDiscovery.VendorDevices(v.vendor(), v.devices())).toList());
            assertThat(plugin.discoveries).isNotEmpty().allSatisfy(d -> assertThat(d).isEqualTo(expected));
            assertThat(expected.vendorDevices()).extracting(v -> v.vendor().displayName(), v -> v.devices().size())
                    .containsExactly(org.assertj.core.groups.Tuple.tuple("Ascend910B4", 2),
                            org.assertj.core.groups.Tuple.tuple("Hygon", 1));
            assertThat(expected.vendorDevices().get(0).devices()).extracting(RegisteredDevice::id)
                    .containsExactly("4D54085D-ED8FA879-538EC9CA-18A99273-65EB2677",
                            "3155C548-CB12AF65-46D67350-C2C8CFA7-29C4B1B9");
        }
    }

    @Test
    void aNodeWithoutNvidiaGpusPublishesItsVendorsDevicesAtOnce() throws Exception {
        String node = "npu-worker";
        DevicePluginStandIn plugin = new DevicePluginStandIn(Map.of(NodeVendor.NVIDIA,
                "nvidia-gpu.sock is served by another device plugin"));
        try (PartManager manager = manager(node, "Ascend310P", plugin)) {
            manager.start();

            await().atMost(WAIT).untilAsserted(() -> assertThat(annotation(node, "hami.io/node-register-Ascend310P")).isNotNull());
            assertThat(plugin.discoveries).singleElement().satisfies(d -> {
                assertThat(d.devices()).isEmpty();
                assertThat(d.failure()).isEmpty();
                assertThat(d.vendorDevices()).singleElement().satisfies(v -> {
                    assertThat(v.vendor()).isEqualTo(NodeVendor.ascend("Ascend310P"));
                    assertThat(v.devices()).extracting(RegisteredDevice::id)
                            .containsExactly("706FC924-FD377040-89C2B47C-9775FDD3-B57B018B");
                });
            });
            assertThat(annotation(node, Annotations.NODE_NVIDIA_REGISTER)).isNull();
        }
    }
}
