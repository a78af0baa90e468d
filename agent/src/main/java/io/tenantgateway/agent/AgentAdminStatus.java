package io.tenantgateway.agent;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.agent.admin.AgentStatus;
import io.tenantgateway.agent.devices.DeviceRegistrar;
import io.tenantgateway.agent.devices.DeviceRegistrationSnapshot;
import io.tenantgateway.agent.health.HealthCheck;
import io.tenantgateway.agent.locks.AllocationController;
import io.tenantgateway.agent.locks.LockSnapshot;
import io.tenantgateway.agent.node.NodeRegistrations;
import io.tenantgateway.tunnel.TunnelConfig;
import io.tenantgateway.tunnel.client.AgentSnapshot;
import io.tenantgateway.tunnel.client.TunnelClientSet;
import io.tenantgateway.webhook.RecentAdmissions;
import io.tenantgateway.webhook.WebhookServer;
import io.tenantgateway.agent.part.Part;
import io.tenantgateway.agent.part.PartKind;
import io.tenantgateway.agent.part.PartView;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The {@link Agent} as the admin server sees it: a read-only view that takes a fresh snapshot on each call. The
 * optional parts are read with plain code, not method references: a reference to {@code WebhookServer::…} loads
 * the class (and what its verification needs: Vert.x) even when the part is off, which a tunnel-only agent must not.
 */
final class AgentAdminStatus implements AgentStatus {
    private final Agent agent;
    /** The list of parts, for their sections (built once: entries hold settings only). */
    private final List<PartKind> kinds;

    AgentAdminStatus(Agent agent) {
        this.agent = requireNonNull(agent, "agent");
        this.kinds = Parts.all(agent.config());
    }

    @Override
    public Map<String, String> config() {
        // The node name as NodeIdentity knows it now: discovered from the pod, never a placeholder.
        Map<String, String> config = agent.describeConfig();
        // The policy in force: the admin port once bound, this host's addresses.
        agent.tunnel().ifPresent(tunnel -> config.put("dial-policy", tunnel.dialPolicy().describe()));
        return config;
    }

    @Override
    public String agentId() {
        return agent.config().agentId();
    }

    @Override
    public Optional<TunnelConfig> tunnelConfig() {
        return agent.config().tunnel();
    }

    @Override
    public Optional<String> nodeName() {
        return agent.node().name();
    }

    @Override
    public Map<String, HealthCheck.Result> readiness() {
        return agent.readiness();
    }

    @Override
    public Optional<AgentSnapshot> tunnel() {
        return agent.tunnel().map(TunnelClientSet::snapshot);
    }

    @Override
    public Optional<DeviceRegistrationSnapshot> devices() {
        Optional<DeviceRegistrar> devices = PartViews.devices(agent);
        return devices.isPresent() ? Optional.of(devices.get().snapshot()) : Optional.empty();
    }

    @Override
    public Optional<io.tenantgateway.deviceplugin.DevicePluginSnapshot> devicePlugin() {
        return PartViews.devicePlugin(agent).map(io.tenantgateway.deviceplugin.DevicePlugin::snapshot);
    }

    @Override
    public Optional<LockSnapshot> locks() {
        Optional<AllocationController> allocation = PartViews.allocation(agent);
        return allocation.isPresent() ? Optional.of(allocation.get().snapshot()) : Optional.empty();
    }

    @Override
    public List<PartView.Section> partSections() {
        List<PartView.Section> sections = new ArrayList<>();
        for (PartKind kind : kinds) {
            Optional<String> title = kind.section();
            if (title.isPresent()) {
                sections.add(new PartView.Section(kind.name(), title.get(),
                        agent.part(kind.name()).flatMap(Part::view)));
            }
        }
        return sections;
    }

    @Override
    public NodeRegistrations registrations() {
        return agent.registrations();
    }

    @Override
    public Optional<RecentAdmissions> admissions() {
        Optional<WebhookServer> webhook = PartViews.webhook(agent);
        return webhook.isPresent() ? Optional.of(webhook.get().recentAdmissions()) : Optional.empty();
    }
}
