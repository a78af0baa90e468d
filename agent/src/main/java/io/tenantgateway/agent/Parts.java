package io.tenantgateway.agent;

import io.tenantgateway.agent.deviceplugin.DevicePluginKind;
import io.tenantgateway.agent.devices.DevicesKind;
import io.tenantgateway.agent.k8s.KubernetesPermissions;
import io.tenantgateway.agent.leases.LeasesPart;
import io.tenantgateway.agent.locks.LockControllerKind;
import io.tenantgateway.agent.part.Part;
import io.tenantgateway.agent.part.PartFlags;
import io.tenantgateway.agent.part.PartKind;
import io.tenantgateway.agent.webhook.WebhookKind;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;

/**
 * The one list of the agent's parts beside the tunnel: the only place that knows which parts exist. {@link Agent}
 * starts them, and the readiness checks, the effective configuration's lines ({@link AgentConfig#describe}),
 * {@code doctor}'s lines, the RBAC table ({@link KubernetesPermissions}, the ClusterRoles, the chart) and the parts
 * line of the logs derive from it. Adding a part is a package with its {@link Part}, its {@link PartFlags} and one
 * line in {@link #FLAGS}; the parts above that list came before it and are built here from their settings in
 * {@link AgentConfig}.
 *
 * <p>Each entry is built from the part's own settings and builds the part only when enabled: the part's classes
 * are linked only then (a tunnel-only agent must not load the webhook's, and with it Vert.x), so a part is built in
 * a lambda or an entry's method, never through a method reference here.
 */
public final class Parts {
    private Parts() {
    }

    /**
     * The parts that bring their own flags ({@link PartFlags}: a picocli mixin {@code run} adds, and the entry those
     * flags build): a new part is its package and one line here
     * (its flags' class by its full name: no import line). They are listed after the parts above, in this
     * order. The flags are made for every parse, the part's classes only when its entry builds it.
     */
    public static final List<Supplier<PartFlags>> FLAGS = List.of(
            io.tenantgateway.agent.monitor.MonitorFlags::new);

    /**
     * Every part, enabled or not, in the order the health port, logs and {@code doctor} list them; they start in
     * this order too, except that a part starts after the parts its {@link io.tenantgateway.agent.part.Plan#after}
     * names.
     */
    public static List<PartKind> all(AgentConfig config) {
        List<PartKind> kinds = new ArrayList<>(List.of(
                new DevicesKind(config.devices()),
                new DevicePluginKind(config.devicePlugin()),
                new LockControllerKind(config.allocation()),
                new WebhookKind(config.webhook(), config.webhookConfiguration())));
        kinds.addAll(config.flaggedParts());
        kinds.add(PartKind.of(LeasesPart.NAME, () -> config.tunnel().filter(tunnel -> tunnel.countServerLeases())
                .map(tunnel -> new LeasesPart(tunnel))));
        return List.copyOf(kinds);
    }

    /**
     * The enabled parts, in {@link #all} order, once the list is sound ({@link PartKind#enabled}: an unknown name to
     * start after, a cycle or a name twice is refused here).
     */
    public static List<Part> enabled(AgentConfig config) {
        return PartKind.enabled(all(config));
    }

    /** Whether any enabled part talks to the API (a pure tunnel does not). */
    public static boolean needApi(List<Part> parts) {
        return parts.stream().anyMatch(part -> part.plan().needsApi());
    }

    /**
     * What the enabled parts do with the API: the rows {@link KubernetesPermissions} grants. {@link
     * KubernetesPermissions.Use#DOCTOR} whenever the agent talks to the API at all ({@code doctor} runs with the same
     * flags).
     *
     * @param nodeNameFromApi whether the node name is read from the agent's own pod (no {@code --node-name})
     */
    public static Set<KubernetesPermissions.Use> apiUses(List<Part> parts, boolean nodeNameFromApi) {
        boolean apiClient = needApi(parts) || nodeNameFromApi;
        Set<KubernetesPermissions.Use> uses = EnumSet.noneOf(KubernetesPermissions.Use.class);
        for (Part part : parts) {
            uses.addAll(part.plan().uses(apiClient));
        }
        if (nodeNameFromApi) {
            uses.add(KubernetesPermissions.Use.NODE_NAME_DISCOVERY);
        }
        if (!uses.isEmpty()) {
            uses.add(KubernetesPermissions.Use.DOCTOR);
        }
        return uses;
    }
}
