package io.tenantgateway.agent.part;

import static org.assertj.core.api.Assertions.assertThat;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.tenantgateway.agent.health.HealthCheck;
import io.tenantgateway.agent.k8s.KubernetesPermissions.Use;
import io.tenantgateway.agent.node.NodeIdentity;
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
