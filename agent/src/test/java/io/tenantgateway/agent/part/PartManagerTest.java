package io.tenantgateway.agent.part;

import static org.assertj.core.api.Assertions.assertThat;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.tenantgateway.agent.channels.RegistrationOwnedElsewhere;
import io.tenantgateway.agent.health.HealthCheck;
import io.tenantgateway.agent.k8s.KubernetesPermissions.Use;
import io.tenantgateway.agent.node.NodeIdentity;
import io.tenantgateway.hami.NodeVendor;
import java.time.Clock;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** The manager lists checks in the parts' order, starts a part after the parts it names, closes in reverse. */
class PartManagerTest {
    private final List<String> events = new CopyOnWriteArrayList<>();

    /** A part that records what happens to it (a class: the manager keys parts by identity). */
    private static final class Recorded implements Part {
        private final Plan plan;
        private final List<String> events;

        Recorded(Plan plan, List<String> events) {
            this.plan = plan;
            this.events = events;
        }

        @Override
        public Plan plan() {
            return plan;
        }

        @Override
        public void start(PartContext context) {
            events.add("start " + plan.name());
            context.own(() -> events.add("close owned by " + plan.name()));
        }

        @Override
        public void close() {
            events.add("close " + plan.name());
        }
    }

    private PartManager manager(boolean apiAccess, Part... parts) {
        return new PartManager(List.of(parts), new PrometheusRegistry(), Clock.systemUTC(),
                NodeIdentity.of(Optional.of("node-1")), "test", "agent-1", null, () -> false, apiAccess);
    }

    @Test
    void startsAPartAfterThePartsItNamesAndClosesInReverse() {
        Part registration = new Recorded(Plan.of("devices").after("device-plugin").check("devices-registered"),
                events);
        Part plugin = new Recorded(Plan.of("device-plugin").check("device-plugin-registered"), events);
        Part locks = new Recorded(Plan.of("lock-controller").after("absent").check("lock-controller-synced"),
                events);
        try (PartManager manager = manager(false, registration, plugin, locks)) {
            assertThat(manager.declareChecks()).extracting(HealthCheck::name).containsExactly("devices-registered",
                    "device-plugin-registered", "lock-controller-synced");
            manager.start();
            assertThat(manager.names()).isEqualTo("devices,device-plugin,lock-controller");
        }
        assertThat(events).containsExactly("start device-plugin", "start devices", "start lock-controller",
                "close owned by lock-controller", "close lock-controller", "close owned by devices", "close devices",
                "close owned by device-plugin", "close device-plugin");
    }

    /** A part that does {@code onStart} (a class: the manager keys parts by identity). */
    private static final class Acting implements Part {
        private final Plan plan;
        private final java.util.function.Consumer<PartContext> onStart;

        Acting(Plan plan, java.util.function.Consumer<PartContext> onStart) {
            this.plan = plan;
            this.onStart = onStart;
        }

        @Override
        public Plan plan() {
            return plan;
        }

        @Override
        public void start(PartContext context) {
            onStart.accept(context);
        }
    }

    @Test
    void registrationOwnedElsewhereNamesEveryVendorToldBeforeOrAfterTheSubscriberStarts() {
        List<RegistrationOwnedElsewhere> seen = new CopyOnWriteArrayList<>();
        List<PartContext> plugin = new CopyOnWriteArrayList<>();
        Part devicePlugin = new Acting(Plan.of("device-plugin"), context -> {
            plugin.add(context);
            RegistrationOwnedElsewhere.tell(context.channel(RegistrationOwnedElsewhere.CHANNEL), NodeVendor.NVIDIA, "nvidia-gpu.sock is served by another plugin");
            RegistrationOwnedElsewhere.tell(context.channel(RegistrationOwnedElsewhere.CHANNEL), NodeVendor.HYGON, "hygon.com_dcunum is served by another plugin");
            RegistrationOwnedElsewhere.tell(context.channel(RegistrationOwnedElsewhere.CHANNEL), NodeVendor.NVIDIA, "told twice");
        });
        Part devices = new Acting(Plan.of("devices").after("device-plugin"),
                context -> context.channel(RegistrationOwnedElsewhere.CHANNEL).subscribe(seen::add));
        try (PartManager manager = manager(false, devices, devicePlugin)) {
            manager.start();
            assertThat(seen).as("the last value, replayed, names both").singleElement()
                    .isEqualTo(RegistrationOwnedElsewhere.NONE
                            .with(NodeVendor.NVIDIA, "nvidia-gpu.sock is served by another plugin")
                            .with(NodeVendor.HYGON, "hygon.com_dcunum is served by another plugin"));

            RegistrationOwnedElsewhere.tell(plugin.get(0).channel(RegistrationOwnedElsewhere.CHANNEL),
                    NodeVendor.ascend("Ascend910B4"), "Ascend910B4.sock");

            assertThat(seen).hasSize(2);
            assertThat(seen.get(1).reasons().keySet()).containsExactly(NodeVendor.NVIDIA, NodeVendor.HYGON,
                    NodeVendor.ascend("Ascend910B4"));
            assertThat(seen.get(1).reason(NodeVendor.ascend("Ascend910B4"))).hasValue("Ascend910B4.sock");
            assertThat(seen.get(1).reason(NodeVendor.ascend("Ascend910B3"))).isEmpty();
        }
    }

    @Test
    void checksAndUsesThatNeedAnApiClientComeOnlyWithOneInTheirPlace() {
        Plan webhook = Plan.of("webhook").check("webhook-serving").withApi("webhook-quota-synced", Use.WEBHOOK_QUOTA)
                .check("webhook-device-config").uses(Use.DEVICE_CONFIG_MAP);
        assertThat(webhook.needsApi()).isTrue();
        assertThat(webhook.checks(true)).containsExactly("webhook-serving", "webhook-quota-synced",
                "webhook-device-config");
        assertThat(webhook.checks(false)).containsExactly("webhook-serving", "webhook-device-config");
        assertThat(webhook.uses(true)).containsExactly(Use.WEBHOOK_QUOTA, Use.DEVICE_CONFIG_MAP);
        assertThat(webhook.uses(false)).containsExactly(Use.DEVICE_CONFIG_MAP);
        assertThat(Plan.of("webhook").withApi("webhook-quota-synced", Use.WEBHOOK_QUOTA).needsApi()).isFalse();
    }
}
