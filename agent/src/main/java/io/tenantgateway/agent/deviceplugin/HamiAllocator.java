package io.tenantgateway.agent.deviceplugin;

import static java.util.Objects.requireNonNull;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.tenantgateway.agent.k8s.EventCorrelator;
import io.tenantgateway.agent.k8s.EventRecorder;
import io.tenantgateway.agent.k8s.MergePatch;
import io.tenantgateway.agent.locks.policy.LockDecision;
import io.tenantgateway.agent.locks.policy.LockPolicy;
import io.tenantgateway.agent.locks.policy.ReleaseReason;
import io.tenantgateway.agent.k8s.Pages;
import io.tenantgateway.common.text.PeerText;
import io.tenantgateway.deviceplugin.AllocationException;
import io.tenantgateway.deviceplugin.Allocator;
import io.tenantgateway.deviceplugin.policy.AllocateDecision;
import io.tenantgateway.deviceplugin.policy.AllocatePolicy;
import io.tenantgateway.deviceplugin.policy.ContainerAllocation;
import io.tenantgateway.deviceplugin.policy.ContainerView;
import io.tenantgateway.deviceplugin.policy.PendingPodPolicy;
import io.tenantgateway.deviceplugin.policy.PodChoice;
import io.tenantgateway.deviceplugin.policy.PodView;
import io.tenantgateway.deviceplugin.policy.PreferredAllocationPolicy;
import io.tenantgateway.deviceplugin.policy.VendorAllocation;
import io.tenantgateway.deviceplugin.policy.VirtualDevice;
import io.tenantgateway.hami.Annotations;
import io.tenantgateway.hami.ContainerDevice;
import io.tenantgateway.hami.DeviceAllocationCodec;
import io.tenantgateway.hami.HamiCore;
import io.tenantgateway.hami.MalformedNodeLockException;
import io.tenantgateway.hami.NodeLock;
import io.tenantgateway.hami.NodeVendor;
import io.tenantgateway.hami.RegisteredDevice;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import io.tenantgateway.agent.health.LockMetrics;

/**
 * HAMi's Allocate against the API (shared/spec/device-plugin.md §2), for one of this agent's device plugins — NVIDIA's,
 * or a simulated Hygon or Ascend plugin (device-plugin/VENDOR-PLUGINS.md): kubelet calls it once per container.
 *
 * <ol>
 *   <li>Find the pod: the one the node lock names (HAMi PR #3095; a malformed lock or a missing pod is an error, no
 *       fallback), else HAMi's search for the pending pod on this node; none: {@code no binding pod found on node
 *       <node>}, nothing written.</li>
 *   <li>Decide with {@link AllocatePolicy}: the next entry of the vendor's {@code hami.io/<word>-devices-to-allocate},
 *       its container, the vendor's answer ({@link VendorAllocation}: HAMi-core's environment and mounts for
 *       NVIDIA).</li>
 *   <li>NVIDIA: recreate the container's cache directory on the host (mode 0777) and {@code /tmp/vgpulock}.</li>
 *   <li>Erase the entry: a merge patch carrying the pod's resourceVersion (a conflict re-reads and decides again).</li>
 *   <li>Read what the API answered: no entry left in <em>any</em> vendor's to-allocate key
 *       ({@link NodeVendor#anyEntryLeft}) means the pod is allocated: {@code bind-phase=success}, a
 *       {@code GPUAllocated} Event, and the node lock released — only when it names this pod, by a merge patch with
 *       the node's resourceVersion, HAMi's 5 tries. A pod asking for NVIDIA and Ascend devices completes once, in
 *       the call that erases the last entry, whichever plugin serves it. (HAMi's plugins look at their own key
 *       only, and Ascend's at none: the first one done completes the pod and releases the lock while another
 *       vendor's containers still wait.)</li>
 *   <li>Any error once the pod is known: {@code bind-phase=failed}, a Warning {@code GPUAllocationFailed} Event, the
 *       lock released with the same owner check, the error back to kubelet. A pod already allocated is never
 *       failed by a late call.</li>
 * </ol>
 *
 * <p>When the API does not take that bookkeeping (a server error, throttling, no answer) — or does not even answer
 * step 1 — the error still goes back to kubelet at once, and the failure waits in {@link FailureBookkeeping}: one
 * record per pod, retried with {@link AllocatorConfig#failureRetry()} until the API answers, then written as above
 * (or dropped when the pod is gone, re-bound or decided otherwise, or the lock is no longer its own).
 *
 * <p>Threading: called on the device plugin's single call thread, and every allocator of the agent (one per vendor
 * plugin) shares one decisions lock, so one call at a time per node — the "one allocation at a time per node" HAMi's
 * process-wide lock gives, across vendors: two plugins never complete the same pod twice (the erase is also a
 * compare-and-swap on the pod's resourceVersion, so each call sees the other's erase). Blocks there on API calls and
 * on HAMi's waits between release attempts (kubelet waits for the answer anyway); never on an event loop. The
 * deferred bookkeeping runs on its queue's worker and takes the same lock as Allocate, so it never interleaves with
 * an allocation.
 *
 * <p>Lifecycle: {@link #start()} starts the bookkeeping queue (without it a failure the API did not take is only
 * logged); {@link #close()} stops it.
 */
