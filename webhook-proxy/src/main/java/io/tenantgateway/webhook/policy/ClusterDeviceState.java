package io.tenantgateway.webhook.policy;

/**
 * Scheduler-side state some of HAMi's webhook decisions depend on (spec hami-vendors.md §3.7, §3.8, §6): HAMi's
 * scheduler learns it from the Nodes it registers, this webhook gets it from whoever builds the policy (the agent
 * learns it from Node capacities through the API; without API access the defaults apply). Immutable.
 *
 * @param neuronCoresPerDevice HAMi v2.10's AWS Neuron NeuronCores per device: {@code neuroncore ÷ neuron} capacity of
 *     a Neuron node, capped at 2; {@link #DEFAULT_NEURON_CORES_PER_DEVICE} (2) before any such node. 1 or 2.
 * @param enflameSharedFactor HAMi v2.9's Enflame slice factor: {@code enflame.com/shared-gcu ÷ enflame.com/gcu-count}
 *     capacity of an Enflame node; {@link #DEFAULT_ENFLAME_SHARED_FACTOR} (0) before any, which leaves single-device
 *     {@code vgcu} requests unchanged. At least 0.
 */
public record ClusterDeviceState(long neuronCoresPerDevice, long enflameSharedFactor) {
    /** HAMi v2.10 before any Neuron node registered: its cap. */
    public static final long DEFAULT_NEURON_CORES_PER_DEVICE = 2;
    /** HAMi v2.9 before any Enflame node registered. */
    public static final long DEFAULT_ENFLAME_SHARED_FACTOR = 0;
    /** HAMi's state before any node registered. */
    public static final ClusterDeviceState DEFAULTS = new ClusterDeviceState(DEFAULT_NEURON_CORES_PER_DEVICE,
            DEFAULT_ENFLAME_SHARED_FACTOR);

    public ClusterDeviceState {
        if (neuronCoresPerDevice < 1 || neuronCoresPerDevice > 2) {
            throw new IllegalArgumentException("neuronCoresPerDevice: " + neuronCoresPerDevice
                    + " (expected: 1 or 2, HAMi's cap)");
        }
        if (enflameSharedFactor < 0) {
            throw new IllegalArgumentException("enflameSharedFactor: " + enflameSharedFactor + " (expected: >= 0)");
        }
    }
}
