package io.tenantgateway.tools.hamisim;

import static java.util.Objects.requireNonNull;

import io.fabric8.kubernetes.api.model.BindingBuilder;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.tenantgateway.agent.k8s.MergePatch;
import io.tenantgateway.hami.Annotations;
import io.tenantgateway.hami.AscendRuntimeInfo;
import io.tenantgateway.hami.ContainerDevice;
import io.tenantgateway.hami.DeviceAllocationCodec;
import io.tenantgateway.hami.MalformedNodeLockException;
import io.tenantgateway.hami.NodeLock;
import io.tenantgateway.hami.NodeVendor;
import io.tenantgateway.webhook.policy.AscendChip;
import io.tenantgateway.webhook.policy.AscendVendor;
import io.tenantgateway.webhook.policy.DeviceConfig;
import io.tenantgateway.common.retry.Backoff;
import io.tenantgateway.common.time.GoDuration;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A SIMULATOR of the HAMi scheduler extender's API writes for Filter and Bind, for tests and the
 * embedded lab: the same keys, values, patch types and node-lock protocol as HAMi v2.9/v2.10
 * (shared/spec/hami.md; NVIDIA, Hygon DCU and Ascend: device-plugin/VENDOR-PLUGINS.md §1.7, §5.4), without any
 * placement logic — the caller says which node and, per vendor, which devices.
 *
 * <p>Bind, as HAMi does it: take the node lock ({@code <RFC3339>,<ns>,<pod>} by a JSON merge patch
 * carrying the node's resourceVersion, retried with HAMi's backoff after re-reading; a lock older
 * than the timeout or whose pod no longer exists is taken over; otherwise refuse with
 * {@code "node <n> has been locked within 5m0s: node lock contention"}), then write
 * {@code bind-phase=allocating} and {@code bind-time}, then bind. A failed bind releases the
 * pod's own lock (owner-checked). Releases are merge patches setting the key to null.
 *
 * <p>One lock per pod, whatever it asks for. HAMi's Bind calls every vendor's {@code LockNode} in turn, all on the
 * same {@code hami.io/mutex.lock}, which made pods asking for two vendors contend with themselves (HAMi #2255); and
 * Hygon and Ascend lock only when a regular container asks for them, so a pod whose only device container is an
 * init container bound without the lock (#2640, #2795). Here Bind takes the lock once for any pod it binds, and the
 * device plugin releases it after the last entry of every vendor's key, as for any other pod.
 *
 * <p>Calls block the caller (like HAMi's synchronous extender): never call them on an event loop.
 */
public final class HamiSchedulerSimulator {
    /** How the binding is written. */
    public enum BindMethod {
        /** {@code POST …/bindings}, what kube-scheduler and HAMi do against a real API server. */
        BINDING_SUBRESOURCE,
        /**
         * A merge patch of {@code spec.nodeName}: fabric8's CRUD mock server stores a Binding as a
         * plain object and never updates the pod, so the lab and tests bind this way.
         */
        PATCH_NODE_NAME
    }

    private static final Logger log = LoggerFactory.getLogger(HamiSchedulerSimulator.class);
    /** Ascend's Filter time stamp (unix seconds), next to {@code hami.io/vgpu-time}. */
    public static final String PREDICATE_TIME = "predicate-time";
    /** {@code huawei.com/<CW>}: what Ascend's device plugin reads to answer Allocate ({@link AscendRuntimeInfo}). */
    public static final String ASCEND_RUNTIME_INFO_PREFIX = "huawei.com/";
    /** The pod annotation that selects Ascend's soft split ({@code hami-core}) over templates. */
    public static final String VNPU_MODE = AscendVendor.VNPU_MODE_ANNOTATION;
    /** {@link #VNPU_MODE}'s value for the soft split. */
    public static final String VNPU_MODE_HAMI_CORE = "hami-core";

    private final KubernetesClient client;
    private final Clock clock;
    private final Duration nodeLockTimeout;
    private final BindMethod bindMethod;
    private final Backoff backoff;
    private final List<AscendChip> ascendChips;

    /**
     * A simulator with HAMi's chart's Ascend chips ({@link DeviceConfig#defaults()}).
     *
     * @param nodeLockTimeout the scheduler's lock expiry (HAMi default 5 minutes)
     * @param backoff retries of lock writes (HAMi: {@link Backoff#HAMI_DEFAULT})
     */
    public HamiSchedulerSimulator(KubernetesClient client, Clock clock, Duration nodeLockTimeout,
            BindMethod bindMethod, Backoff backoff) {
        this(client, clock, nodeLockTimeout, bindMethod, backoff, DeviceConfig.defaults().vnpus());
    }

    /** @param ascendChips the device configuration's {@code vnpus}: each chip's templates name {@code temp} */
    public HamiSchedulerSimulator(KubernetesClient client, Clock clock, Duration nodeLockTimeout,
            BindMethod bindMethod, Backoff backoff, List<AscendChip> ascendChips) {
        this.ascendChips = List.copyOf(requireNonNull(ascendChips, "ascendChips"));
        this.client = requireNonNull(client, "client");
        this.clock = requireNonNull(clock, "clock");
        this.nodeLockTimeout = requireNonNull(nodeLockTimeout, "nodeLockTimeout");
        this.bindMethod = requireNonNull(bindMethod, "bindMethod");
        this.backoff = requireNonNull(backoff, "backoff");
    }

    /**
     * Filter's writes for the chosen node, NVIDIA only: annotations {@code hami.io/vgpu-node},
     * {@code hami.io/vgpu-time}, {@code …-to-allocate} and {@code …-allocated} (same string), and
     * the {@code hami.io/vgpu-node} label; a JSON merge patch without resourceVersion, as HAMi sends.
     *
     * @param devices one entry per container, init containers first
     */
    public void filter(String namespace, String podName, String nodeName, List<List<ContainerDevice>> devices) {
        filter(namespace, podName, nodeName, Map.of(NodeVendor.NVIDIA, devices));
    }

    /**
     * Filter's writes for the chosen node, every vendor the pod asks for, in one JSON merge patch without
     * resourceVersion (HAMi's {@code PatchPodAnnotations}): {@code hami.io/vgpu-node} (annotation and label) and
     * {@code hami.io/vgpu-time}, then per vendor, in {@code byVendor}'s order, its {@code …-devices-to-allocate} and
     * {@code …-devices-allocated} (the same string: {@code <uuid>,<word>,<memreq>,<cores>:} per device, {@code ;} per
     * container, empty entries kept); for an Ascend chip also {@code predicate-time} (unix seconds) and
     * {@code huawei.com/<CW>}, a JSON list {@code [{"UUID","temp","memory","core"}]} of every device across the
     * containers, each key omitted when empty or 0, {@code temp} being the chip's template for the device's memory
     * ({@link AscendTemplates#trim}; none for a whole card, nor in {@code hami-core} mode, read from the pod's
     * {@code huawei.com/vnpu-mode}). Hygon writes nothing vendor-specific.
     *
     * <p>Not reproduced: v2.10 gives every device type the NODE has one (empty) entry per container, so on a node with
     * Ascend chips an NVIDIA-only pod also gets that chip's keys with empty entries and {@code huawei.com/<CW>:
     * null}; here a vendor gets keys only when it is in {@code byVendor}.
     *
     * @param byVendor per vendor the pod asks for, one entry per container (init containers first; the same number
     *     for every vendor)
     * @throws IllegalArgumentException when the entry counts differ, or an Ascend chip is not in the device
     *     configuration's {@code vnpus}
     */
    public void filter(String namespace, String podName, String nodeName,
            Map<NodeVendor, List<List<ContainerDevice>>> byVendor) {
        requireNonNull(byVendor, "byVendor");
        if (byVendor.values().stream().map(List::size).distinct().count() > 1) {
            throw new IllegalArgumentException("byVendor: " + byVendor.keySet().stream().map(v -> v.displayName()
                    + " " + byVendor.get(v).size()).toList()
                    + " entries (expected: one per container for every vendor)");
        }
        Map<NodeVendor, AscendChip> chips = new LinkedHashMap<>();
        for (NodeVendor vendor : byVendor.keySet()) {
            if (vendor.kind() == NodeVendor.Kind.ASCEND) {
                chips.put(vendor, AscendTemplates.chip(ascendChips, vendor.commonWord()).orElseThrow(() ->
                        new IllegalArgumentException("byVendor: " + vendor.commonWord() + " (expected: an Ascend chip "
                                + "of the device configuration: " + ascendChips.stream().map(AscendChip::commonWord)
                                .toList() + ")")));
            }
        }
        long now = clock.instant().getEpochSecond();
        Map<String, String> annotations = new LinkedHashMap<>();
        annotations.put(Annotations.POD_VGPU_NODE, nodeName);
        annotations.put(Annotations.POD_VGPU_TIME, Long.toString(now));
        String vnpuMode = null;
        for (Map.Entry<NodeVendor, List<List<ContainerDevice>>> vendor : byVendor.entrySet()) {
            String encoded = DeviceAllocationCodec.encode(vendor.getValue());
            annotations.put(vendor.getKey().toAllocateKey(), encoded);
            annotations.put(vendor.getKey().allocatedKey(), encoded);
            if (vendor.getKey().kind() == NodeVendor.Kind.ASCEND) {
                if (vnpuMode == null) {
                    vnpuMode = vnpuMode(namespace, podName);
                }
                annotations.put(PREDICATE_TIME, Long.toString(now));
                annotations.put(AscendRuntimeInfo.annotationKey(vendor.getKey().commonWord()), ascendRuntimeInfo(
                        chips.get(vendor.getKey()), vendor.getValue(), VNPU_MODE_HAMI_CORE.equals(vnpuMode)));
            }
        }
        client.pods().inNamespace(namespace).withName(podName).patch(PatchContext.of(PatchType.JSON_MERGE),
                MergePatch.metadata(null, annotations, Map.of(Annotations.POD_VGPU_NODE, nodeName)));
        log.info("simulated filter pod={}/{} node={} devices={}", namespace, podName, nodeName,
                byVendor.size() == 1 && byVendor.containsKey(NodeVendor.NVIDIA)
                        ? annotations.get(Annotations.POD_DEVICES_TO_ALLOCATE) : describe(byVendor));
    }

    /**
     * HAMi's {@code RuntimeInfo} list: one object per device, every container's, in entry order, written by
     * {@link AscendRuntimeInfo#encode} (zero fields left out).
     */
    private static String ascendRuntimeInfo(AscendChip chip, List<List<ContainerDevice>> entries, boolean hamiCore) {
        List<AscendRuntimeInfo> infos = new ArrayList<>();
        for (List<ContainerDevice> entry : entries) {
            for (ContainerDevice device : entry) {
                String temp = hamiCore ? "" : AscendTemplates.trim(chip, device.memoryMiB()).template();
                infos.add(new AscendRuntimeInfo(device.uuid(), temp, device.memoryMiB(), (long) device.cores()));
            }
        }
        // Go marshals a nil slice as null: a chip's key with only empty entries.
        return infos.isEmpty() ? "null" : AscendRuntimeInfo.encode(infos);
    }

    private String vnpuMode(String namespace, String podName) {
        Pod pod = client.pods().inNamespace(namespace).withName(podName).get();
        if (pod == null) {
            throw new KubernetesClientException("pods \"" + podName + "\" not found");
        }
        return Annotations.get(pod.getMetadata().getAnnotations(), VNPU_MODE);
    }

    private static String describe(Map<NodeVendor, List<List<ContainerDevice>>> byVendor) {
        StringBuilder out = new StringBuilder();
        byVendor.forEach((vendor, entries) -> out.append(out.isEmpty() ? "" : " ").append(vendor.displayName())
                .append('=').append(DeviceAllocationCodec.encode(entries)));
        return out.toString();
    }

    /**
     * Bind: lock the node (once, however many vendors and whichever containers the pod's devices are for), mark the
     * pod allocating, bind; see the class comment. Never throws for a refusal.
     */
    public BindResult bind(String namespace, String podName, String nodeName) {
        Pod pod = client.pods().inNamespace(namespace).withName(podName).get();
        if (pod == null) {
            return BindResult.refused("pods \"" + podName + "\" not found");
        }
        try {
            String lockError = lockNode(nodeName, pod);
            if (lockError != null) {
                releaseNodeLock(nodeName, pod, false); // HAMi's ReleaseNodeLocks path: owner-checked
                log.info("simulated bind refused pod={}/{} node={}: {}", namespace, podName, nodeName, lockError);
                return BindResult.refused(lockError);
            }
            Map<String, String> annotations = new LinkedHashMap<>();
            annotations.put(Annotations.POD_BIND_PHASE, Annotations.BIND_PHASE_ALLOCATING);
            annotations.put(Annotations.POD_BIND_TIME, Long.toString(clock.instant().getEpochSecond()));
            client.pods().inNamespace(namespace).withName(podName).patch(PatchContext.of(PatchType.JSON_MERGE),
                    MergePatch.metadata(null, annotations, Map.of()));
            try {
                writeBinding(namespace, podName, nodeName);
            } catch (KubernetesClientException e) {
                releaseNodeLock(nodeName, pod, false);
                return BindResult.refused(e.getMessage());
            }
        } catch (KubernetesClientException e) {
            return BindResult.refused(e.getMessage());
        }
        log.info("simulated bind pod={}/{} node={}", namespace, podName, nodeName);
        return BindResult.ok();
    }

    private void writeBinding(String namespace, String podName, String nodeName) {
        if (bindMethod == BindMethod.BINDING_SUBRESOURCE) {
            client.resource(new BindingBuilder()
                    .withNewMetadata().withName(podName).withNamespace(namespace).endMetadata()
                    .withNewTarget().withKind("Node").withName(nodeName).endTarget()
                    .build()).inNamespace(namespace).create();
        } else {
            client.pods().inNamespace(namespace).withName(podName).patch(PatchContext.of(PatchType.JSON_MERGE),
                    "{\"spec\":{\"nodeName\":" + MergePatch.quote(nodeName) + "}}");
        }
    }

    /** HAMi's {@code nodelock.LockNode}; returns the refusal text, or {@code null} when the lock is ours. */
    private String lockNode(String nodeName, Pod pod) {
        Node node = getNode(nodeName);
        String value = lockValue(node);
        if (value == null) {
            return setNodeLock(nodeName, pod);
        }
        NodeLock lock;
        try {
            lock = NodeLock.parse(value);
        } catch (MalformedNodeLockException e) {
            return e.getMessage();
        }
        boolean takeOver = false;
        Instant now = clock.instant();
        if (Duration.between(lock.lockedAt(), now).compareTo(nodeLockTimeout) > 0) {
            log.info("simulated scheduler: node lock expired node={} lockTime={}", nodeName, lock.lockedAt());
            takeOver = true;
        } else if (lock.hasHolder() && !lock.isHeldBy(pod.getMetadata().getNamespace(), pod.getMetadata().getName())) {
            if (client.pods().inNamespace(lock.namespace()).withName(lock.podName()).get() == null) {
                log.info("simulated scheduler: previous pod of node lock not found node={} holder={}", nodeName, lock.holder());
                takeOver = true;
            }
        }
        if (takeOver) {
            String error = releaseNodeLock(nodeName, pod, true);
            return error != null ? error : setNodeLock(nodeName, pod);
        }
        return "node " + nodeName + " has been locked within " + GoDuration.format(nodeLockTimeout)
                + ": node lock contention";
    }

    /** HAMi's {@code SetNodeLock}: refuse if set, then a CAS merge patch retried after re-reading. */
    private String setNodeLock(String nodeName, Pod pod) {
        if (lockValue(getNode(nodeName)) != null) {
            return "node " + nodeName + " is locked";
        }
        String value = NodeLock.heldBy(clock.instant(), pod.getMetadata().getNamespace(), pod.getMetadata().getName())
                .encode();
        return retrying("set node lock", nodeName, () -> {
            Node node = getNode(nodeName);
            if (lockValue(node) != null) {
                // HAMi re-patches blindly here; checking again keeps a racing lock intact.
                throw new LockTakenException("node " + nodeName + " is locked");
            }
            client.nodes().resource(node).patch(PatchContext.of(PatchType.JSON_MERGE),
                    MergePatch.annotations(node.getMetadata().getResourceVersion(), Map.of(Annotations.NODE_LOCK, value)));
        });
    }

    /** HAMi's {@code ReleaseNodeLock}: owner-checked unless {@code skipOwnerCheck}; merge patch to null. */
    private String releaseNodeLock(String nodeName, Pod pod, boolean skipOwnerCheck) {
        String value = lockValue(getNode(nodeName));
        if (value == null) {
            return null;
        }
        String suffix = "," + pod.getMetadata().getNamespace() + "," + pod.getMetadata().getName();
        if (!skipOwnerCheck && !value.endsWith(suffix)) {
            log.info("simulated scheduler: node lock is not set by this pod node={} lock={} pod={}/{}",
                    nodeName, value, pod.getMetadata().getNamespace(), pod.getMetadata().getName());
            return null;
        }
        return retrying("release node lock", nodeName, () -> {
            Node node = getNode(nodeName);
            client.nodes().resource(node).patch(PatchContext.of(PatchType.JSON_MERGE),
                    MergePatch.annotations(node.getMetadata().getResourceVersion(),
                            Collections.singletonMap(Annotations.NODE_LOCK, null)));
        });
    }

    private String retrying(String what, String nodeName, Runnable write) {
        for (int attempt = 1; ; attempt++) {
            try {
                write.run();
                return null;
            } catch (LockTakenException e) {
                return e.getMessage();
            } catch (KubernetesClientException e) {
                if (!backoff.hasNext(attempt)) {
                    return "failed to " + what + " (node=" + nodeName + ", attempts=" + attempt + "): " + e.getMessage();
                }
                log.debug("simulated scheduler: {} failed node={} attempt={} code={}", what, nodeName, attempt, e.getCode());
                pause(backoff.delayAfter(attempt, ThreadLocalRandom.current().nextDouble()));
            }
        }
    }

    /**
     * HAMi sleeps between lock-write attempts inside its synchronous Bind; the simulator does the
     * same on the caller's thread (never an event loop), so the caller sees Bind's real latency.
     */
    private static void pause(Duration delay) {
        try {
            Thread.sleep(delay.toMillis(), (int) (delay.toNanos() % 1_000_000));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new KubernetesClientException("interrupted while retrying a node lock write");
        }
    }

    private Node getNode(String nodeName) {
        Node node = client.nodes().withName(nodeName).get();
        if (node == null) {
            throw new KubernetesClientException("nodes \"" + nodeName + "\" not found");
        }
        return node;
    }

    private static String lockValue(Node node) {
        return Annotations.get(node.getMetadata().getAnnotations(), Annotations.NODE_LOCK);
    }

    /** The lock was taken by someone else between the check and the write. */
    private static final class LockTakenException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        LockTakenException(String message) {
            super(message);
        }
    }
}