public final class HamiAllocator implements Allocator, AutoCloseable {
    static final String REASON_ALLOCATED = "GPUAllocated";
    static final String REASON_ALLOCATION_FAILED = "GPUAllocationFailed";
    private static final Pattern VERSIONED_LIBRARY = Pattern.compile("libvgpu\\.so\\..+");
    private static final Logger log = LoggerFactory.getLogger(HamiAllocator.class);

    private final KubernetesClient client;
    private final AllocatorConfig config;
    private final NodeVendor vendor;
    private final Supplier<Map<String, Long>> nodeDevices;
    private final LockMetrics metrics;
    private final Clock clock;
    private final String node;
    private final PendingPodPolicy pending;
    private final AllocatePolicy policy;
    private final LockPolicy lockPolicy;
    private final EventRecorder events;
    private final Random random = new Random();
    private final FailureBookkeeping bookkeeping;
    /** One decision at a time: an Allocate call or one attempt of the deferred bookkeeping, of any vendor. */
    private final ReentrantLock decisions;
    private String lastDirectoryProblem;

    /**
     * NVIDIA's allocator, alone (its own decisions lock).
     *
     * @param nodeGpus the UUIDs of the GPUs the device plugin lists (an entry naming another GPU fails)
     * @param metrics shared with the lock controller; registered by the owner
     */
    public HamiAllocator(KubernetesClient client, AllocatorConfig config, Supplier<Set<String>> nodeGpus,
            LockMetrics metrics, Clock clock) {
        this(client, config, NodeVendor.NVIDIA, byUuid(requireNonNull(nodeGpus, "nodeGpus")), new ReentrantLock(),
                metrics, clock);
    }

    /**
     * One vendor's allocator.
     *
     * @param nodeDevices the devices the vendor's plugin lists: ID → position in its register annotation (an entry
     *     naming another device fails)
     * @param decisions the agent's one decisions lock, shared by every vendor's allocator
     * @param metrics shared with the lock controller; registered by the owner
     */
    public HamiAllocator(KubernetesClient client, AllocatorConfig config, NodeVendor vendor,
            Supplier<Map<String, Long>> nodeDevices, ReentrantLock decisions, LockMetrics metrics, Clock clock) {
        this(client, config, vendor, nodeDevices, decisions, metrics, clock, new EventCorrelator(clock));
    }

    /** As above, its Events through the agent's one correlator. */
    public HamiAllocator(KubernetesClient client, AllocatorConfig config, NodeVendor vendor,
            Supplier<Map<String, Long>> nodeDevices, ReentrantLock decisions, LockMetrics metrics, Clock clock,
            EventCorrelator correlator) {
        this.client = requireNonNull(client, "client");
        this.config = requireNonNull(config, "config");
        this.vendor = requireNonNull(vendor, "vendor");
        this.nodeDevices = requireNonNull(nodeDevices, "nodeDevices");
        this.decisions = requireNonNull(decisions, "decisions");
        this.metrics = requireNonNull(metrics, "metrics");
        this.clock = requireNonNull(clock, "clock");
        this.node = config.nodeName();
        this.pending = new PendingPodPolicy(node);
        this.policy = new AllocatePolicy(VendorAllocation.of(vendor, config.hamiCore()), config.hamiCore(), node);
        this.lockPolicy = new LockPolicy(LockPolicy.DEFAULT_NODE_LOCK_TIMEOUT, true);
        this.events = new EventRecorder(client, node, clock, correlator);
        this.bookkeeping = new FailureBookkeeping(node, this::attempt, config.failureRetry(),
                config.pendingFailureLimit(), metrics, clock);
    }

    /** A plugin that knows its devices by UUID only (NVIDIA's): each at an unknown position. */
    static Supplier<Map<String, Long>> byUuid(Supplier<Set<String>> uuids) {
        return () -> {
            Map<String, Long> devices = new LinkedHashMap<>();
            uuids.get().forEach(uuid -> devices.put(uuid, -1L));
            return devices;
        };
    }

    /** What the vendor's plugin lists to kubelet for {@code devices} ({@link VendorAllocation#virtualDevices}). */
    public List<VirtualDevice> virtualDevices(List<RegisteredDevice> devices) {
        return policy.vendor().virtualDevices(devices);
    }

    /** The vendor whose plugin this allocator answers for. */
    public NodeVendor vendor() {
        return vendor;
    }

    /** Starts the queue that writes failure bookkeeping the API did not take at once. Idempotent. */
    public void start() {
        bookkeeping.start();
    }

