package io.tenantgateway.hami;

import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * HAMi's annotation and label keys, in one place. The strings are wire facts shared with the HAMi
 * scheduler (see shared/spec/hami.md); changing one breaks compatibility.
 */
public final class Annotations {
    /** Node: JSON array of the node's NVIDIA devices, written by the device plugin (or this agent). */
    public static final String NODE_NVIDIA_REGISTER = "hami.io/node-nvidia-register";
    /** Node: {@code Requesting_<ts>} from the scheduler, {@code Reported <ts>} from the plugin. */
    public static final String NODE_HANDSHAKE = "hami.io/node-handshake";
    /** Handshake value prefix written by the device plugin (or this agent): {@code Reported <ts>}. */
    public static final String HANDSHAKE_REPORTED_PREFIX = "Reported ";
    /** Handshake value prefix written by the scheduler: {@code Requesting_<YYYY-MM-DD hh:mm:ss>}. */
    public static final String HANDSHAKE_REQUESTING_PREFIX = "Requesting_";
    /** Node: {@code <RFC3339>,<namespace>,<pod>} while a Bind is in progress on the node. */
    public static final String NODE_LOCK = "hami.io/mutex.lock";
    /** Node: {@code "true"} when the Ascend plugin runs in hami-vnpu-core mode, else {@code "false"} (hami-vendors.md §5). */
    public static final String NODE_HAMI_VNPU_CORE = "hami-vnpu-core";

    /** Pod (annotation and label): node chosen by the scheduler's Filter. */
    public static final String POD_VGPU_NODE = "hami.io/vgpu-node";
    /** Pod: unix seconds of the Filter decision. */
    public static final String POD_VGPU_TIME = "hami.io/vgpu-time";
    /** Pod: devices still to be handed to containers; entries are emptied as they are consumed. */
    public static final String POD_DEVICES_TO_ALLOCATE = "hami.io/vgpu-devices-to-allocate";
    /** Pod: devices assigned by the scheduler; never erased (scheduler accounting). */
    public static final String POD_DEVICES_ALLOCATED = "hami.io/vgpu-devices-allocated";
    /** Pod: {@code allocating} → {@code success} | {@code failed}. */
    public static final String POD_BIND_PHASE = "hami.io/bind-phase";
    /** Pod: unix seconds of the Bind. */
    public static final String POD_BIND_TIME = "hami.io/bind-time";

    public static final String BIND_PHASE_ALLOCATING = "allocating";
    public static final String BIND_PHASE_SUCCESS = "success";
    public static final String BIND_PHASE_FAILED = "failed";

    /** Label on namespaces and pods that the HAMi webhook configuration excludes. */
    public static final String WEBHOOK_IGNORE_LABEL = "hami.io/webhook";

    /**
     * Kubernetes' limit on all annotations of one object together, keys and values ({@code
     * TotalAnnotationSizeLimitB}, 256 KiB): no value a real API server stores is larger, so a larger one is
     * refused before it is decoded ({@link #checkSize}) -- decoding it could take more memory than the agent has.
     */
    public static final int TOTAL_SIZE_LIMIT = 256 * 1024;

    private Annotations() {
    }

    /** Whether {@code value} is larger, in UTF-8, than {@link #TOTAL_SIZE_LIMIT}. */
    public static boolean exceedsSizeLimit(String value) {
        if (value == null || value.length() <= TOTAL_SIZE_LIMIT / 3) {
            return false; // at most 3 bytes a char
        }
        return value.length() > TOTAL_SIZE_LIMIT || value.getBytes(StandardCharsets.UTF_8).length > TOTAL_SIZE_LIMIT;
    }

    /**
     * The refusal of a value larger than the API allows: {@code annotation hami.io/node-nvidia-register: 8388608
     * bytes (expected: at most 262144, Kubernetes' limit on all annotations of an object); not decoded}. Never
     * quotes the value.
     */
    public static String sizeLimitMessage(String key, String value) {
        return "annotation " + key + ": " + value.getBytes(StandardCharsets.UTF_8).length + " bytes (expected: at most "
                + TOTAL_SIZE_LIMIT + ", Kubernetes' limit on all annotations of an object); not decoded";
    }

    /**
     * {@code value}, when it is not larger than the API allows.
     *
     * @throws IllegalArgumentException {@link #sizeLimitMessage} when it is
     */
    public static String checkSize(String key, String value) {
        if (exceedsSizeLimit(value)) {
            throw new IllegalArgumentException(sizeLimitMessage(key, value));
        }
        return value;
    }

    /**
     * The value of {@code key}, or {@code null} when absent. A key holding JSON null counts as absent:
     * fabric8's CRUD mock server keeps {@code "key": null} after a merge patch that deletes it, where a
     * real API server removes the key.
     *
     * @param annotations an object's annotations or labels; may be {@code null}
     */
    public static String get(Map<String, String> annotations, String key) {
        return annotations == null ? null : annotations.get(key);
    }
}
