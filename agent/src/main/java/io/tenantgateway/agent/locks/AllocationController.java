package io.tenantgateway.agent.locks;

import static java.util.Objects.requireNonNull;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import io.tenantgateway.agent.k8s.EventHandlers;
import io.tenantgateway.agent.k8s.Pages;
import io.tenantgateway.agent.k8s.EventCorrelator;
import io.tenantgateway.agent.k8s.EventRecorder;
import io.tenantgateway.agent.k8s.MergePatch;
import io.tenantgateway.agent.locks.policy.LockDecision;
import io.tenantgateway.agent.locks.policy.LockHolder;
import io.tenantgateway.agent.locks.policy.LockPolicy;
import io.tenantgateway.agent.locks.policy.ReleaseReason;
import io.tenantgateway.hami.Annotations;
import io.tenantgateway.hami.MalformedNodeLockException;
import io.tenantgateway.hami.NodeLock;
import io.tenantgateway.agent.controller.WorkQueue;
import io.tenantgateway.common.text.PeerText;
import io.tenantgateway.common.lifecycle.Lifecycle;
import io.tenantgateway.common.retry.Backoff;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import io.tenantgateway.agent.health.LockMetrics;

/**
 * Watches HAMi allocations on this node and releases HAMi's node lock safely when nobody else will
 * (shared/spec/hami.md, "Node lock"). Allocations themselves are completed by the device plugin's Allocate (this
 * agent's, {@link AllocationMode#DEVICE_PLUGIN}, or HAMi's, {@link AllocationMode#OBSERVE}); this controller never
 * writes a pod.
 *
 * <p>For a pod bound to this node with {@code hami.io/bind-phase=allocating} and {@code hami.io/vgpu-node=<this
 * node>} it reports, once per pod version, that kubelet's Allocate is awaited. A reaper judges the lock on every
 * node event and every {@code reapInterval}: expired, dangling (holder gone, finished, or bound elsewhere) and
 * long-malformed locks are released; in {@code device-plugin} mode also the lock of a holder bound here whose
 * allocation already succeeded or failed (the agent stopped between the pod write and the release).
 *
 * <p>Threading: informer callbacks only enqueue keys; one worker thread owned by this controller
 * runs every reconcile and every (blocking) API call, so decisions about the node lock never race
 * each other inside the agent. The queue is a {@link WorkQueue}: each key is queued at most once
 * (coalescing), which bounds it by the pods on this node. Writes are compare-and-swap merge patches;
 * a conflict or server error is retried with the configured {@link Backoff} (HAMi's) after
 * re-reading the objects from the API server.
 *
 * <p>Lifecycle: {@link Lifecycle}; a failed start leaves the controller closed (build a new one to
 * retry).
 */
public final class AllocationController extends Lifecycle {
    static final String REASON_LOCK_RELEASED = LockPolicy.REASON_LOCK_RELEASED;
    static final String REASON_LOCK_MALFORMED = "NodeLockMalformed";
    private static final String NODE_KEY = "node";
    private static final Logger log = LoggerFactory.getLogger(AllocationController.class);

    private final KubernetesClient client;
    private final AllocationConfig config;
    private final String node;
    private final Clock clock;
    private final LockPolicy policy;
    private final LockMetrics metrics;
    private final EventRecorder events;

    private final WorkQueue<String> queue;
    private volatile SharedIndexInformer<Pod> podInformer;
    private volatile SharedIndexInformer<Node> nodeInformer;

    // Owned by the worker thread.
    private final Map<String, Instant> malformedFirstSeen = new HashMap<>();
    private final Map<String, String> reportedPods = new HashMap<>();

    // Read by snapshot() from any thread.
    private volatile String lockValue;
    private volatile String lockVerdict = "";
    private final AtomicLong reapPasses = new AtomicLong();
    private final ArrayDeque<LockAction> recentActions = new ArrayDeque<>();