    /** Stops that queue (what is pending is dropped and logged). Idempotent. */
    @Override
    public void close() {
        bookkeeping.close();
    }

    /** Pods whose failed allocation waits for the API; for tests and debug pages. */
    public List<String> pendingFailures() {
        return bookkeeping.pendingPods();
    }

    // ---------------------------------------------------------------- Allocate

    @Override
    public ContainerAllocation allocate(List<String> deviceIds) throws AllocationException {
        requireNonNull(deviceIds, "deviceIds");
        decisions.lock();
        try {
            return allocateLocked(deviceIds);
        } finally {
            decisions.unlock();
        }
    }

    private ContainerAllocation allocateLocked(List<String> deviceIds) throws AllocationException {
        Found found;
        try {
            found = findPod();
        } catch (KubernetesClientException e) {
            // Nothing is known about the pod: the failure waits for the API, attributed then by this same rule.
            String why = "cannot find the pod to allocate on node " + node + ": the API answered "
                    + FailureBookkeeping.describe(e);
            if (retryable(e)) {
                bookkeeping.defer(FailureBookkeeping.Pending.unattributed(why, deviceIds, clock.instant()), e);
            } else {
                log.warn("Allocate refused node={}: {}", node, why);
            }
            throw new AllocationException(why, e);
        }
        try {
            return allocate(found, deviceIds);
        } catch (KubernetesClientException e) {
            // A re-read after a conflict failed: the pod is known, its failure is written (or deferred).
            String why = "cannot re-read pod " + key(found.pod()) + ": " + FailureBookkeeping.describe(e);
            fail(found.pod(), found.byLock(), deviceIds, why);
            throw new AllocationException(why, e);
        }
    }

    private ContainerAllocation allocate(Found found, List<String> deviceIds) throws AllocationException {
        Pod pod = found.pod();
        for (int attempt = 1; ; attempt++) {
            PodView view = view(pod);
            boolean hamiCore = policy.vendor().hamiCoreHost();
            AllocateDecision decision = policy.decide(view, deviceIds, nodeDevices.get(),
                    hamiCore ? libraryFile() : "", hamiCore ? UUID.randomUUID().toString() : "");
            if (decision instanceof AllocateDecision.Refuse refuse) {
                if (refuse.failPod()) {
                    fail(pod, found.byLock(), deviceIds, refuse.describe());
                } else {
                    log.info("Allocate refused, pod left as it is pod={} node={} devices={}: {}", view.key(), node,
                            deviceIds, refuse.describe());
                }
                throw new AllocationException(refuse.message());
            }
            AllocateDecision.Allocate allocate = (AllocateDecision.Allocate) decision;
            if (hamiCore) {
                prepareHostDirectories(view, allocate.containerName());
            }
            Pod erased;
            try {
                erased = patch(pod, Map.of(policy.vendor().toAllocateKey(), allocate.remaining()));
            } catch (KubernetesClientException e) {
                if (e.getCode() == 409 && config.retry().hasNext(attempt)) {
                    log.debug("conflict erasing the entry of pod={}, re-reading (attempt {})", view.key(), attempt);
                    pod = reread(pod);
                    continue;
                }
                String why = "cannot erase the entry of container " + allocate.containerName() + ": " + describe(e);
                fail(pod, found.byLock(), deviceIds, why);
                throw new AllocationException(why, e);
            }
            log.info("Allocate pod={} container={} entry={} node={} kubelet={} devices={} to-allocate=\"{}\""
                    + " resource={}", view.key(), allocate.containerName(), allocate.entryIndex(), node, deviceIds,
                    uuids(allocate.devices()), PeerText.bound(allocate.remaining()), vendor.resourceName());
            completeIfLast(erased, found.byLock(), deviceIds);
            return allocate.allocation();
        }
    }

    /**
     * Step 7 on what the API answered: when no entry is left in any vendor's key, success, Event, lock release. The
     * erase was a compare-and-swap and every allocator holds the same decisions lock, so exactly one call of all
     * the agent's plugins sees the last entry gone.
     */
    private void completeIfLast(Pod erased, boolean byLock, List<String> deviceIds) throws AllocationException {
        Map<String, String> annotations = erased.getMetadata().getAnnotations() == null ? Map.of()
                : erased.getMetadata().getAnnotations();
        if (NodeVendor.anyEntryLeft(annotations)) {
            return; // the next container's call (of this plugin or another vendor's) takes the next entry
        }
        Pod done;
        try {
            done = patch(erased, Map.of(Annotations.POD_BIND_PHASE, Annotations.BIND_PHASE_SUCCESS));
        } catch (KubernetesClientException e) {
            String why = "cannot set " + Annotations.POD_BIND_PHASE + "=success: " + describe(e);
            fail(erased, byLock, deviceIds, why);
            throw new AllocationException(why, e);
        }
        String message = "allocated devices " + allocatedDevices(annotations) + " on node " + node;
        metrics.allocation(LockMetrics.Allocation.SUCCESS);
        log.info("allocation completed pod={} node={}: {}", key(done), node, message);
        events.record(done, EventRecorder.NORMAL, REASON_ALLOCATED, message);
        releaseLock(done, ReleaseReason.ALLOCATED); // what is left, the lock controller's reaper releases
    }

