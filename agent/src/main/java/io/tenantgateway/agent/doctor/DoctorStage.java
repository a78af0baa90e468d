package io.tenantgateway.agent.doctor;

/**
 * Where in {@code doctor}'s checklist a part's checks go. The checklist follows the order the agent uses things, and
 * a part's checks sit in the stage whose inputs they need; within a stage, the parts' checks follow the list of
 * parts.
 */
public enum DoctorStage {
    /** After the tunnel's files (CA, client certificate, token), before the network: the part's own files. */
    FILES,
    /** After the Kubernetes API check ({@link DoctorContext#apiOk()}): what the part reads through the API. */
    API,
    /** After that: this node's devices, as the part discovers them; then this node's HAMi registrations. */
    DEVICES,
    /** Last: kubelet's side of this node (its device plugin directory and sockets). */
    KUBELET
}
