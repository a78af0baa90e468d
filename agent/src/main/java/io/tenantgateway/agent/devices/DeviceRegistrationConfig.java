package io.tenantgateway.agent.devices;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.agent.node.NodeNames;
import io.tenantgateway.common.config.ConfigException;
import io.tenantgateway.common.config.FlagValues;
import io.tenantgateway.hami.GpuDevice;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;

/**
 * Settings of the device registration. The error messages name the command-line flag that sets the
 * value ({@code AgentCommand} maps flags to this record).
 *
 * @param nodeName            the Node this agent runs on ({@code --node-name}, usually from the downward API)
 * @param source              where the GPUs come from ({@code --device-source})
 * @param mockInventory       the simulated GPUs; required for {@link Source#MOCK}, ignored otherwise
 * @param nvidiaSmiPath       the nvidia-smi executable ({@code --nvidia-smi-path})
 * @param sysfsRoot           where sysfs is mounted, for NUMA nodes ({@code --sysfs-root})
 * @param nvidiaSmiTimeout    how long nvidia-smi may run ({@code --nvidia-smi-timeout})
 * @param splitCount          HAMi split count per GPU ({@code --device-split-count}, HAMi's deviceSplitCount)
 * @param handshakeInterval   how often {@code hami.io/node-handshake} is rewritten ({@code --handshake-interval});
 *                            below the scheduler's 60 s staleness window
 * @param rescanInterval      how often the source is asked again ({@code --device-rescan-interval})
 * @param retryInitialBackoff first retry delay after a failure; doubles up to {@code handshakeInterval}
 * @param advertiseCapacity   patch node status capacity/allocatable ({@code nvidia.com/gpu} etc.); default on
 *                            in mock mode only, where no device plugin advertises them
 * @param deregisterOnExit    remove the annotations (and advertised capacity) on close ({@code --deregister-on-exit})
 * @param closeTimeout        how long close waits for a running registration round
 * @param memoryScaling       HAMi's {@code deviceMemoryScaling} ({@code --device-config}) for nvidia-smi GPUs: the
 *                            registered {@code devmem} is the GPU's MiB times this when it is not 1
 * @param coreScaling         HAMi's {@code deviceCoreScaling} ({@code --device-config}) for nvidia-smi GPUs: the
 *                            registered {@code devcore} is 100 times this
 * @param nodeCapacity        {@code --report-node-capacity}: the resources the healthy GPUs' memory and cores totals
 *                            are reported as in the node's status capacity and allocatable; {@code null} when off
 *                            (the default)
 */