    /**
     * Every device the scheduler placed, of every vendor: NVIDIA's {@code hami.io/vgpu-devices-allocated} first, then
     * the others' {@code hami.io/<word>-devices-allocated} by key; a value that does not decode is left out.
     */
    static Set<String> allocatedDevices(Map<String, String> annotations) {
        Map<String, String> keys = new TreeMap<>();
        annotations.forEach((key, value) -> {
            if (value != null && !key.equals(Annotations.POD_DEVICES_ALLOCATED) && key.startsWith("hami.io/")
                    && key.endsWith("-devices-allocated")) {
                keys.put(key, value);
            }
        });
        List<String> values = new ArrayList<>();
        String nvidia = Annotations.get(annotations, Annotations.POD_DEVICES_ALLOCATED);
        if (nvidia != null) {
            values.add(nvidia);
        }
        values.addAll(keys.values());
        Set<String> devices = new LinkedHashSet<>();
        for (String value : values) {
            try {
                devices.addAll(uuids(DeviceAllocationCodec.decode(value).stream().flatMap(List::stream).toList()));
            } catch (IllegalArgumentException e) {
                // the scheduler's record, unreadable: the Event names what is readable
            }
        }
        return devices;
    }

    /**
     * Step 8: {@code failed}, a Warning Event, the pod's own lock released. What the API does not take (a server error,
     * throttling, no answer, conflicts beyond HAMi's tries) waits in the {@link FailureBookkeeping}.
     *
     * @param byLock whether the node lock named {@code pod} when it was found
     */
    private void fail(Pod pod, boolean byLock, List<String> deviceIds, String reason) {
        String why = PeerText.bound(reason); // for the log, the Event and the bookkeeping: it may quote annotations
        Pod failed = pod;
        for (int attempt = 1; ; attempt++) {
            try {
                failed = patch(failed, Map.of(Annotations.POD_BIND_PHASE, Annotations.BIND_PHASE_FAILED));
                break;
            } catch (KubernetesClientException e) {
                if (e.getCode() == 404) {
                    log.info("pod deleted mid-allocation pod={} node={}", key(pod), node);
                    return;
                }
                if (retryable(e) && (e.getCode() != 409 || !config.retry().hasNext(attempt))) {
                    bookkeeping.defer(pending(pod, byLock, FailureBookkeeping.Stage.PHASE, deviceIds, why), e);
                    return;
                }
                if (e.getCode() != 409) {
                    log.warn("cannot set {}=failed on pod={} node={}: {}", Annotations.POD_BIND_PHASE, key(pod), node,
                            describe(e));
                    break;
                }
                try {
                    failed = reread(failed);
                } catch (KubernetesClientException reread) {
                    if (retryable(reread)) {
                        bookkeeping.defer(pending(pod, byLock, FailureBookkeeping.Stage.PHASE, deviceIds, why),
                                reread);
                        return;
                    }
                    log.warn("cannot re-read pod={} node={} to set {}=failed: {}", key(pod), node,
                            Annotations.POD_BIND_PHASE, describe(reread));
                    break;
                }
            }
        }
        metrics.allocation(LockMetrics.Allocation.FAILED);
        log.warn("allocation failed pod={} node={} reason=\"{}\"", key(pod), node, why);
        events.record(failed, EventRecorder.WARNING, REASON_ALLOCATION_FAILED, why);
        KubernetesClientException unreleased = releaseLock(failed, ReleaseReason.FAILED);
        if (unreleased != null) {
            bookkeeping.defer(pending(failed, byLock, FailureBookkeeping.Stage.RELEASE, deviceIds, why), unreleased);
        }
    }

    private FailureBookkeeping.Pending pending(Pod pod, boolean byLock, FailureBookkeeping.Stage stage,
            List<String> deviceIds, String why) {
        var metadata = pod.getMetadata();
        return new FailureBookkeeping.Pending(key(pod), metadata.getUid(),
                Annotations.get(metadata.getAnnotations(), Annotations.POD_BIND_TIME), byLock, stage, why, deviceIds,
                clock.instant());
    }