    /**
     * @param client the API client; owned by the caller (not closed here)
     * @param metrics the node-lock metrics, registered and unregistered by the owner (shared with the allocator)
     */
    public AllocationController(KubernetesClient client, AllocationConfig config, LockMetrics metrics, Clock clock) {
        this(client, config, metrics, clock, new EventCorrelator(clock));
    }

    /** As above, its Events through the agent's one correlator. */
    public AllocationController(KubernetesClient client, AllocationConfig config, LockMetrics metrics, Clock clock,
            EventCorrelator correlator) {
        super("allocation controller for node " + requireNonNull(config, "config").nodeName());
        this.client = requireNonNull(client, "client");
        this.config = requireNonNull(config, "config");
        this.node = config.nodeName();
        this.clock = requireNonNull(clock, "clock");
        this.policy = new LockPolicy(config.nodeLockTimeout(), config.mode() == AllocationMode.DEVICE_PLUGIN);
        this.metrics = requireNonNull(metrics, "metrics");
        this.events = new EventRecorder(client, node, clock, correlator);
        this.queue = new WorkQueue<>(name(), "allocation-controller-" + node, new Reconcile(), config.retryBackoff(),
                CLOSE_TIMEOUT);
    }

    /** How long {@link #close()} waits for an in-flight API call. */
    private static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(5);

