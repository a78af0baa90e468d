package io.tenantgateway.agent.devices;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.hami.GpuDevice;
import java.util.List;

/**
 * A device source whose every discovery is also told to an observer (the device plugin, which lists the same GPUs
 * to kubelet and turns them Unhealthy when discovery fails), so that the annotation and kubelet see one inventory.
 * Threading: {@link #discover()} runs on the caller's (the registrar's) thread and calls the observer there.
 */
public final class ObservedDeviceSource implements DeviceSource {
    /** Told about each discovery; must not block for long. */
    public interface Observer {
        void discovered(List<GpuDevice> devices);

        void failed(String reason);
    }

    private final DeviceSource delegate;
    private final Observer observer;

    public ObservedDeviceSource(DeviceSource delegate, Observer observer) {
        this.delegate = requireNonNull(delegate, "delegate");
        this.observer = requireNonNull(observer, "observer");
    }

    @Override
    public String kind() {
        return delegate.kind();
    }

    @Override
    public List<GpuDevice> discover() throws DeviceDiscoveryException {
        List<GpuDevice> devices;
        try {
            devices = delegate.discover();
        } catch (DeviceDiscoveryException e) {
            observer.failed(e.reason().label() + ": " + e.getMessage());
            throw e;
        }
        observer.discovered(devices);
        return devices;
    }
}