    /**
     * Releases the node lock when, and only when, it names {@code pod}: HAMi's merge patch setting the key to null
     * with the node's resourceVersion, retried with HAMi's backoff after re-reading. What is left after the last
     * attempt the lock controller's reaper releases (the holder is then success/failed).
     *
     * @return the API's last answer when the lock may still be the pod's after HAMi's tries (a retryable error),
     *     else {@code null} (released, not the pod's, or an error a retry does not mend)
     */
    private KubernetesClientException releaseLock(Pod pod, ReleaseReason reason) {
        for (int attempt = 1; ; attempt++) {
            Node current;
            try {
                current = client.nodes().withName(node).get();
            } catch (KubernetesClientException e) {
                if (!retryable(e)) {
                    return null;
                }
                if (!waitBeforeRetry(attempt, "read node " + node, e)) {
                    return e;
                }
                continue;
            }
            if (current == null) {
                log.warn("node {} not found while releasing its lock", node);
                return null;
            }
            String value = Annotations.get(current.getMetadata().getAnnotations(), Annotations.NODE_LOCK);
            LockDecision decision = lockPolicy.afterAllocation(value, pod.getMetadata().getNamespace(),
                    pod.getMetadata().getName(), reason);
            if (!(decision instanceof LockDecision.Release release)) {
                if (value != null) {
                    log.info("node lock kept node={} pod={}: {}", node, key(pod), decision.detail());
                }
                return null;
            }
            try {
                Node patched = client.nodes().withName(node).patch(PatchContext.of(PatchType.JSON_MERGE),
                        MergePatch.annotations(current.getMetadata().getResourceVersion(),
                                Collections.singletonMap(Annotations.NODE_LOCK, null)));
                released(patched, value, release);
                return null;
            } catch (KubernetesClientException e) {
                if (e.getCode() == 404 || !retryable(e)) {
                    return null;
                }
                if (!waitBeforeRetry(attempt, "release the lock of " + node, e)) {
                    return e;
                }
            }
        }
    }

    private void released(Node patched, String value, LockDecision.Release decision) {
        Duration held = null;
        try {
            held = Duration.between(NodeLock.parse(value).lockedAt(), clock.instant());
        } catch (MalformedNodeLockException e) {
            // the owner check accepted it, so it parses; nothing to measure otherwise
        }
        String reason = decision.reason().label();
        metrics.released(decision.reason(), held);
        log.info("node lock released node={} value=\"{}\" reason={} held={}: {}", node, value, reason, held,
                decision.detail());
        events.record(patched, EventRecorder.NORMAL, LockPolicy.REASON_LOCK_RELEASED, "released "
                + Annotations.NODE_LOCK + " \"" + value + "\": " + reason + " (" + decision.detail() + ")");
    }

    /** Waits HAMi's backoff before the next attempt; false (logged) when no attempt is left. */
    private boolean waitBeforeRetry(int attempt, String what, KubernetesClientException e) {
        if (!config.retry().hasNext(attempt)) {
            log.info("could not {} after {} attempts ({}); a failed pod's release waits for the API (retried with"
                    + " backoff), and the lock controller's reaper releases a lock whose holder is allocated or failed",
                    what, attempt, describe(e));
            return false;
        }
        Duration wait = config.retry().delayAfter(attempt, random.nextDouble());
        log.debug("{} failed (attempt {}, {}), retrying in {}", what, attempt, describe(e), wait);
        try {
            // HAMi waits between lock writes inside its synchronous Allocate; this is the plugin's call thread.
            TimeUnit.NANOSECONDS.sleep(wait.toNanos());
        } catch (InterruptedException interrupted) {
            Thread.currentThread().interrupt();
            return false;
        }
        return true;
    }

    private static boolean retryable(KubernetesClientException e) {
        int code = e.getCode();
        return code == 409 || code == 429 || code >= 500 || code <= 0;
    }

    // ---------------------------------------------------------------- deferred failure bookkeeping

    /**
     * One attempt of a failure's bookkeeping the API did not take (on the bookkeeping queue's worker, under the same
     * lock as Allocate); an API error is thrown for the queue to retry with the backoff.
     */
    private FailureBookkeeping.Outcome attempt(FailureBookkeeping.Pending failure) {
        decisions.lock();
        try {
            return failure.podKey == null ? attribute(failure) : settle(failure);
        } finally {
            decisions.unlock();
        }
    }

