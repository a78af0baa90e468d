package io.tenantgateway.agent.devices;

import io.tenantgateway.hami.GpuDevice;
import java.util.List;

/**
 * Where the GPUs to register come from. Implementations may block (process exec, file reads):
 * call {@link #discover()} only from a thread that is allowed to block, never an event loop.
 */
public interface DeviceSource {

    /** Short name for logs and the debug snapshot: {@code mock}, {@code nvidia-smi}. */
    String kind();

    /**
     * The node's GPUs, ordered by index. Never empty: no GPU at all is reported as a
     * {@link DeviceDiscoveryException} with {@link FailureReason#NO_DEVICES}, so that nothing
     * registers an empty device list by accident.
     */
    List<GpuDevice> discover() throws DeviceDiscoveryException;
}
