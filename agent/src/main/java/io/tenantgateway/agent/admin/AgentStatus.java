package io.tenantgateway.agent.admin;

import io.tenantgateway.agent.devices.DeviceRegistrationSnapshot;
import io.tenantgateway.agent.health.HealthCheck;
import io.tenantgateway.agent.locks.LockSnapshot;
import io.tenantgateway.agent.node.NodeRegistrations;
import io.tenantgateway.tunnel.TunnelConfig;
import io.tenantgateway.tunnel.client.AgentSnapshot;
import io.tenantgateway.webhook.RecentAdmissions;
import io.tenantgateway.agent.part.PartView;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What the admin server reads from the running agent, and nothing more: the admin server depends on this
 * narrow view, not on {@code Agent}, so that {@code agent} and {@code agent.admin} do not depend on each
 * other. Every method may be called on the Vert.x event loop: implementations return snapshots (immutable)
 * or thread-safe views and never block. An empty {@code Optional} means that part is not enabled.
 */
public interface AgentStatus {
    /** The effective configuration as flag name → value, secrets redacted. */
    Map<String, String> config();

    /** {@code --agent-id}. */
    String agentId();

    /** The tunnel configuration (proxy server address); empty with {@code --tunnel=false}. */
    Optional<TunnelConfig> tunnelConfig();

    /** The node this agent runs on, when known. */
    Optional<String> nodeName();

    /** Readiness of every check, by name. */
    Map<String, HealthCheck.Result> readiness();

    /** The tunnel connections now. */
    Optional<AgentSnapshot> tunnel();

    /** Device registration now. */
    Optional<DeviceRegistrationSnapshot> devices();

    /** The node-lock controller now. */
    Optional<LockSnapshot> locks();

    /**
     * The sections of the parts that show one ({@link io.tenantgateway.agent.part.PartKind#section()}), in the order
     * of the list of parts, each with its view now: the status page renders them and {@code /debug/<name>} serves
     * their JSON, naming no part.
     */
    default List<PartView.Section> partSections() {
        return List.of();
    }

    /** The device plugin now ({@code --device-plugin=true}); shown with {@code /debug/devices}. */
    default Optional<io.tenantgateway.deviceplugin.DevicePluginSnapshot> devicePlugin() {
        return Optional.empty();
    }

    /** This node's HAMi registrations, every vendor, decoded (never blocks). */
    NodeRegistrations registrations();

    /** The webhook's recent admissions (thread-safe, bounded). */
    Optional<RecentAdmissions> admissions();
}
