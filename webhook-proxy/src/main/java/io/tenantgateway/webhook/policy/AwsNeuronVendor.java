package io.tenantgateway.webhook.policy;

import java.util.Optional;

/**
 * HAMi v2.10's AWS Neuron backend (spec §3.8): validates device or core counts, no mutation. Cores per device come
 * from the first Neuron node the scheduler registered (capped at 2; 2 before any); here from
 * {@link ClusterDeviceState#neuronCoresPerDevice()}.
 */
public final class AwsNeuronVendor implements Vendor {
    static final long MAX_DEVICES = 2147483647L;
    static final long MAX_CORES = 4294967294L;

    private final String countName;
    private final String coreName;
    private final long coresPerDevice;

    public AwsNeuronVendor(VendorBlock block, long coresPerDevice) {
        this.countName = block.name("resourceCountName");
        this.coreName = block.name("resourceCoreName");
        this.coresPerDevice = Math.max(1, Math.min(2, coresPerDevice));
    }

    @Override
    public String name() {
        return "AWSNeuron";
    }

    @Override
    public boolean mutate(ContainerNode container, PodNode pod) {
        return split(container) != DeviceRequest.NONE;
    }

    /**
     * HAMi's validation and request in one: a device count takes the cores of whole devices; a core count splits
     * into devices (one device up to the cores per device); {@link DeviceRequest#NONE} when the container names
     * neither.
     *
     * @throws VendorException HAMi's error for an invalid count
     */
    private DeviceRequest split(ContainerNode container) {
        Optional<Quantity> count = container.limitOrRequest(countName);
        if (count.isPresent()) {
            return new DeviceRequest(checked(countName, count.get(), MAX_DEVICES), 0, coresPerDevice);
        }
        Optional<Quantity> cores = container.limitOrRequest(coreName);
        if (cores.isEmpty()) {
            return DeviceRequest.NONE;
        }
        long n = checked(coreName, cores.get(), MAX_CORES);
        if (n <= coresPerDevice) {
            return new DeviceRequest(1, 0, n);
        }
        if (n % coresPerDevice != 0) {
            throw new VendorException(coreName + " must be 1 or a multiple of " + coresPerDevice + ", got " + n);
        }
        long devices = n / coresPerDevice;
        if (devices > MAX_DEVICES) {
            throw new VendorException(coreName + " needs " + devices + " devices, which exceeds the maximum of "
                    + MAX_DEVICES);
        }
        return new DeviceRequest(devices, 0, coresPerDevice);
    }

    private static long checked(String resource, Quantity value, long maximum) {
        long n = value.exactLong().orElseThrow(() -> new VendorException(resource + " must be an integer"));
        if (n <= 0) {
            throw new VendorException(resource + " must be greater than 0");
        }
        if (n > maximum) {
            throw new VendorException(resource + " must not exceed " + maximum);
        }
        return n;
    }

    /** Cores only (the backend has no memory resource), in its allocated-devices annotation. */
    @Override
    public QuotaResources quotaResources() {
        return coreName.isEmpty() || countName.isEmpty() ? QuotaResources.NONE
                : new QuotaResources(null, coreName, 1, "hami.io/aws-neuron-devices-allocated");
    }

    /**
     * HAMi's request: a device count takes the cores of whole devices; a core count splits into devices (one device
     * up to the cores per device); an invalid value counts nothing (its admission error answers the pod first).
     */
    @Override
    public DeviceRequest request(ContainerNode container) {
        try {
            return split(container);
        } catch (VendorException e) {
            return DeviceRequest.NONE;
        }
    }
}