public record DeviceRegistrationConfig(String nodeName, Source source, MockInventory mockInventory,
                                       Path nvidiaSmiPath, Path sysfsRoot, Duration nvidiaSmiTimeout,
                                       int splitCount, Duration handshakeInterval, Duration rescanInterval,
                                       Duration retryInitialBackoff, boolean advertiseCapacity,
                                       boolean deregisterOnExit, Duration closeTimeout, double memoryScaling,
                                       double coreScaling, NodeCapacityReport nodeCapacity) {

    /** HAMi's scheduler marks a node unhealthy when its {@code Requesting_} stamp is this old. */
    public static final Duration SCHEDULER_STALE_AFTER = Duration.ofSeconds(60);

    /** Where the GPUs to register come from ({@code --device-source}: {@link FlagValues}). */
    public enum Source {
        /** Simulated GPUs from {@link #mockInventory()}. */
        MOCK,
        /** The node's real GPUs, from nvidia-smi. */
        NVIDIA_SMI,
        /** No device registration (nodes without GPUs). */
        NONE;

        public String flagValue() {
            return FlagValues.of(this);
        }

        /** Parses {@code mock}, {@code nvidia-smi} or {@code none}. */
        public static Source parse(String value) {
            requireNonNull(value, "value");
            return FlagValues.find(Source.class, value).orElseThrow(() -> ConfigException.of("--device-source", "'"
                    + value + "' (expected one of: " + FlagValues.list(Source.class, ", ") + ")"));
        }
    }

    public DeviceRegistrationConfig {
        requireNonNull(nodeName, "nodeName");
        requireNonNull(source, "source");
        requireNonNull(nvidiaSmiPath, "nvidiaSmiPath");
        requireNonNull(sysfsRoot, "sysfsRoot");
        requireNonNull(nvidiaSmiTimeout, "nvidiaSmiTimeout");
        requireNonNull(handshakeInterval, "handshakeInterval");
        requireNonNull(rescanInterval, "rescanInterval");
        requireNonNull(retryInitialBackoff, "retryInitialBackoff");
        requireNonNull(closeTimeout, "closeTimeout");
        NodeNames.requireValid("--node-name", nodeName);
        if (source == Source.MOCK && mockInventory == null) {
            throw new ConfigException("--mock-gpus/--mock-inventory", "none",
                    "a mock inventory when --device-source=mock");
        }
        if (splitCount <= 0) {
            throw new ConfigException("--device-split-count", splitCount, "> 0");
        }
        requirePositive("--nvidia-smi-timeout", nvidiaSmiTimeout);
        requirePositive("--handshake-interval", handshakeInterval);
        requirePositive("--device-rescan-interval", rescanInterval);
        requirePositive("retryInitialBackoff", retryInitialBackoff);
        requirePositive("closeTimeout", closeTimeout);
        if (handshakeInterval.compareTo(SCHEDULER_STALE_AFTER) >= 0) {
            throw new ConfigException("--handshake-interval", handshakeInterval,
                    "< 60s, the HAMi scheduler's staleness window");
        }
        if (!(memoryScaling > 0) || Double.isInfinite(memoryScaling)) {
            throw new ConfigException("--device-config", "nvidia.deviceMemoryScaling: " + memoryScaling, "> 0");
        }
        if (!(coreScaling > 0) || Double.isInfinite(coreScaling)) {
            throw new ConfigException("--device-config", "nvidia.deviceCoreScaling: " + coreScaling, "> 0");
        }
        if (retryInitialBackoff.compareTo(handshakeInterval) > 0) {
            throw new IllegalArgumentException("retryInitialBackoff: " + retryInitialBackoff
                    + " (expected: <= --handshake-interval " + handshakeInterval + ")");
        }
    }

    private static void requirePositive(String name, Duration value) {
        if (value.isZero() || value.isNegative()) {
            // A flag's value is the user's to fix; the other settings are the caller's.
            throw name.startsWith("--") ? new ConfigException(name, value, "> 0")
                    : new IllegalArgumentException(name + ": " + value + " (expected: > 0)");
        }
    }

    /** This configuration for {@code node} (a name discovered from the agent's pod after the flags were checked). */
    public DeviceRegistrationConfig withNodeName(String node) {
        return new DeviceRegistrationConfig(node, source, mockInventory, nvidiaSmiPath, sysfsRoot, nvidiaSmiTimeout,
                splitCount, handshakeInterval, rescanInterval, retryInitialBackoff, advertiseCapacity,
                deregisterOnExit, closeTimeout, memoryScaling, coreScaling, nodeCapacity);
    }

    /** A builder with the defaults: nvidia-smi source, split count 10, handshake every 20 s. */
    public static Builder builder(String nodeName) {
        return new Builder(nodeName);
    }

    /** Builds {@link DeviceRegistrationConfig}; every setter has the default noted on the record. */
    public static final class Builder {
        private final String nodeName;
        private Source source = Source.NVIDIA_SMI;
        private MockInventory mockInventory;
        private Path nvidiaSmiPath = Path.of("/usr/bin/nvidia-smi");
        private Path sysfsRoot = Path.of("/sys");
        private Duration nvidiaSmiTimeout = Duration.ofSeconds(10);
        private int splitCount = 10;
        private Duration handshakeInterval = Duration.ofSeconds(20);
        private Duration rescanInterval = Duration.ofSeconds(30);
        private Duration retryInitialBackoff = Duration.ofSeconds(1);
        private Boolean advertiseCapacity;
        private boolean deregisterOnExit;
        private Duration closeTimeout = Duration.ofSeconds(5);
        private double memoryScaling = 1.0;
        private double coreScaling = 1.0;
        private NodeCapacityReport nodeCapacity;

        private Builder(String nodeName) {
            this.nodeName = nodeName;
        }

        /** Simulated GPUs; also sets the source to {@link Source#MOCK}. */
        public Builder mock(MockInventory inventory) {
            this.source = Source.MOCK;
            this.mockInventory = inventory;
            return this;
        }

        public Builder source(Source source) {
            this.source = source;
            return this;
        }

        public Builder nvidiaSmiPath(Path path) {
            this.nvidiaSmiPath = path;
            return this;
        }

        public Builder sysfsRoot(Path root) {
            this.sysfsRoot = root;
            return this;
        }

        public Builder nvidiaSmiTimeout(Duration timeout) {
            this.nvidiaSmiTimeout = timeout;
            return this;
        }

        public Builder splitCount(int count) {
            this.splitCount = count;
            return this;
        }

        public Builder handshakeInterval(Duration interval) {
            this.handshakeInterval = interval;
            return this;
        }

        public Builder rescanInterval(Duration interval) {
            this.rescanInterval = interval;
            return this;
        }

        public Builder retryInitialBackoff(Duration backoff) {
            this.retryInitialBackoff = backoff;
            return this;
        }

        public Builder advertiseCapacity(boolean advertise) {
            this.advertiseCapacity = advertise;
            return this;
        }

        public Builder deregisterOnExit(boolean deregister) {
            this.deregisterOnExit = deregister;
            return this;
        }

        public Builder closeTimeout(Duration timeout) {
            this.closeTimeout = timeout;
            return this;
        }

        /** HAMi's {@code deviceMemoryScaling} (nvidia-smi GPUs). */
        public Builder memoryScaling(double scaling) {
            this.memoryScaling = scaling;
            return this;
        }

        /** HAMi's {@code deviceCoreScaling} (nvidia-smi GPUs). */
        public Builder coreScaling(double scaling) {
            this.coreScaling = scaling;
            return this;
        }

        /** {@code --report-node-capacity} with these resource names; {@code null} (the default): off. */
        public Builder reportNodeCapacity(NodeCapacityReport report) {
            this.nodeCapacity = report;
            return this;
        }

        public DeviceRegistrationConfig build() {
            boolean advertise = advertiseCapacity != null ? advertiseCapacity : source == Source.MOCK;
            return new DeviceRegistrationConfig(nodeName, source, mockInventory, nvidiaSmiPath, sysfsRoot,
                    nvidiaSmiTimeout, splitCount, handshakeInterval, rescanInterval, retryInitialBackoff, advertise,
                    deregisterOnExit, closeTimeout, memoryScaling, coreScaling, nodeCapacity);
        }
    }

    /** The source this configuration asks for; empty for {@link Source#NONE}. */
    public Optional<DeviceSource> createSource() {
        return switch (source) {
            case MOCK -> Optional.of(new MockDeviceSource(nodeName, mockInventory, splitCount));
            case NVIDIA_SMI -> Optional.of(new NvidiaSmiDeviceSource(nvidiaSmiPath, sysfsRoot, nvidiaSmiTimeout,
                    splitCount, GpuDevice.MODE_HAMI_CORE, memoryScaling, coreScaling));
            case NONE -> Optional.empty();
        };
    }
}
