package io.tenantgateway.agent;

import io.tenantgateway.agent.deviceplugin.DevicePluginSettings;
import io.tenantgateway.agent.webhook.ManagedWebhookConfiguration;
import io.tenantgateway.agent.webhook.WebhookSettings;
import static java.util.Objects.requireNonNull;

import io.tenantgateway.agent.devices.DeviceRegistrationConfig;
import io.tenantgateway.agent.k8s.KubernetesPermissions;
import io.tenantgateway.agent.locks.AllocationConfig;
import io.tenantgateway.agent.part.PartKind;
import io.tenantgateway.agent.logging.LogSetup;
import io.tenantgateway.common.config.ConfigException;
import io.tenantgateway.common.time.GoDuration;
import io.tenantgateway.hami.HamiRelease;
import io.tenantgateway.tunnel.TunnelConfig;
import io.tenantgateway.webhook.WebhookConfig;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The whole agent's configuration, built once from flags ({@link AgentCommand}) and validated. A part that is off
 * is an empty {@code Optional}, and so is the tunnel with {@code --tunnel=false} (the node role: the parts alone).
 *
 * @param tunnel the konnectivity-agent part, unless {@code --tunnel=false}
 * @param agentId {@code --agent-id}: the tunnel's id at the servers, and this agent's name in Events and on the
 *     status page (with the tunnel off too)
 * @param servers the health and admin servers and the API client's kubeconfig: konnectivity-agent flags that the tunnel
 *     itself does not read
 * @param logFormat text or JSON logs
 * @param verbosity klog {@code -v}
 * @param nodeName this node, when known
 * @param webhook the HAMi webhook, when enabled
 * @param devices GPU device registration, when enabled
 * @param allocation the allocation / node-lock controller, when enabled
 * @param webhookConfiguration the MutatingWebhookConfiguration whose CA bundle the agent keeps current, when managed
 * @param shutdownGrace how long the first SIGTERM may take
 * @param profiling {@code --enable-profiling}: thread dump, heap histogram and JFR on the admin port
 * @param contentionProfiling {@code --enable-contention-profiling}: lock events in those JFR recordings
 * @param devicePlugin kubelet's device plugin API and HAMi's Allocate ({@code --device-plugin=true}), when enabled
 * @param flaggedParts the entries of the parts that bring their own flags ({@link Parts#FLAGS}), in that list's
 *     order, each built from its flags (on or off)
 * @param hamiRelease {@code --hami-compat}: the HAMi release whose decisions the webhook makes, and whose scheduler's
 *     reading of this node {@code /ui}, {@code /debug/devices} and {@code doctor} show
 */
public record AgentConfig(
        Optional<TunnelConfig> tunnel,
        String agentId,
        Servers servers,
        LogSetup.Format logFormat,
        int verbosity,
        Optional<String> nodeName,
        Optional<WebhookSettings> webhook,
        Optional<DeviceRegistrationConfig> devices,
        Optional<AllocationConfig> allocation,
        Optional<ManagedWebhookConfiguration> webhookConfiguration,
        Duration shutdownGrace,
        boolean profiling,
        boolean contentionProfiling,
        Optional<DevicePluginSettings> devicePlugin,
        List<PartKind> flaggedParts,
        HamiRelease hamiRelease) {

    public AgentConfig {
        requireNonNull(tunnel, "tunnel");
        requireNonNull(agentId, "agentId");
        if (agentId.isBlank()) {
            throw new ConfigException("--agent-id", "\"\"", "a non-empty id");
        }
        if (tunnel.isPresent() && !tunnel.get().agentId().equals(agentId)) {
            throw new IllegalArgumentException("agentId: " + agentId + " (expected: the tunnel's, "
                    + tunnel.get().agentId() + ")");
        }
        requireNonNull(servers, "servers");
        requireNonNull(logFormat, "logFormat");
        requireNonNull(nodeName, "nodeName");
        requireNonNull(webhook, "webhook");
        requireNonNull(devices, "devices");
        requireNonNull(allocation, "allocation");
        requireNonNull(webhookConfiguration, "webhookConfiguration");
        requireNonNull(shutdownGrace, "shutdownGrace");
        requireNonNull(devicePlugin, "devicePlugin");
        flaggedParts = List.copyOf(flaggedParts);
        requireNonNull(hamiRelease, "hamiRelease");
        // That the device plugin needs devices is AgentCommand's rule: it builds the plugin from the devices' node.
        if (shutdownGrace.isNegative() || shutdownGrace.isZero()) {
            throw new ConfigException("--shutdown-grace", shutdownGrace, "> 0");
        }
        if (webhookConfiguration.isPresent() && webhook.isEmpty()) {
            throw new ConfigException("--manage-webhook-config", "true without the webhook",
                    "--webhook-tls-cert/--webhook-tls-key or --enable-webhook");
        }
    }

    /**
     * The upstream agent's flags for its local servers and its API client, which the tunnel does not read.
     *
     * @param healthServerHost {@code --health-server-host}
     * @param healthServerPort {@code --health-server-port} (0: any free port)
     * @param adminBindAddress {@code --admin-bind-address}
     * @param adminServerPort {@code --admin-server-port} (0: any free port)
     * @param kubeconfig {@code --kubeconfig} ({@code null}: in-cluster)
     */
    public record Servers(String healthServerHost, int healthServerPort, String adminBindAddress, int adminServerPort,
            Path kubeconfig) {
        /** Upstream's defaults: health on all addresses port 8093, admin on 127.0.0.1:8094, in-cluster API. */
        public static final Servers DEFAULTS = new Servers("", 8093, "127.0.0.1", 8094, null);

        public Servers {
            requireNonNull(healthServerHost, "healthServerHost");
            checkPort("--health-server-port", healthServerPort);
            requireNonNull(adminBindAddress, "adminBindAddress");
            checkPort("--admin-server-port", adminServerPort);
        }

        private static void checkPort(String flag, int port) {
            if (port < 0 || port > 65535) {
                throw new ConfigException(flag, port, "0..65535");
            }
        }
    }

    /**
     * What the parts enabled here do with the API (the uses {@link KubernetesPermissions} grants permissions for):
     * {@link Parts#apiUses}.
     *
     * @param nodeNameFromApi whether the node name was (or will be) read from the agent's own pod, because neither
     *     {@code --node-name} nor {@code NODE_NAME} gave it
     */
    public Set<KubernetesPermissions.Use> apiUses(boolean nodeNameFromApi) {
        return Parts.apiUses(Parts.enabled(this), nodeNameFromApi);
    }

    /** Whether the agent talks to the Kubernetes API at all (a pure tunnel does not): {@link Parts#needApi}. */
    public boolean needsKubernetes() {
        return Parts.needApi(Parts.enabled(this));
    }

    /**
     * The effective configuration for the startup log: no secrets, only paths. {@code tunnel} first ({@code on}, or
     * {@code off} with {@code --tunnel=false}), then the tunnel's settings while it is on.
     */
    public Map<String, String> describe() {
        Map<String, String> out = new LinkedHashMap<>();
        out.put("tunnel", tunnel.isPresent() ? "on" : "off");
        tunnel.ifPresentOrElse(t -> out.putAll(t.describe()), () -> out.put("agent-id", agentId));
        out.put("health-server", servers.healthServerHost() + ":" + servers.healthServerPort());
        out.put("admin-server", servers.adminBindAddress() + ":" + servers.adminServerPort());
        out.put("kubeconfig", servers.kubeconfig() == null ? "<in-cluster>" : servers.kubeconfig().toString());
        out.put("node-name", nodeName.orElse("<unset>"));
        out.put("log-format", logFormat.name().toLowerCase(java.util.Locale.ROOT));
        out.put("v", Integer.toString(verbosity));
        // Each part's lines, off ones too, in the order of the list of parts.
        Parts.all(this).forEach(part -> part.describe(out));
        out.put("shutdown-grace", GoDuration.format(shutdownGrace));
        out.put("enable-profiling", Boolean.toString(profiling));
        out.put("enable-contention-profiling", Boolean.toString(contentionProfiling));
        return out;
    }
}
