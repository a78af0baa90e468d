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
import io.tenantgateway.hami.ContainerDevice;
import io.tenantgateway.hami.DeviceAllocationCodec;
import io.tenantgateway.hami.MalformedNodeLockException;
import io.tenantgateway.hami.NodeLock;
import io.tenantgateway.common.retry.Backoff;
import io.tenantgateway.common.time.GoDuration;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
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
 * (shared/spec/hami.md), without any placement logic — the caller says which node and devices.
 *
 * <p>Bind, as HAMi does it: take the node lock ({@code <RFC3339>,<ns>,<pod>} by a JSON merge patch
 * carrying the node's resourceVersion, retried with HAMi's backoff after re-reading; a lock older
 * than the timeout or whose pod no longer exists is taken over; otherwise refuse with
 * {@code "node <n> has been locked within 5m0s: node lock contention"}), then write
 * {@code bind-phase=allocating} and {@code bind-time}, then bind. A failed bind releases the
 * pod's own lock (owner-checked). Releases are merge patches setting the key to null.
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

    private final KubernetesClient client;
    private final Clock clock;
    private final Duration nodeLockTimeout;
    private final BindMethod bindMethod;
    private final Backoff backoff;

    /**
     * @param nodeLockTimeout the scheduler's lock expiry (HAMi default 5 minutes)
     * @param backoff retries of lock writes (HAMi: {@link Backoff#HAMI_DEFAULT})
     */
    public HamiSchedulerSimulator(KubernetesClient client, Clock clock, Duration nodeLockTimeout,
            BindMethod bindMethod, Backoff backoff) {
        this.client = requireNonNull(client, "client");
        this.clock = requireNonNull(clock, "clock");
        this.nodeLockTimeout = requireNonNull(nodeLockTimeout, "nodeLockTimeout");
        this.bindMethod = requireNonNull(bindMethod, "bindMethod");
        this.backoff = requireNonNull(backoff, "backoff");
    }

    /**
     * Filter's writes for the chosen node: annotations {@code hami.io/vgpu-node},
     * {@code hami.io/vgpu-time}, {@code …-to-allocate} and {@code …-allocated} (same string), and
     * the {@code hami.io/vgpu-node} label; a JSON merge patch without resourceVersion, as HAMi sends.
     *
     * @param devices one entry per container, init containers first
     */
    public void filter(String namespace, String podName, String nodeName, List<List<ContainerDevice>> devices) {
        String encoded = DeviceAllocationCodec.encode(devices);
        Map<String, String> annotations = new LinkedHashMap<>();
        annotations.put(Annotations.POD_VGPU_NODE, nodeName);
        annotations.put(Annotations.POD_VGPU_TIME, Long.toString(clock.instant().getEpochSecond()));
        annotations.put(Annotations.POD_DEVICES_TO_ALLOCATE, encoded);
        annotations.put(Annotations.POD_DEVICES_ALLOCATED, encoded);
        client.pods().inNamespace(namespace).withName(podName).patch(PatchContext.of(PatchType.JSON_MERGE),
                MergePatch.metadata(null, annotations, Map.of(Annotations.POD_VGPU_NODE, nodeName)));
        log.info("simulated filter pod={}/{} node={} devices={}", namespace, podName, nodeName, encoded);
    }

    /** Bind: lock the node, mark the pod allocating, bind; see the class comment. Never throws for a refusal. */
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
