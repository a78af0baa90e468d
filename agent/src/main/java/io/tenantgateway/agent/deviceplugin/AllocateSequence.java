package io.tenantgateway.agent.deviceplugin;

import static java.util.Objects.requireNonNull;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.tenantgateway.agent.health.LockMetrics;
import io.tenantgateway.agent.k8s.EventRecorder;
import io.tenantgateway.agent.locks.policy.ReleaseReason;
import io.tenantgateway.common.retry.Backoff;
import io.tenantgateway.common.text.PeerText;
import io.tenantgateway.deviceplugin.AllocationException;
import io.tenantgateway.deviceplugin.policy.AllocateDecision;
import io.tenantgateway.deviceplugin.policy.AllocatePolicy;
import io.tenantgateway.deviceplugin.policy.ContainerAllocation;
import io.tenantgateway.deviceplugin.policy.PodView;
import io.tenantgateway.hami.Annotations;
import io.tenantgateway.hami.ContainerDevice;
import io.tenantgateway.hami.DeviceAllocationCodec;
import io.tenantgateway.hami.NodeVendor;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Allocate's decide-then-act sequence for a pod step 1 found: {@link AllocatePolicy} decides (the next entry of the
 * vendor's to-allocate key, its container, the vendor's answer); then HAMi-core's host directories (NVIDIA), the
 * entry erased by a compare-and-swap merge patch (a conflict re-reads and decides again), and — when no entry is
 * left in any vendor's key — {@code bind-phase=success}, the {@code GPUAllocated} Event and the node lock released.
 * A refusal that fails the pod, or a write the API refuses, goes to {@link FailureSettlement}.
 *
 * <p>Blocks on API calls; the allocator calls it under its decisions lock.
 */
final class AllocateSequence {
    /** The allocator's log category, as before this part was split out of it. */
    private static final Logger log = LoggerFactory.getLogger(HamiAllocator.class);

    private final AllocatePolicy policy;
    private final NodeVendor vendor;
    private final String node;
    private final Backoff retry;
    private final Supplier<Map<String, Long>> nodeDevices;
    private final PendingPodFinder finder;
    private final PodPatcher pods;
    private final HamiCoreHostFiles hostFiles;
    private final FailureSettlement failures;
    private final NodeLockRelease locks;
    private final EventRecorder events;
    private final LockMetrics metrics;

    /**
     * @param retry how often a conflict on the erase is re-read and decided again ({@link AllocatorConfig#retry()})
     * @param nodeDevices the devices the vendor's plugin lists: ID → position in its register annotation
     */
    AllocateSequence(AllocatePolicy policy, NodeVendor vendor, String node, Backoff retry,
            Supplier<Map<String, Long>> nodeDevices, PendingPodFinder finder, PodPatcher pods,
            HamiCoreHostFiles hostFiles, FailureSettlement failures, NodeLockRelease locks, EventRecorder events,
            LockMetrics metrics) {
        this.policy = requireNonNull(policy, "policy");
        this.vendor = requireNonNull(vendor, "vendor");
        this.node = requireNonNull(node, "node");
        this.retry = requireNonNull(retry, "retry");
        this.nodeDevices = requireNonNull(nodeDevices, "nodeDevices");
        this.finder = requireNonNull(finder, "finder");
        this.pods = requireNonNull(pods, "pods");
        this.hostFiles = requireNonNull(hostFiles, "hostFiles");
        this.failures = requireNonNull(failures, "failures");
        this.locks = requireNonNull(locks, "locks");
        this.events = requireNonNull(events, "events");
        this.metrics = requireNonNull(metrics, "metrics");
    }

    /**
     * Decides for the container kubelet asks about and acts on it.
     *
     * @throws AllocationException the refusal or the API's error kubelet gets (the pod's failure already settled)
     * @throws KubernetesClientException when a re-read after a conflict fails (the caller settles the failure)
     */
    ContainerAllocation allocate(PendingPodFinder.Found found, List<String> deviceIds) throws AllocationException {
        Pod pod = found.pod();
        for (int attempt = 1; ; attempt++) {
            PodView view = PendingPodFinder.view(pod);
            boolean hamiCore = policy.vendor().hamiCoreHost();
            AllocateDecision decision = policy.decide(view, deviceIds, nodeDevices.get(),
                    hamiCore ? hostFiles.libraryFile() : "", hamiCore ? UUID.randomUUID().toString() : "");
            if (decision instanceof AllocateDecision.Refuse refuse) {
                if (refuse.failPod()) {
                    failures.fail(pod, found.byLock(), deviceIds, refuse.describe());
                } else {
                    log.info("Allocate refused, pod left as it is pod={} node={} devices={}: {}", view.key(), node,
                            deviceIds, refuse.describe());
                }
                throw new AllocationException(refuse.message());
            }
            AllocateDecision.Allocate allocate = (AllocateDecision.Allocate) decision;
            if (hamiCore) {
                hostFiles.prepare(policy.containerCacheDirectory(view, allocate.containerName()));
            }
            Pod erased;
            try {
                erased = pods.patch(pod, Map.of(policy.vendor().toAllocateKey(), allocate.remaining()));
            } catch (KubernetesClientException e) {
                if (e.getCode() == 409 && retry.hasNext(attempt)) {
                    log.debug("conflict erasing the entry of pod={}, re-reading (attempt {})", view.key(), attempt);
                    pod = finder.reread(pod);
                    continue;
                }
                String why = "cannot erase the entry of container " + allocate.containerName() + ": "
                        + ApiErrors.describe(e);
                failures.fail(pod, found.byLock(), deviceIds, why);
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
     * On what the API answered to the erase: when no entry is left in any vendor's key, success, Event, lock release.
     * The erase was a compare-and-swap and every allocator holds the same decisions lock, so exactly one call of all
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
            done = pods.patch(erased, Map.of(Annotations.POD_BIND_PHASE, Annotations.BIND_PHASE_SUCCESS));
        } catch (KubernetesClientException e) {
            String why = "cannot set " + Annotations.POD_BIND_PHASE + "=success: " + ApiErrors.describe(e);
            failures.fail(erased, byLock, deviceIds, why);
            throw new AllocationException(why, e);
        }
        String message = "allocated devices " + allocatedDevices(annotations) + " on node " + node;
        metrics.allocation(LockMetrics.Allocation.SUCCESS);
        log.info("allocation completed pod={} node={}: {}", PodPatcher.key(done), node, message);
        events.record(done, EventRecorder.NORMAL, HamiAllocator.REASON_ALLOCATED, message);
        locks.release(done, ReleaseReason.ALLOCATED); // what is left, the lock controller's reaper releases
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

    static Set<String> uuids(List<ContainerDevice> devices) {
        Set<String> uuids = new LinkedHashSet<>();
        devices.forEach(d -> uuids.add(d.uuid()));
        return uuids;
    }
}