    /**
     * Starts the pod and node informers, waits for their first list, and starts the queue and the reaper. Idempotent
     * ({@link Lifecycle#start()}).
     *
     * @throws IllegalStateException when the informers do not start within {@code startTimeout} (everything started
     *         so far is stopped again and the controller is closed), or after {@link #close()}
     */
    @Override
    protected void doStart() {
        try {
            podInformer = (config.podFieldSelector()
                    ? client.pods().inAnyNamespace().withField("spec.nodeName", node)
                    : client.pods().inAnyNamespace()).withLimit(Pages.PODS).runnableInformer(0);
            podInformer.addEventHandler(new PodEvents());
            nodeInformer = client.nodes().withName(node).runnableInformer(0);
            nodeInformer.addEventHandler(EventHandlers.of(node -> enqueue(NODE_KEY), node -> enqueue(NODE_KEY)));
            CompletableFuture.allOf(podInformer.start().toCompletableFuture(),
                            nodeInformer.start().toCompletableFuture())
                    .get(config.startTimeout().toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(name() + ": interrupted while starting", e);
        } catch (ExecutionException | TimeoutException | RuntimeException e) {
            throw new IllegalStateException(name() + ": informers did not start within " + config.startTimeout()
                    + ": " + e, e);
        }
        // Events before both caches were filled were ignored (the queue was not running; a pod judged without its
        // node in the cache would wait for the next event); start from the complete picture instead.
        queue.start();
        queue.every(config.reapInterval(), this::reapTick);
        enqueue(NODE_KEY);
        for (Pod pod : podInformer.getStore().list()) {
            if (onThisNode(pod)) {
                enqueue(Cache.metaNamespaceKeyFunc(pod));
            }
        }
        log.info("allocation controller started node={} mode={} nodeLockTimeout={} reapInterval={} podFieldSelector={}"
                        + " clientRetries={}", node, config.mode().flagValue(), config.nodeLockTimeout(),
                config.reapInterval(), config.podFieldSelector(), client.getConfiguration().getRequestRetryBackoffLimit());
    }

    /** Stops the informers and the queue (waiting briefly for an in-flight API call). */
    @Override
    protected void doClose() {
        boolean wasStarted = queue.isRunning();
        if (nodeInformer != null) {
            nodeInformer.close();
        }
        if (podInformer != null) {
            podInformer.close();
        }
        queue.close();
        if (wasStarted) {
            log.info("allocation controller stopped node={}", node);
        }
    }

    /** Readiness: started, and both informers have completed their first list. */
    public boolean synced() {
        return isRunning() && podInformer.hasSynced() && nodeInformer.hasSynced();
    }

    /** The current lock and the last actions, for {@code /debug/locks}. Thread-safe. */
    public LockSnapshot snapshot() {
        List<LockAction> actions;
        synchronized (recentActions) {
            actions = List.copyOf(recentActions);
        }
        return new LockSnapshot(node, config.mode(), synced(), lockValue, lockVerdict, reapPasses.get(), actions);
    }

    /**
     * This node as the node informer last saw it, for the status page; never calls the API. Empty before the
     * informer's first list, and while the Node does not exist. Thread-safe.
     */
    public Optional<Node> nodeFromCache() {
        SharedIndexInformer<Node> informer = nodeInformer;
        return informer == null ? Optional.empty() : Optional.ofNullable(informer.getStore().getByKey(node));
    }

    // ---------------------------------------------------------------- queue and retries

    private final class PodEvents implements ResourceEventHandler<Pod> {
        @Override
        public void onAdd(Pod pod) {
            if (onThisNode(pod)) {
                enqueue(Cache.metaNamespaceKeyFunc(pod));
            }
        }

        @Override
        public void onUpdate(Pod oldPod, Pod newPod) {
            if (onThisNode(newPod)) {
                enqueue(Cache.metaNamespaceKeyFunc(newPod));
            }
        }

        @Override
        public void onDelete(Pod pod, boolean deletedFinalStateUnknown) {
            // The key's reconcile finds the pod gone and forgets it; the holder of the lock may be gone too.
            enqueue(Cache.metaNamespaceKeyFunc(pod));
            enqueue(NODE_KEY);
        }
    }

    /** Client-side filter: the field selector is not honoured everywhere (fabric8's CRUD mock server). */
    private boolean onThisNode(Pod pod) {
        return pod.getSpec() != null && node.equals(pod.getSpec().getNodeName());
    }

    private void enqueue(String key) {
        queue.enqueue(key);
    }

    /** One reconcile attempt; a retryable failure is retried by the queue with the backoff (and re-reads). */
    private final class Reconcile implements WorkQueue.Reconciler<String> {
        @Override
        public WorkQueue.Result reconcile(String key, int attempt) {
            boolean reread = attempt > 1;
            try {
                if (NODE_KEY.equals(key)) {
                    reconcileNode(reread);
                } else {
                    reconcilePod(key, reread);
                }
            } catch (KubernetesClientException e) {
                if (AllocationController.isRetryable(e)) {
                    throw e;
                }
                log.warn("giving up for now node={} key={} attempts={} code={}; the next event or reap pass retries",
                        node, key, attempt, e.getCode(), e);
            }
            return WorkQueue.Result.done();
        }

        @Override
        public boolean isRetryable(Exception e) {
            return e instanceof KubernetesClientException k && AllocationController.isRetryable(k);
        }
    }

    /** Conflicts, throttling, server errors and transport errors (no HTTP code) are retried. */
    private static boolean isRetryable(KubernetesClientException e) {
        int code = e.getCode();
        return code == 409 || code == 429 || code >= 500 || code <= 0;
    }

    /** Runs on the queue's worker every reap interval (the queue logs a failure and keeps the task). */
    private void reapTick() {
        enqueue(NODE_KEY);
        // Allocations still waiting for kubelet's Allocate are reported again when their version changed.
        for (Pod pod : podInformer.getStore().list()) {
            if (onThisNode(pod) && Annotations.BIND_PHASE_ALLOCATING.equals(
                    Annotations.get(pod.getMetadata().getAnnotations(), Annotations.POD_BIND_PHASE))) {
                enqueue(Cache.metaNamespaceKeyFunc(pod));
            }
        }
    }

    // ---------------------------------------------------------------- allocations in progress

    private void reconcilePod(String key, boolean reread) {
        Pod pod = reread ? getPod(key) : podInformer.getStore().getByKey(key);
        if (pod == null) {
            reportedPods.remove(key);
            return;
        }
        Map<String, String> annotations = pod.getMetadata().getAnnotations();
        if (!onThisNode(pod) || !node.equals(Annotations.get(annotations, Annotations.POD_VGPU_NODE))) {
            return; // not a HAMi allocation for this node: never act on other nodes' pods
        }
        String podPhase = pod.getStatus() == null ? null : pod.getStatus().getPhase();
        if ("Succeeded".equals(podPhase) || "Failed".equals(podPhase)) {
            enqueue(NODE_KEY); // a finished pod needs no devices; if it holds the lock, that lock is dangling
            return;
        }
        String bindPhase = Annotations.get(annotations, Annotations.POD_BIND_PHASE);
        if (Annotations.BIND_PHASE_ALLOCATING.equals(bindPhase)) {
            String toAllocate = Annotations.get(annotations, Annotations.POD_DEVICES_TO_ALLOCATE);
            reportOnce(key, pod, "observed", "allocating with devices \"" + toAllocate + "\"; "
                    + (config.mode() == AllocationMode.DEVICE_PLUGIN ? "kubelet's Allocate calls to this agent's"
                    + " device plugin complete it" : "allocation-mode observe leaves it to the device plugin"));
        } else if (config.mode() == AllocationMode.DEVICE_PLUGIN && Annotations.BIND_PHASE_SUCCESS.equals(bindPhase)) {
            releaseAfterAllocation(pod, ReleaseReason.ALLOCATED, reread);
        } else if (config.mode() == AllocationMode.DEVICE_PLUGIN && Annotations.BIND_PHASE_FAILED.equals(bindPhase)) {
            releaseAfterAllocation(pod, ReleaseReason.FAILED, reread);
        }
    }

    /** Logs and remembers a non-action once per pod version, so periodic passes do not repeat it. */
    private void reportOnce(String key, Pod pod, String kind, String detail) {
        String version = kind + "@" + pod.getMetadata().getResourceVersion();
        if (!version.equals(reportedPods.put(key, version))) {
            log.info("allocation {} pod={} node={}: {}", kind, key, node, detail);
            remember(kind, key, detail);
        }
    }

    /** Owner-checked release after the pod's own allocation completed or failed (an agent stopped in between). */
    private void releaseAfterAllocation(Pod pod, ReleaseReason reason, boolean reread) {
        Node current = reread ? getNode() : cachedNode();
        if (current == null) {
            return;
        }
        String value = Annotations.get(current.getMetadata().getAnnotations(), Annotations.NODE_LOCK);
        LockDecision decision = policy.afterAllocation(value, pod.getMetadata().getNamespace(),
                pod.getMetadata().getName(), reason);
        if (decision instanceof LockDecision.Release release) {
            releaseLock(current, value, release);
        } else if (value != null) {
            log.debug("lock kept node={} pod={}: {}", node, podName(pod), decision.detail());
        }
    }

    // ---------------------------------------------------------------- stale-lock reaper

    private void reconcileNode(boolean reread) {
        reapPasses.incrementAndGet();
        Node current = reread ? getNode() : cachedNode();
        if (current == null) {
            lockValue = null;
            lockVerdict = "node " + node + " not found";
            return;
        }
        String value = Annotations.get(current.getMetadata().getAnnotations(), Annotations.NODE_LOCK);
        lockValue = value;
        if (value == null) {
            malformedFirstSeen.clear();
            lockVerdict = "";
            return;
        }
        Instant now = clock.instant();
        LockDecision decision;
        try {
            NodeLock lock = NodeLock.parse(value);
            malformedFirstSeen.clear();
            decision = policy.judge(lock, lock.hasHolder() ? holderOf(lock, reread) : null, now);
        } catch (MalformedNodeLockException e) {
            Instant firstSeen = malformedFirstSeen.get(value);
            if (firstSeen == null) {
                malformedFirstSeen.clear();
                malformedFirstSeen.put(value, now);
                firstSeen = now;
                String message = e.getMessage() + ": " + PeerText.quote(value) + "; the scheduler cannot bind GPU"
                        + " pods here; the agent clears it after " + config.nodeLockTimeout();
                log.warn("malformed node lock node={} value=\"{}\": {}", node,
                        PeerText.bound(value, PeerText.VALUE_LIMIT), e.getMessage());
                remember("lock-malformed", node, message);
                events.record(current, EventRecorder.WARNING, REASON_LOCK_MALFORMED, message);
            }
            decision = policy.judgeMalformed(value, e.getMessage(), firstSeen, now);
        }
        lockVerdict = decision.detail();
        if (decision instanceof LockDecision.Release release) {
            releaseLock(current, value, release);
        }
    }

    private LockHolder holderOf(NodeLock lock, boolean reread) {
        String key = lock.namespace() + "/" + lock.podName();
        if (!reread) {
            Pod cached = podInformer.getStore().getByKey(key);
            if (cached != null && onThisNode(cached)) {
                return holder(cached);
            }
        }
        // Unbound holders (a Bind in progress) are not in this node's cache: ask the API server.
        Pod pod = client.pods().inNamespace(lock.namespace()).withName(lock.podName()).get();
        return pod == null ? LockHolder.gone() : holder(pod);
    }

    private LockHolder holder(Pod pod) {
        return LockHolder.of(pod.getSpec() == null ? null : pod.getSpec().getNodeName(),
                pod.getStatus() == null ? null : pod.getStatus().getPhase(),
                Annotations.get(pod.getMetadata().getAnnotations(), Annotations.POD_BIND_PHASE), node);
    }

    /**
     * Removes the lock with HAMi's own write: a merge patch setting the key to null, carrying the
     * resourceVersion under which {@code value} was judged — so a lock taken or changed meanwhile
     * is never removed (409, re-read, judge again).
     */
    private void releaseLock(Node current, String value, LockDecision.Release decision) {
        String patch = MergePatch.annotations(current.getMetadata().getResourceVersion(),
                Collections.singletonMap(Annotations.NODE_LOCK, null));
        Node patched;
        try {
            patched = client.nodes().resource(current).patch(PatchContext.of(PatchType.JSON_MERGE), patch);
        } catch (KubernetesClientException e) {
            if (e.getCode() == 404) {
                log.warn("node {} not found while releasing its lock", node);
                return;
            }
            throw e;
        }
        Duration held = null;
        try {
            held = Duration.between(NodeLock.parse(value).lockedAt(), clock.instant());
        } catch (MalformedNodeLockException e) {
            // no time to measure: a malformed value is counted but not observed in the histogram
        }
        lockValue = Annotations.get(patched.getMetadata().getAnnotations(), Annotations.NODE_LOCK);
        lockVerdict = "";
        String reason = decision.reason().label();
        String message = "released " + Annotations.NODE_LOCK + " \"" + value + "\": " + reason + " (" + decision.detail() + ")";
        metrics.released(decision.reason(), held);
        log.info("node lock released node={} value=\"{}\" reason={} held={}: {}", node, value, reason, held, decision.detail());
        remember("lock-released", node, message);
        events.record(patched, EventRecorder.NORMAL, REASON_LOCK_RELEASED, message);
    }

    // ---------------------------------------------------------------- reads and bookkeeping

    private Node cachedNode() {
        Node cached = nodeInformer.getStore().getByKey(node);
        return cached != null ? cached : getNode();
    }

    private Node getNode() {
        return client.nodes().withName(node).get();
    }

    private Pod getPod(String key) {
        int slash = key.indexOf('/');
        return client.pods().inNamespace(key.substring(0, slash)).withName(key.substring(slash + 1)).get();
    }

    private static String podName(Pod pod) {
        return pod.getMetadata().getNamespace() + "/" + pod.getMetadata().getName();
    }

    private void remember(String kind, String subject, String detail) {
        synchronized (recentActions) {
            if (recentActions.size() == config.recentActionLimit()) {
                recentActions.removeFirst();
            }
            recentActions.addLast(new LockAction(clock.instant(), kind, subject, detail));
        }
    }
}
