package io.tenantgateway.agent.locks;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.agent.health.HealthCheck;
import io.tenantgateway.agent.health.LockMetrics;
import io.tenantgateway.agent.k8s.KubernetesPermissions;
import io.tenantgateway.agent.part.Part;
import io.tenantgateway.agent.part.PartContext;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The lock controller ({@code --enable-lock-controller}): watches this node and its pods, and releases HAMi's node
 * lock once the pod that holds it is allocated or gone (and expired locks). Starts in the background: it needs the
 * API.
 */
public final class LockControllerPart implements Part {
    /** The readiness check: pod and node informers synced. */
    public static final String CHECK = "lock-controller-synced";

    private final AllocationConfig config;
    private volatile AllocationController controller;

    public LockControllerPart(AllocationConfig config) {
        this.config = requireNonNull(config, "config");
    }

    @Override
    public String name() {
        return "lock-controller";
    }

    @Override
    public List<String> checks(boolean apiClient) {
        return List.of(CHECK);
    }

    @Override
    public boolean needsApi() {
        return true;
    }

    @Override
    public boolean needsNodeName() {
        return true;
    }

    @Override
    public Set<KubernetesPermissions.Use> apiUses(boolean apiClient) {
        return EnumSet.of(KubernetesPermissions.Use.LOCK_CONTROLLER);
    }

    @Override
    public void start(PartContext context) {
        AllocationConfig resolved = config.withNodeName(context.nodeName());
        LockMetrics metrics = context.shared(LockMetrics.class, () -> new LockMetrics(context.registry()));
        controller = new AllocationController(context.kubernetes(), resolved, metrics, context.clock());
        context.inBackground(CHECK, "lock controller", () -> {
            // A failed start leaves a controller closed (Lifecycle): the next attempt builds a new one.
            AllocationController current = controller;
            if (current.isClosed()) {
                current = new AllocationController(context.kubernetes(), resolved, metrics, context.clock());
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
