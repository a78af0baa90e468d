package io.tenantgateway.agent.deviceplugin;

import static java.util.Objects.requireNonNull;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.tenantgateway.agent.health.LockMetrics;
import io.tenantgateway.agent.k8s.EventCorrelator;
import io.tenantgateway.agent.k8s.EventRecorder;
import io.tenantgateway.agent.locks.policy.LockPolicy;
import io.tenantgateway.deviceplugin.AllocationException;
import io.tenantgateway.deviceplugin.Allocator;
import io.tenantgateway.deviceplugin.policy.AllocatePolicy;
import io.tenantgateway.deviceplugin.policy.ContainerAllocation;
import io.tenantgateway.deviceplugin.policy.PreferredAllocationPolicy;
import io.tenantgateway.deviceplugin.policy.VendorAllocation;
import io.tenantgateway.deviceplugin.policy.VirtualDevice;
import io.tenantgateway.hami.Annotations;
import io.tenantgateway.hami.ContainerDevice;
import io.tenantgateway.hami.DeviceAllocationCodec;
import io.tenantgateway.hami.NodeVendor;
import io.tenantgateway.hami.RegisteredDevice;
import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

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
 * <p>The parts: {@link PendingPodFinder} (step 1), {@link AllocateSequence} (steps 2 to 5, deciding then acting),
 * {@link HamiCoreHostFiles} (step 3), {@link NodeLockRelease} (the owner-checked release) and
 * {@link FailureSettlement} (step 6, at once or deferred). This class builds them, holds the decisions lock and
 * answers kubelet.
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
    private static final Logger log = LoggerFactory.getLogger(HamiAllocator.class);

    private final NodeVendor vendor;
    private final String node;
    private final AllocatePolicy policy;
    private final PendingPodFinder finder;
    private final FailureSettlement failures;
    private final AllocateSequence sequence;
    /** One decision at a time: an Allocate call or one attempt of the deferred bookkeeping, of any vendor. */
    private final ReentrantLock decisions;

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
        requireNonNull(client, "client");
        requireNonNull(config, "config");
        this.vendor = requireNonNull(vendor, "vendor");
        requireNonNull(nodeDevices, "nodeDevices");
        this.decisions = requireNonNull(decisions, "decisions");
        requireNonNull(metrics, "metrics");
        requireNonNull(clock, "clock");
        this.node = config.nodeName();
        this.policy = new AllocatePolicy(VendorAllocation.of(vendor, config.hamiCore()), config.hamiCore(), node);
        EventRecorder events = new EventRecorder(client, node, clock, correlator);
        PodPatcher pods = new PodPatcher(client);
        NodeLockRelease locks = new NodeLockRelease(client, node, config.retry(),
                new LockPolicy(LockPolicy.DEFAULT_NODE_LOCK_TIMEOUT, true), metrics, events, clock);
        this.finder = new PendingPodFinder(client, node, config.podFieldSelector());
        this.failures = new FailureSettlement(client, config, finder, pods, locks, events, metrics, decisions, clock);
        this.sequence = new AllocateSequence(policy, vendor, node, config.retry(), nodeDevices, finder, pods,
                new HamiCoreHostFiles(config), failures, locks, events, metrics);
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
        failures.start();
    }

    /** Stops that queue (what is pending is dropped and logged). Idempotent. */
    @Override
    public void close() {
        failures.close();
    }

    /** Pods whose failed allocation waits for the API; for tests and debug pages. */
    public List<String> pendingFailures() {
        return failures.pendingPods();
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
        PendingPodFinder.Found found;
        try {
            found = finder.find();
        } catch (KubernetesClientException e) {
            // Nothing is known about the pod: the failure waits for the API, attributed then by this same rule.
            String why = "cannot find the pod to allocate on node " + node + ": the API answered "
                    + FailureBookkeeping.describe(e);
            failures.beforeThePod(why, deviceIds, e);
            throw new AllocationException(why, e);
        }
        try {
            return sequence.allocate(found, deviceIds);
        } catch (KubernetesClientException e) {
            // A re-read after a conflict failed: the pod is known, its failure is written (or deferred).
            String why = "cannot re-read pod " + PodPatcher.key(found.pod()) + ": " + FailureBookkeeping.describe(e);
            failures.fail(found.pod(), found.byLock(), deviceIds, why);
            throw new AllocationException(why, e);
        }
    }

    // ---------------------------------------------------------------- GetPreferredAllocation

    @Override
    public Optional<List<String>> preferred(int index, List<String> available, List<String> mustInclude, int size) {
        Pod pod;
        try {
            pod = finder.find().pod();
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
        log.debug("preferred allocation pod={} entry={} preferred={}", PodPatcher.key(pod), pendingEntries.get(index),
                preferred);
        return preferred;
    }
}