    /**
     * A failure from before the pod was read belongs to the pod Allocate's own step 1 serves now — the lock's holder,
     * else HAMi's pending pod — when that pod is still {@code allocating} and was bound before the failure (a pod bound
     * since cannot have been the one kubelet was admitting).
     */
    private FailureBookkeeping.Outcome attribute(FailureBookkeeping.Pending failure) {
        Duration age = Duration.between(failure.failedAt, clock.instant());
        if (age.compareTo(LockPolicy.DEFAULT_NODE_LOCK_TIMEOUT) > 0) {
            return new FailureBookkeeping.Outcome.Dropped("older than the node lock timeout ("
                    + LockPolicy.DEFAULT_NODE_LOCK_TIMEOUT + "): the scheduler may have locked the node for"
                    + " another pod since");
        }
        Found found;
        try {
            found = findPod();
        } catch (AllocationException e) {
            return new FailureBookkeeping.Outcome.Dropped("no pod Allocate would serve now: " + e.getMessage());
        }
        Pod pod = found.pod();
        Map<String, String> annotations = pod.getMetadata().getAnnotations();
        String phase = Annotations.get(annotations, Annotations.POD_BIND_PHASE);
        if (!Annotations.BIND_PHASE_ALLOCATING.equals(phase)) {
            return new FailureBookkeeping.Outcome.Dropped("pod " + key(pod) + ", the one Allocate serves now, is "
                    + Annotations.POD_BIND_PHASE + "=" + phase + ", not allocating");
        }
        String bindTime = Annotations.get(annotations, Annotations.POD_BIND_TIME);
        long boundAt;
        try {
            boundAt = bindTime == null ? Long.MAX_VALUE : Long.parseLong(bindTime.strip());
        } catch (NumberFormatException e) {
            boundAt = Long.MAX_VALUE;
        }
        if (boundAt > failure.failedAt.getEpochSecond()) {
            return new FailureBookkeeping.Outcome.Dropped("pod " + key(pod) + ", the one Allocate serves now, was"
                    + " bound (" + Annotations.POD_BIND_TIME + " " + bindTime + ") after the failure at "
                    + failure.failedAt);
        }
        failure.podKey = key(pod);
        failure.uid = pod.getMetadata().getUid();
        failure.bindTime = bindTime;
        failure.lockHeld = found.byLock();
        return new FailureBookkeeping.Outcome.Attributed();
    }

    /** Writes what is left of a known pod's failure: {@code failed}, the Warning Event, the own lock's release. */
    private FailureBookkeeping.Outcome settle(FailureBookkeeping.Pending failure) {
        int slash = failure.podKey.indexOf('/');
        String namespace = failure.podKey.substring(0, slash);
        String name = failure.podKey.substring(slash + 1);
        Pod pod = client.pods().inNamespace(namespace).withName(name).get();
        String moot = moot(failure, pod);
        if (moot != null) {
            return new FailureBookkeeping.Outcome.Dropped(moot);
        }
        if (failure.stage == FailureBookkeeping.Stage.PHASE) {
            if (failure.lockHeld) {
                Node current = client.nodes().withName(node).get();
                String value = current == null ? null
                        : Annotations.get(current.getMetadata().getAnnotations(), Annotations.NODE_LOCK);
                if (value != null && !(lockPolicy.afterAllocation(value, namespace, name, ReleaseReason.FAILED)
                        instanceof LockDecision.Release)) {
                    return new FailureBookkeeping.Outcome.Dropped("the node lock is no longer its own (\"" + value
                            + "\"): the scheduler has moved on");
                }
            }
            try {
                pod = patch(pod, Map.of(Annotations.POD_BIND_PHASE, Annotations.BIND_PHASE_FAILED));
            } catch (KubernetesClientException e) {
                if (e.getCode() == 404) {
                    return new FailureBookkeeping.Outcome.Dropped("pod deleted");
                }
                throw e; // a conflict re-reads and judges again on the next attempt
            }
            metrics.allocation(LockMetrics.Allocation.FAILED); // logged once written (FailureBookkeeping)
            failure.stage = FailureBookkeeping.Stage.EVENT;
        }
        if (failure.stage == FailureBookkeeping.Stage.EVENT) {
            try {
                events.create(pod, EventRecorder.WARNING, REASON_ALLOCATION_FAILED, failure.why);
            } catch (KubernetesClientException e) {
                if (retryable(e)) {
                    throw e;
                }
                log.warn("event not recorded pod={} reason={}: {}", failure.podKey, REASON_ALLOCATION_FAILED,
                        describe(e));
            }
            failure.stage = FailureBookkeeping.Stage.RELEASE;
        }
        Node current = client.nodes().withName(node).get();
        if (current == null) {
            return new FailureBookkeeping.Outcome.Written("bind-phase=failed, Warning " + REASON_ALLOCATION_FAILED
                    + "; node " + node + " not found");
        }
        String value = Annotations.get(current.getMetadata().getAnnotations(), Annotations.NODE_LOCK);
        LockDecision decision = lockPolicy.afterAllocation(value, namespace, name, ReleaseReason.FAILED);
        if (!(decision instanceof LockDecision.Release release)) {
            return new FailureBookkeeping.Outcome.Written("bind-phase=failed, Warning " + REASON_ALLOCATION_FAILED
                    + "; node lock kept: " + decision.detail());
        }
        Node patched;
        try {
            patched = client.nodes().withName(node).patch(PatchContext.of(PatchType.JSON_MERGE),
                    MergePatch.annotations(current.getMetadata().getResourceVersion(),
                            Collections.singletonMap(Annotations.NODE_LOCK, null)));
        } catch (KubernetesClientException e) {
            if (e.getCode() == 404) {
                return new FailureBookkeeping.Outcome.Written("bind-phase=failed, Warning " + REASON_ALLOCATION_FAILED
                        + "; node " + node + " not found");
            }
            throw e; // a conflict re-reads the node and judges the lock again
        }
        released(patched, value, release);
        return new FailureBookkeeping.Outcome.Written("bind-phase=failed, Warning " + REASON_ALLOCATION_FAILED
                + ", node lock \"" + value + "\" released");
    }

