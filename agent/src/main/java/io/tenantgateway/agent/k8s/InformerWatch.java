package io.tenantgateway.agent.k8s;

import static java.util.Objects.requireNonNull;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.informers.cache.Store;
import io.tenantgateway.agent.controller.WorkQueue;
import io.tenantgateway.common.retry.Backoff;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One informer whose every change asks for one look at its whole cache: the callbacks only enqueue a single key on a
 * {@link WorkQueue}, whose worker hands the synced store to {@code reconcile} (changes that come in while it runs
 * coalesce into one more run). For watches that decide on everything they see at once (HAMi's device ConfigMap, the
 * HAMi webhook check); controllers that work per object key their queue by object instead.
 *
 * <p>{@link #start()} lists and blocks until the first list is in, then asks for one run (also when the list is
 * empty); a failure leaves nothing running, so the owner may call it again (the agent retries it in the background).
 *
 * <p>Threading: {@code reconcile} runs on the queue's one worker thread; {@link #start()} and {@link #close()} are
 * synchronized. Lifecycle: not a {@link io.tenantgateway.common.lifecycle.Lifecycle}, on purpose: a failed start
 * must stay retryable on the same instance.
 */
public final class InformerWatch<T extends HasMetadata> implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(InformerWatch.class);
    private static final String KEY = "all";

    private final String name;
    private final String threadName;
    private final Supplier<SharedIndexInformer<T>> informers;
    private final Consumer<Store<T>> reconcile;
    private volatile SharedIndexInformer<T> informer;
    /** Why the informer stopped by itself (not by {@link #close()}); {@code null} while it runs. */
    private volatile String stopped;
    private WorkQueue<String> queue;
    private volatile boolean closed;

    /**
     * @param name what is watched, for messages ({@code device config watch for ConfigMap kube-system/x})
     * @param threadName the worker thread's name
     * @param informers makes a new, not yet started informer (one per start attempt)
     * @param reconcile looks at the synced store; runs on the worker thread
     */
    public InformerWatch(String name, String threadName, Supplier<SharedIndexInformer<T>> informers,
            Consumer<Store<T>> reconcile) {
        this.name = requireNonNull(name, "name");
        this.threadName = requireNonNull(threadName, "threadName");
        this.informers = requireNonNull(informers, "informers");
        this.reconcile = requireNonNull(reconcile, "reconcile");
    }

    /**
     * Lists and starts watching; blocks until the first list (at most 30 s). Throws with the API's reason, having
     * closed what it started.
     */
    public synchronized void start() throws Exception {
        if (informer != null) {
            return;
        }
        if (closed) {
            throw new IllegalStateException(name + " is closed");
        }
        WorkQueue<String> started = new WorkQueue<>(name, threadName, (key, attempt) -> {
            SharedIndexInformer<T> watching = informer;
            if (watching != null && watching.hasSynced()) {
                reconcile.accept(watching.getStore());
            } // else: start() asks again once the first list is in
            return WorkQueue.Result.done();
        }, Backoff.exponential(Duration.ofSeconds(1)).withMaxAttempts(1), Duration.ofSeconds(5));
        started.start();
        SharedIndexInformer<T> watching = informers.get();
        watching.addEventHandler(EventHandlers.of(changed -> started.enqueue(KEY), deleted -> started.enqueue(KEY)));
        informer = watching; // before the first list: the callbacks' runs read its store
        try {
            watching.start().toCompletableFuture().get(30, TimeUnit.SECONDS);
        } catch (Exception e) {
            informer = null;
            watching.close();
            started.close();
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            throw e;
        }
        queue = started;
        started.enqueue(KEY);
        // Not under this object's lock: close() may complete it from the thread that holds the lock.
        watching.stopped().whenComplete((ignored, error) -> {
            if (!closed && informer == watching) {
                stopped = error == null ? "stopped" : String.valueOf(error.getMessage());
                log.warn("{} stopped: {}", name, stopped, error);
            }
        });
    }

    /**
     * Why the informer stopped by itself ({@code null} while it runs, and after {@link #close()}): fabric8 retries a
     * lost watch itself, so this is an error it gave up on; the owner's readiness says so.
     */
    public String stopped() {
        return stopped;
    }

    @Override
    public synchronized void close() {
        closed = true;
        if (queue != null) {
            queue.close();
            queue = null;
        }
        if (informer != null) {
            informer.close();
            informer = null;
        }
    }
}
