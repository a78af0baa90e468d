package io.tenantgateway.agent.locks;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.agent.channels.NodeInformer;
import io.tenantgateway.agent.health.HealthCheck;
import io.tenantgateway.agent.health.LockMetrics;
import io.tenantgateway.agent.k8s.KubernetesPermissions;
import io.tenantgateway.agent.part.Part;
import io.tenantgateway.agent.part.PartContext;
import io.tenantgateway.agent.part.Plan;
import java.util.Optional;

/**
 * The lock controller ({@code --enable-lock-controller}): watches this node and its pods, and releases HAMi's node
 * lock once the pod that holds it is allocated or gone (and expired locks). Starts in the background: it needs the
 * API.
 */
public final class LockControllerPart implements Part {
    /** The part's name: its package, readiness-check prefix and docs. */
    public static final String NAME = "lock-controller";
    /** The readiness check: pod and node informers synced. */
    public static final String CHECK = "lock-controller-synced";

    private final AllocationConfig config;
    private volatile AllocationController controller;

    public LockControllerPart(AllocationConfig config) {
        this.config = requireNonNull(config, "config");
    }

    @Override
    public Plan plan() {
        return Plan.of(NAME).withNodeName().check(CHECK).uses(KubernetesPermissions.Use.LOCK_CONTROLLER);
    }

    @Override
    public void start(PartContext context) {
        AllocationConfig resolved = config.withNodeName(context.nodeName());
        LockMetrics metrics = context.shared(LockMetrics.class, () -> new LockMetrics(context.registry()));
        controller = new AllocationController(context.kubernetes(), resolved, metrics, context.clock(),
                context.eventCorrelator());
        // The agent's views read this node from the controller's informer (whichever attempt's controller is current).
        context.channel(NodeInformer.CHANNEL).publish(new NodeInformer(() -> controller.nodeFromCache(),
                () -> controller.synced()));
        context.inBackground(CHECK, "lock controller", () -> {
            // A failed start leaves a controller closed (Lifecycle): the next attempt builds a new one.
            AllocationController current = controller;
            if (current.isClosed()) {
                current = new AllocationController(context.kubernetes(), resolved, metrics, context.clock(),
                        context.eventCorrelator());
                controller = current;
            }
            current.start();
            return current;
        }, started -> started.synced() ? HealthCheck.Result.OK
                : HealthCheck.Result.failed("pod and node informers not synced"));
    }

    /** The controller (the status page and {@code /debug/locks} read its snapshot). */
    public Optional<AllocationController> controller() {
        return Optional.ofNullable(controller);
    }

    @Override
    public void close() {
        AllocationController current = controller;
        if (current != null) {
            current.close();
        }
    }
}