    /** Why a pending failure no longer applies to {@code pod} as read now, or {@code null} when it does. */
    private static String moot(FailureBookkeeping.Pending failure, Pod pod) {
        if (pod == null) {
            return "pod deleted";
        }
        var metadata = pod.getMetadata();
        if (failure.uid != null && !failure.uid.equals(metadata.getUid())) {
            return "pod re-created (uid " + metadata.getUid() + ", failed was " + failure.uid + ")";
        }
        String bindTime = Annotations.get(metadata.getAnnotations(), Annotations.POD_BIND_TIME);
        if (!java.util.Objects.equals(failure.bindTime, bindTime)) {
            return "pod re-bound (" + Annotations.POD_BIND_TIME + " " + bindTime + ", failed was " + failure.bindTime
                    + ")";
        }
        String phase = Annotations.get(metadata.getAnnotations(), Annotations.POD_BIND_PHASE);
        if (failure.stage == FailureBookkeeping.Stage.PHASE && !Annotations.BIND_PHASE_ALLOCATING.equals(phase)) {
            return "decided since: " + Annotations.POD_BIND_PHASE + "=" + phase;
        }
        return null;
    }

    // ---------------------------------------------------------------- GetPreferredAllocation

    @Override
    public Optional<List<String>> preferred(int index, List<String> available, List<String> mustInclude, int size) {
        Pod pod;
        try {
            pod = findPod().pod();
        } catch (AllocationException | KubernetesClientException e) {
            log.debug("no preferred allocation node={}: {}", node, e.getMessage());
            return Optional.empty();
        }
        String value = Annotations.get(pod.getMetadata().getAnnotations(), policy.vendor().toAllocateKey());
        if (value == null) {
            return Optional.empty();
        }
        List<List<ContainerDevice>> pendingEntries;
        try {
            pendingEntries = DeviceAllocationCodec.decode(value).stream().filter(e -> !e.isEmpty()).toList();
        } catch (IllegalArgumentException e) {
            return Optional.empty();
        }
        // Kubelet asks for the containers that want devices, in order: the request's n-th container is the n-th
        // entry still to hand out.
        if (index >= pendingEntries.size()) {
            return Optional.empty();
        }
        Optional<List<String>> preferred = PreferredAllocationPolicy.select(available, mustInclude,
                pendingEntries.get(index), size);
        log.debug("preferred allocation pod={} entry={} preferred={}", key(pod), pendingEntries.get(index),
                preferred);
        return preferred;
    }

    // ---------------------------------------------------------------- the pod

    /** The pod step 1 found, and whether the node lock named it. */
    private record Found(Pod pod, boolean byLock) { }

    /** Step 1; throws (nothing written) when no pod is found. */
    private Found findPod() throws AllocationException {
        Node current = client.nodes().withName(node).get();
        if (current == null) {
            throw new AllocationException("node " + node + " not found");
        }
        PodChoice choice = pending.fromLock(Annotations.get(current.getMetadata().getAnnotations(),
                Annotations.NODE_LOCK));
        if (choice instanceof PodChoice.Refuse refuse) {
            log.warn("Allocate refused node={}: {}", node, refuse.message());
            throw new AllocationException(refuse.message());
        }
        if (choice instanceof PodChoice.ByLock byLock) {
            Pod pod = client.pods().inNamespace(byLock.namespace()).withName(byLock.name()).get();
            if (pod == null) {
                String why = "pod " + PeerText.bound(byLock.namespace() + "/" + byLock.name(), PeerText.VALUE_LIMIT)
                        + " named by " + Annotations.NODE_LOCK + " on node " + node + " not found";
                log.warn("Allocate refused: {}", why);
                throw new AllocationException(why);
            }
            String wrong = pending.checkLockHolder(view(pod));
            if (wrong != null) {
                log.warn("Allocate refused: {}", wrong);
                throw new AllocationException(wrong);
            }
            return new Found(pod, true);
        }
        Map<PodView, Pod> candidates = new LinkedHashMap<>();
        for (Pod pod : Pages.podsOn(client, node, config.podFieldSelector())) {
            candidates.put(view(pod), pod);
        }
        Optional<PodView> picked = pending.pick(new ArrayList<>(candidates.keySet()));
        if (picked.isEmpty()) {
            log.warn("Allocate refused: {}", pending.noBindingPod());
            throw new AllocationException(pending.noBindingPod());
        }
        return new Found(candidates.get(picked.get()), false);
    }

