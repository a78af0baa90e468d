package io.tenantgateway.agent;

import io.tenantgateway.agent.deviceplugin.DevicePluginPart;
import io.tenantgateway.agent.devices.DevicesPart;
import io.tenantgateway.agent.k8s.KubernetesPermissions;
import io.tenantgateway.agent.leases.LeasesPart;
import io.tenantgateway.agent.locks.LockControllerPart;
import io.tenantgateway.agent.part.Part;
import io.tenantgateway.agent.webhook.WebhookPart;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * The one list of the agent's parts beside the tunnel: the only place that knows which parts exist. {@link Agent}
 * starts them, and the readiness checks, {@code doctor}, the RBAC table ({@link KubernetesPermissions}, the
 * ClusterRoles, the chart) and the parts line of the logs derive from it. Adding a part is a package with its
 * {@link Part} and one line here.
 *
 * <p>Plain {@code if}s, not method references: a reference links the part's class even when the part is off, and a
 * tunnel-only agent must not load the webhook's (and with it Vert.x).
 */
public final class Parts {
    private Parts() {
    }

    /**
     * The enabled parts, in the order the health port, logs and {@code doctor} list them; they start in this order
     * too, except that a part starts after the parts its {@link io.tenantgateway.agent.part.Plan#after} names.
     */
    public static List<Part> enabled(AgentConfig config) {
        List<Part> parts = new ArrayList<>();
        if (config.devices().isPresent()) {
            parts.add(new DevicesPart(config.devices().get()));
        }
        if (config.devicePlugin().isPresent()) {
            parts.add(new DevicePluginPart(config.devicePlugin().get()));
        }
        if (config.allocation().isPresent()) {
            parts.add(new LockControllerPart(config.allocation().get()));
        }
        if (config.webhook().isPresent()) {
            parts.add(new WebhookPart(config.webhook().get(), config.webhookConfiguration()));
        }
        if (config.tunnel().countServerLeases()) {
            parts.add(new LeasesPart(config.tunnel()));
        }
        return parts;
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
