package io.tenantgateway.agent.leases;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.agent.health.HealthCheck;
import io.tenantgateway.agent.k8s.KubernetesPermissions;
import io.tenantgateway.agent.part.Part;
import io.tenantgateway.agent.part.PartContext;
import io.tenantgateway.agent.part.PartManager;
import io.tenantgateway.agent.part.Plan;
import io.tenantgateway.tunnel.TunnelConfig;

/**
 * {@code --count-server-leases}: the tunnel's server count from the konnectivity-server Leases, as upstream's
 * agent counts them. The tunnel uses the servers' own count until the Leases are listed; no readiness check (the
 * tunnel works either way).
 */
public final class LeasesPart implements Part {
    /** The part's name: its package, readiness-check prefix and docs. */
    public static final String NAME = "leases";

    private final TunnelConfig tunnel;

    public LeasesPart(TunnelConfig tunnel) {
        this.tunnel = requireNonNull(tunnel, "tunnel");
    }

    @Override
    public Plan plan() {
        return Plan.of(NAME).uses(KubernetesPermissions.Use.SERVER_LEASES);
    }

    @Override
    public void start(PartContext context) {
        LeaseServerCounter leases = new LeaseServerCounter(context.kubernetes(), tunnel.leaseNamespace(),
                tunnel.leaseLabelSelector(), context.clock(), context.registry());
        context.channel(PartManager.SERVER_COUNTER).publish(leases); // the servers' count until it listed the leases
        context.inBackground("server-leases", "server lease counter (--count-server-leases; the servers' servercount is used"
                + " meanwhile)", () -> {
                    leases.start();
                    return leases;
                }, counter -> HealthCheck.Result.OK);
    }
}