    private Pod reread(Pod pod) {
        Pod fresh = client.pods().inNamespace(pod.getMetadata().getNamespace()).withName(pod.getMetadata().getName())
                .get();
        return fresh == null ? pod : fresh;
    }

    /** A compare-and-swap merge patch of annotations, carrying the resourceVersion {@code pod} was read at. */
    private Pod patch(Pod pod, Map<String, String> annotations) {
        return client.pods().inNamespace(pod.getMetadata().getNamespace()).withName(pod.getMetadata().getName())
                .patch(PatchContext.of(PatchType.JSON_MERGE), MergePatch.annotations(
                        pod.getMetadata().getResourceVersion(), annotations));
    }

    static PodView view(Pod pod) {
        var metadata = pod.getMetadata();
        var spec = pod.getSpec();
        List<ContainerView> init = spec == null || spec.getInitContainers() == null ? List.of()
                : spec.getInitContainers().stream().map(HamiAllocator::container).toList();
        List<ContainerView> containers = spec == null || spec.getContainers() == null ? List.of()
                : spec.getContainers().stream().map(HamiAllocator::container).toList();
        return new PodView(metadata.getNamespace(), metadata.getName(), metadata.getUid() == null ? ""
                : metadata.getUid(), spec == null ? null : spec.getNodeName(),
                pod.getStatus() == null ? null : pod.getStatus().getPhase(),
                metadata.getResourceVersion() == null ? "" : metadata.getResourceVersion(),
                metadata.getAnnotations() == null ? Map.of() : metadata.getAnnotations(), init, containers);
    }

    private static ContainerView container(Container container) {
        Map<String, String> env = new LinkedHashMap<>();
        if (container.getEnv() != null) {
            for (EnvVar var : container.getEnv()) {
                if (var.getName() != null && var.getValue() != null) {
                    env.put(var.getName(), var.getValue());
                }
            }
        }
        return new ContainerView(container.getName(), env);
    }

    // ---------------------------------------------------------------- the host side

    /**
     * The library file in {@code <hookPath>/vgpu/} on the host: the versioned {@code libvgpu.so.<v>} HAMi's
     * {@code vgpu-init.sh} copied there (the highest, when several are), else {@code libvgpu.so}.
     */
    String libraryFile() {
        Path dir = config.local(config.hamiCore().path("vgpu"));
        try (Stream<Path> files = Files.list(dir)) {
            return files.map(f -> f.getFileName().toString()).filter(n -> VERSIONED_LIBRARY.matcher(n).matches())
                    .max(Comparator.comparing(HamiAllocator::versionKey)).orElse("libvgpu.so");
        } catch (IOException e) {
            return "libvgpu.so";
        }
    }

    /** Orders {@code libvgpu.so.v2.9.0} before {@code libvgpu.so.v2.10.0}: numbers compared as numbers. */
    private static String versionKey(String name) {
        StringBuilder key = new StringBuilder();
        for (String part : name.split("(?<=\\D)(?=\\d)|(?<=\\d)(?=\\D)")) {
            key.append(part.chars().allMatch(Character::isDigit) ? String.format("%010d", Long.parseLong(part))
                    : part);
        }
        return key.toString();
    }

    /** HAMi recreates the container's cache directory (0777) and {@code /tmp/vgpulock} (0777), ignoring errors. */
    private void prepareHostDirectories(PodView pod, String containerName) {
        Path cache = config.local(policy.containerCacheDirectory(pod, containerName));
        Path lock = config.local(HamiCore.LOCK_DIR);
        try {
            deleteTree(cache);
            for (Path dir : List.of(cache, lock)) {
                Files.createDirectories(dir);
                Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxrwxrwx"));
            }
            lastDirectoryProblem = null;
        } catch (IOException | UnsupportedOperationException e) {
            String problem = e.toString();
            if (!problem.equals(lastDirectoryProblem)) {
                lastDirectoryProblem = problem;
                log.warn("cannot prepare HAMi-core's directories {} and {} (as HAMi, the allocation goes on; mount"
                        + " the host's {} and {} into the agent): {}", cache, lock, config.hamiCore().path("vgpu"),
                        HamiCore.LOCK_DIR, problem);
            }
        }
    }

    private static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        }
    }

    // ---------------------------------------------------------------- helpers

    private static Set<String> uuids(List<ContainerDevice> devices) {
        Set<String> uuids = new LinkedHashSet<>();
        devices.forEach(d -> uuids.add(d.uuid()));
        return uuids;
    }

    private static String key(Pod pod) {
        return pod.getMetadata().getNamespace() + "/" + pod.getMetadata().getName();
    }

    private static String describe(KubernetesClientException e) {
        return (e.getCode() > 0 ? "HTTP " + e.getCode() : "no answer") + ": " + PeerText.bound(e.getMessage());
    }
}
