package io.tenantgateway.agent.part;

import static java.util.Objects.requireNonNull;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.tenantgateway.agent.health.DeferredCheck;
import io.tenantgateway.agent.health.HealthCheck;
import io.tenantgateway.agent.k8s.EventCorrelator;
import io.tenantgateway.agent.k8s.EventRecorder;
import io.tenantgateway.agent.k8s.KubernetesClients;
import io.tenantgateway.agent.node.NodeIdentity;
import io.tenantgateway.common.retry.Backoff;
import io.vertx.core.Vertx;
import java.time.Clock;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Map;
import java.util.Random;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * What a {@link Part} gets from the agent, and the only way parts meet: the metrics registry, the clock, the API
 * client and Vert.x (both made on first use, so a part that does not ask never loads them), Events, this node,
 * the readiness checks it declared, the background runner, a way to end the agent with a configuration error, and
 * the channels between parts ({@link #channel}, named by typed keys that live with what they carry) and what they
 * share ({@link #shared}). One context per part; {@link PartManager} closes what the part handed it when the part closes.
 */
public final class PartContext {
    private final PartServices services;
    private final Part part;
    private final Map<String, DeferredCheck> checks;
    private final Deque<AutoCloseable> owned = new ArrayDeque<>();

    PartContext(PartServices services, Part part, Map<String, DeferredCheck> checks) {
        this.services = requireNonNull(services, "services");
        this.part = requireNonNull(part, "part");
        this.checks = requireNonNull(checks, "checks");
    }

    public PrometheusRegistry registry() {
        return services.registry();
    }

    public Clock clock() {
        return services.clock();
    }

    /** The agent's API client (built on first call, no API call yet); only for parts that {@linkplain Part#needsApi need it}, or when {@link #hasApi()}. */
    public KubernetesClient kubernetes() {
        return services.kubernetes();
    }

    /** Whether the agent talks to the API at all (some part needs it): optional uses such as the quota check follow. */
    public boolean hasApi() {
        return services.hasApi();
    }

    /** The shared Vert.x (2 event loops, 4 workers), made on first call; closed after every part. */
    public Vertx vertx() {
        return services.vertx();
    }

    /**
     * An Event recorder; {@code source.host} is this node's name, else the agent id. Every recorder of the agent
     * shares its one {@link #eventCorrelator()}.
     */
    public EventRecorder events() {
        return new EventRecorder(kubernetes(), node().name().orElse(services.agentId()), clock(), eventCorrelator());
    }

    /** The agent's one Event correlator (aggregation, count bumps, spam filter), for components that name the host. */
    public EventCorrelator eventCorrelator() {
        return services.shared(EventCorrelator.class, () -> new EventCorrelator(clock(), registry()));
    }

    /** This node: known, or discovered from the agent's pod (a part that needs the name starts once it is known). */
    public NodeIdentity node() {
        return services.node();
    }

    /** This node's name; only for parts that {@linkplain Part#needsNodeName need it} (they start once it is known). */
    public String nodeName() {
        return node().name().orElseThrow(() -> new IllegalStateException(part.plan().name() + " started before the node"
                + " name was known"));
    }

    /** This build's version (the device plugin tells kubelet). */
    public String version() {
        return services.version();
    }

    /** The tunnel's agent id ({@code --agent-id}). */
    public String agentId() {
        return services.agentId();
    }

    /** Whether the agent is draining (readiness off, shutting down). */
    public boolean draining() {
        return services.draining();
    }

    /** Binds one of the readiness checks this part {@linkplain Part#checks() declared} to {@code check}. */
    public void bind(HealthCheck check) {
        declared(check.name()).bind(check);
    }

    /**
     * Starts {@code attempt} in the background, retried with backoff (1 s, ×1.5, 10 % jitter, at most 30 s) until it
     * works or the agent closes. When {@code checkName} is one of the part's declared checks, that check says why it
     * has not started yet, then what {@code readiness} says; otherwise the name only labels the start. A
     * {@link io.tenantgateway.common.config.ConfigException} ends the agent (exit 2), a bug too (exit 70); anything
     * else is the API not answering yet and is retried. What the attempt returns is closed with the part.
     *
     * @param checkName lower-case words joined by '-' ({@code webhook-quota-synced}, {@code hami-webhook-check})
     * @param what the part's piece, for log lines ("webhook quota lookup")
     * @return the start's own check (named {@code checkName}), for checks that combine it with more
     */
    public <T extends AutoCloseable> HealthCheck inBackground(String checkName, String what, Attempt<T> attempt,
            Function<T, HealthCheck.Result> readiness) {
        KubernetesClient api = services.hasApi() ? services.kubernetes() : null;
        RetryingStart<T> start = new RetryingStart<>(checkName, what, attempt, readiness,
                failure -> KubernetesClients.describeFailure(api, failure), services.scheduler(),
                Backoff.agentSync(RetryingStart.FIRST_RETRY, RetryingStart.RETRY_CAP).start(new Random()),
                services::fatal);
        DeferredCheck declared = checks.get(checkName);
        if (declared != null) {
            declared.bind(start.check());
        }
        own(start);
        start.start();
        return start.check();
    }

    /** One background start attempt: starts the piece and returns it; throws while the API is not there yet. */
    @FunctionalInterface
    public interface Attempt<T> {
        T start() throws Exception;
    }

    /** Closed when the part closes, before the part itself, in reverse order of handing over. */
    public void own(AutoCloseable resource) {
        synchronized (owned) {
            owned.push(requireNonNull(resource, "resource"));
        }
    }

    /**
     * Ends the agent with {@code error}, found after start: a {@link io.tenantgateway.common.config.ConfigException}
     * exits 2 with its one line, anything else 70 with its stack trace.
     */
    public void fatal(RuntimeException error) {
        services.fatal(error);
    }

    /**
     * The channel {@code key} names, one per agent, shared by every part that asks for it: what one part publishes
     * there, the others follow ({@code DeviceDiscovery.CHANNEL}: device registration → the device plugin;
     * {@link PartManager#SERVER_COUNTER}: a part → the tunnel).
     */
    public <T> Channel<T> channel(Channel.Key<T> key) {
        return services.channel(key);
    }

    /** The one instance of {@code type} the parts share (metrics both the lock controller and Allocate record). */
    public <T> T shared(Class<T> type, Supplier<T> create) {
        return services.shared(type, create);
    }

    private DeferredCheck declared(String name) {
        DeferredCheck check = checks.get(name);
        if (check == null) {
            throw new IllegalArgumentException("check: " + name + " (expected: one " + part.plan().name() + " declared: "
                    + checks.keySet() + ")");
        }
        return check;
    }

    /** Closes what the part handed over, newest first. */
    void closeOwned() {
        while (true) {
            AutoCloseable next;
            synchronized (owned) {
                next = owned.poll();
            }
            if (next == null) {
                return;
            }
            PartServices.closeQuietly(next);
        }
    }
}
