package io.tenantgateway.deviceplugin.policy;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.common.text.PeerText;
import io.tenantgateway.hami.Annotations;
import io.tenantgateway.hami.MalformedNodeLockException;
import io.tenantgateway.hami.NodeLock;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * HAMi's {@code GetPendingPod} (shared/spec/device-plugin.md §2 step 1), with the safer rule of HAMi PR #3095: the
 * pod named by the node lock {@code hami.io/mutex.lock} is the one being allocated — a Bind holds the lock until
 * its allocation is done, so no other pod on the node can be. Only without a lock naming a pod is the pending pod
 * looked for: Pending, {@code hami.io/bind-time} set, {@code hami.io/bind-phase} allocating or success,
 * {@code hami.io/vgpu-node} this node. Pure.
 */
public final class PendingPodPolicy {
    private final String nodeName;

    public PendingPodPolicy(String nodeName) {
        this.nodeName = requireNonNull(nodeName, "nodeName");
    }

    /** HAMi's error text when no pod is found, returned to kubelet. */
    public String noBindingPod() {
        return "no binding pod found on node " + nodeName;
    }

    /**
     * @param lockValue the node's {@code hami.io/mutex.lock}, {@code null} when absent
     */
    public PodChoice fromLock(String lockValue) {
        if (lockValue == null) {
            return new PodChoice.Search();
        }
        NodeLock lock;
        try {
            lock = NodeLock.parse(lockValue);
        } catch (MalformedNodeLockException e) {
            return new PodChoice.Refuse(PeerText.bound(e.getMessage(), PeerText.VALUE_LIMIT) + ": "
                    + Annotations.NODE_LOCK + " " + PeerText.quote(lockValue) + " on node " + nodeName);
        }
        // A legacy lock (bare time) names nobody: look for the pending pod as HAMi does.
        return lock.hasHolder() ? new PodChoice.ByLock(lock.namespace(), lock.podName()) : new PodChoice.Search();
    }

    /**
     * Checks the pod the lock named: it must be meant for this node and already bound to it — HAMi's Bind takes the
     * lock before it binds, and kubelet calls Allocate only for pods bound to it, so a holder not bound yet means this
     * call is for some other pod (one that skipped the scheduler, HAMi #710), which must not get the holder's
     * devices. {@code null} when the holder is this call's pod, else why not (nothing is written then).
     */
    public String checkLockHolder(PodView pod) {
        requireNonNull(pod, "pod");
        String assigned = pod.annotation(Annotations.POD_VGPU_NODE);
        if (!nodeName.equals(assigned)) {
            return "pod " + pod.key() + " named by " + Annotations.NODE_LOCK + " is not assigned to node " + nodeName
                    + " (" + Annotations.POD_VGPU_NODE + ": "
                    + PeerText.bound(String.valueOf(assigned), PeerText.VALUE_LIMIT) + ")";
        }
        if (!nodeName.equals(pod.nodeName())) {
            return "pod " + pod.key() + " named by " + Annotations.NODE_LOCK + " is not bound to node " + nodeName
                    + " yet (its Bind is in progress): this Allocate is for another pod";
        }
        return null;
    }

    /** The fallback: the pending pod on this node with the oldest Bind (then by name, for a stable answer). */
    public Optional<PodView> pick(List<PodView> pods) {
        requireNonNull(pods, "pods");
        return pods.stream().filter(this::isPending)
                .min(Comparator.comparingLong(PendingPodPolicy::bindTime).thenComparing(PodView::key));
    }

    private boolean isPending(PodView pod) {
        String phase = pod.annotation(Annotations.POD_BIND_PHASE);
        return "Pending".equals(pod.phase()) && pod.annotation(Annotations.POD_BIND_TIME) != null
                && (Annotations.BIND_PHASE_ALLOCATING.equals(phase) || Annotations.BIND_PHASE_SUCCESS.equals(phase))
                && nodeName.equals(pod.annotation(Annotations.POD_VGPU_NODE))
                && (pod.nodeName() == null || nodeName.equals(pod.nodeName()));
    }

    private static long bindTime(PodView pod) {
        try {
            return Long.parseLong(pod.annotation(Annotations.POD_BIND_TIME).strip());
        } catch (NumberFormatException e) {
            return Long.MAX_VALUE;
        }
    }
}
