package io.tenantgateway.agent.part;

import static java.util.Objects.requireNonNull;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.tenantgateway.agent.k8s.KubernetesClients;
import io.tenantgateway.agent.node.NodeIdentity;
import io.tenantgateway.common.concurrent.DaemonThreads;
import io.tenantgateway.tunnel.client.ServerCounter;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import java.nio.file.Path;
import java.time.Clock;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What every {@link PartContext} shares: made once by {@link PartManager}. The API client, Vert.x and the
 * background scheduler are made on first use (a tunnel-only agent loads none of their classes, DESIGN.md
 * "Footprint") and closed after every part.
 */
final class PartServices {
    private static final Logger log = LoggerFactory.getLogger(PartServices.class);

    private final PrometheusRegistry registry;
    private final Clock clock;
    private final NodeIdentity node;
    private final String agentId;
    private final String version;
    private final Path kubeconfig;
    private final boolean hasApi;
    private final BooleanSupplier draining;
    final CompletableFuture<RuntimeException> fatal = new CompletableFuture<>();
    private final Channels channels = new Channels();
    private final Map<Class<?>, Object> shared = new HashMap<>();

    private final Object lock = new Object();
    private boolean closed;
    private KubernetesClient kubernetes;
    private Vertx vertx;
    private ScheduledExecutorService scheduler;

    PartServices(PrometheusRegistry registry, Clock clock, NodeIdentity node, String version, String agentId,
            Path kubeconfig,
            boolean hasApi, BooleanSupplier draining) {
        this.registry = requireNonNull(registry, "registry");
        this.clock = requireNonNull(clock, "clock");
        this.node = requireNonNull(node, "node");
        this.version = requireNonNull(version, "version");
        this.agentId = requireNonNull(agentId, "agentId");
        this.kubeconfig = kubeconfig;
        this.hasApi = hasApi;
        this.draining = requireNonNull(draining, "draining");
    }

    PrometheusRegistry registry() {
        return registry;
    }

    Clock clock() {
        return clock;
    }

    NodeIdentity node() {
        return node;
    }

    String version() {
        return version;
    }

    String agentId() {
        return agentId;
    }

    boolean hasApi() {
        return hasApi;
    }

    boolean draining() {
        return draining.getAsBoolean();
    }

    KubernetesClient kubernetes() {
        synchronized (lock) {
            checkOpen();
            if (kubernetes == null) {
                kubernetes = KubernetesClients.create(kubeconfig); // builds only: no API call yet
            }
            return kubernetes;
        }
    }

    Vertx vertx() {
        synchronized (lock) {
            checkOpen();
            if (vertx == null) {
                vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(2).setWorkerPoolSize(4));
            }
            return vertx;
        }
    }

    ScheduledExecutorService scheduler() {
        synchronized (lock) {
            checkOpen();
            if (scheduler == null) {
                scheduler = Executors.newScheduledThreadPool(2, DaemonThreads.numbered("agent-parts"));
            }
            return scheduler;
        }
    }

    @SuppressWarnings("unchecked")
    <T> T shared(Class<T> type, Supplier<T> create) {
        synchronized (shared) {
            return (T) shared.computeIfAbsent(type, ignored -> create.get());
        }
    }

    /** The channel {@code key} names, made on first use (by a publisher or a subscriber, whichever comes first). */
    <T> Channel<T> channel(Channel.Key<T> key) {
        return channels.get(key);
    }

    /** The count the tunnel uses: a part's counter once one is published, the servers' own count until then. */
    int serverCount(int fromHeaders) {
        ServerCounter counter = channel(PartManager.SERVER_COUNTER).last().orElse(null);
        return counter == null ? fromHeaders : counter.serverCount(fromHeaders);
    }

    void fatal(RuntimeException error) {
        fatal.complete(error);
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("agent closed");
        }
    }

    /** Interrupts background attempts (a start waiting on the API) before the parts close. */
    void stopScheduler() {
        synchronized (lock) {
            if (scheduler != null) {
                scheduler.shutdownNow();
            }
        }
    }

    /** After every part: the API client, then Vert.x. */
    void close() {
        KubernetesClient client;
        Vertx created;
        synchronized (lock) {
            closed = true;
            client = kubernetes;
            created = vertx;
            if (scheduler != null) {
                scheduler.shutdownNow();
            }
        }
        if (client != null) {
            closeQuietly(client);
        }
        if (created != null) {
            closeQuietly(() -> created.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS));
        }
    }

    /** Closes {@code resource}; a failure is logged, never thrown: shutdown goes on. */
    static void closeQuietly(AutoCloseable resource) {
        try {
            resource.close();
        } catch (Exception e) {
            log.warn("closing {} failed: {}", resource.getClass().getSimpleName(), e.toString());
        }
    }
}
