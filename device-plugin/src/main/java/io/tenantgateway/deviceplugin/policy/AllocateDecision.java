package io.tenantgateway.deviceplugin.policy;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.common.text.PeerText;
import io.tenantgateway.hami.ContainerDevice;
import java.util.List;

/** What {@link AllocatePolicy} decided for one container's Allocate call. */
public sealed interface AllocateDecision {

    /**
     * Hand the entry at {@code entryIndex} to {@code containerName}.
     *
     * @param remaining the new value of {@code hami.io/vgpu-devices-to-allocate}, with that entry emptied
     * @param last whether no entry is left after this one (the pod's allocation is then complete)
     * @param devices the entry's devices, as the scheduler wrote them
     */
    record Allocate(int entryIndex, String containerName, List<ContainerDevice> devices,
            ContainerAllocation allocation, String remaining, boolean last) implements AllocateDecision {
        public Allocate {
            requireNonNull(containerName, "containerName");
            devices = List.copyOf(requireNonNull(devices, "devices"));
            requireNonNull(allocation, "allocation");
            requireNonNull(remaining, "remaining");
        }
    }

    /**
     * Refuse the call. Both texts may carry what a pod's annotations say: they are escaped and cut at
     * {@link PeerText#TEXT_LIMIT} bytes ({@link PeerText#bound}), so that neither overflows kubelet's status header
     * nor writes a control character into a log line or an Event.
     *
     * @param message HAMi's error text, returned to kubelet as it is ({@code device number not matched})
     * @param detail what exactly did not match, for the Event and the log; {@code ""} when the message says it all
     * @param failPod whether the pod's allocation fails ({@code bind-phase=failed}, lock released): true for every
     *     error once the pod is known, false when the pod was already allocated (nothing of it is touched)
     */
    record Refuse(String message, String detail, boolean failPod) implements AllocateDecision {
        public Refuse {
            message = PeerText.bound(requireNonNull(message, "message"));
            detail = PeerText.bound(requireNonNull(detail, "detail"));
        }

        /** {@code message (detail)}, or the message alone. */
        public String describe() {
            return detail.isEmpty() ? message : message + " (" + detail + ")";
        }
    }
}
