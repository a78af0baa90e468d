package io.tenantgateway.agent.devices;

import io.tenantgateway.common.config.ConfigException;
import io.tenantgateway.common.config.ConfigFiles;
import io.tenantgateway.common.time.GoDuration;
import io.tenantgateway.agent.hami.DeviceConfigFile;
import io.tenantgateway.webhook.policy.NvidiaConfig;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import picocli.CommandLine.Option;

/**
 * {@code run}'s device registration flags: where the GPUs come from ({@code --device-source}, the mock's inventory),
 * how they are advertised to HAMi, and what happens at exit, as {@link DeviceRegistrationConfig}. A picocli mixin.
 */
public final class DeviceFlags {
    @Option(names = "--device-source", defaultValue = "none", order = 4, paramLabel = "mock|nvidia-smi|none",
            description = "Where the GPUs come from: simulated (mock), nvidia-smi, or none (no registration)."
                    + " Default: ${DEFAULT-VALUE}.")
    String deviceSource;

    @Option(names = "--mock-inventory", order = 4, paramLabel = "FILE",
            description = "Simulated GPUs (YAML/JSON). Default: none.")
    Path mockInventory;

    @Option(names = "--mock-gpus", order = 4, paramLabel = "PRESET[:N],…",
            description = "Simulated GPUs, e.g. A100-80GB or L4-24GB:2. Default: none.")
    String mockGpus;

    @Option(names = "--mock-devices", order = 4, paramLabel = "PRESET[:N],…",
            description = "Simulated NVIDIA, Hygon and Ascend devices (after --mock-gpus's), e.g."
                    + " Ascend910B4:2,DCU-K100. Default: none.")
    String mockDevices;

    @Option(names = "--nvidia-smi-path", defaultValue = "/usr/bin/nvidia-smi", order = 4, paramLabel = "FILE",
            description = "nvidia-smi, which --device-source=nvidia-smi runs to list the GPUs."
                    + " Default: ${DEFAULT-VALUE}.")
    Path nvidiaSmiPath;

    @Option(names = "--device-split-count", order = 4, paramLabel = "N",
            description = "Pods per GPU (HAMi deviceSplitCount). Default: --device-config's, else 10.")
    Integer deviceSplitCount;

    @Option(names = "--handshake-interval", defaultValue = "20s", order = 4, paramLabel = "DURATION",
            description = "hami.io/node-handshake refresh (< 60s). Default: ${DEFAULT-VALUE}.")
    String handshakeInterval;

    @Option(names = "--advertise-gpu-capacity", arity = "0..1", fallbackValue = "true", order = 4,
            paramLabel = "true|false",
            description = "Patch nvidia.com/gpu capacity. Default: true with --device-source=mock, else false.")
    Boolean advertiseGpuCapacity;

    @Option(names = "--deregister-on-exit", arity = "0..1", defaultValue = "false", fallbackValue = "true", order = 4,
            paramLabel = "true|false",
            description = "Remove the registration when the agent stops. Default: ${DEFAULT-VALUE}.")
    boolean deregisterOnExit;

    @Option(names = "--report-node-capacity", arity = "0..1", defaultValue = "false", fallbackValue = "true",
            order = 4, paramLabel = "true|false",
            description = "Patch the healthy GPUs' memory (MiB) and cores totals into the node's capacity, named"
                    + " as the device config's resourceMemoryName and resourceCoreName (nvidia.com/gpumem,"
                    + " nvidia.com/gpucores). Default: ${DEFAULT-VALUE}.")
    boolean reportNodeCapacity;

    /** Whether devices are registered: {@code --device-source} other than {@code none}. */
    public boolean enabled() {
        return source() != DeviceRegistrationConfig.Source.NONE;
    }

    private DeviceRegistrationConfig.Source source() {
        return DeviceRegistrationConfig.Source.parse(deviceSource);
    }

    /**
     * The registration, checked; empty with {@code --device-source=none}.
     *
     * @param nodeName this node, when known
     * @param deviceConfigFile HAMi's device config ({@code --device-config}, read once, on first use): the split count
     *     unless {@code --device-split-count} says otherwise, the memory and core scaling of the register
     *     annotation, and the resource names {@code --report-node-capacity} reports
     */
    public Optional<DeviceRegistrationConfig> config(Optional<String> nodeName, DeviceConfigFile deviceConfigFile) {
        DeviceRegistrationConfig.Source source = source();
        if (source == DeviceRegistrationConfig.Source.NONE) {
            return Optional.empty();
        }
        String node = nodeName.orElseThrow(() -> new ConfigException("--device-source", deviceSource
                + " without a node name", "--node-name or env NODE_NAME"));
        NvidiaConfig nvidia = deviceConfigFile.nvidia();
        long split = deviceSplitCount != null ? deviceSplitCount : nvidia.deviceSplitCount();
        if (split < 1 || split > Integer.MAX_VALUE) {
            throw deviceSplitCount != null ? new ConfigException("--device-split-count", split, "> 0")
                    : new ConfigException("--device-config", "nvidia.deviceSplitCount: " + split, "> 0");
        }
        DeviceRegistrationConfig.Builder builder = DeviceRegistrationConfig.builder(node)
                .splitCount((int) split)
                .memoryScaling(nvidia.deviceMemoryScaling())
                .coreScaling(nvidia.deviceCoreScaling())
                .handshakeInterval(GoDuration.parse("--handshake-interval", handshakeInterval))
                .deregisterOnExit(deregisterOnExit);
        if (source == DeviceRegistrationConfig.Source.MOCK) {
            builder.mock(mockInventory());
        } else {
            builder.source(source).nvidiaSmiPath(nvidiaSmiPath);
        }
        if (advertiseGpuCapacity != null) {
            builder.advertiseCapacity(advertiseGpuCapacity);
        }
        if (reportNodeCapacity) {
            builder.reportNodeCapacity(new NodeCapacityReport(nvidia.resourceMemoryName(), nvidia.resourceCoreName()));
        }
        return Optional.of(builder.build());
    }

    private MockInventory mockInventory() {
        if (mockInventory != null && mockGpus != null) {
            throw new ConfigException("--mock-inventory and --mock-gpus", "both given", "one of them");
        }
        if (mockInventory != null && mockDevices != null) {
            throw new ConfigException("--mock-inventory and --mock-devices", "both given", "one of them");
        }
        if (mockGpus != null && mockDevices != null) {
            // They add up (the chart's devices.mock.gpus and devices.mock.devices): --mock-gpus's GPUs come first.
            MockInventory gpus = MockInventory.parseShorthand(mockGpus);
            MockInventory devices = MockInventory.parseDevices(mockDevices);
            List<MockInventory.Entry> entries = new ArrayList<>(gpus.entries());
            entries.addAll(devices.entries());
            MockInventory.requireTotal("--mock-gpus and --mock-devices", MockInventory.total(entries,
                    devices.vendorEntries()));
            return new MockInventory(entries, devices.vendorEntries(), devices.hamiVnpuCore());
        }
        if (mockGpus != null) {
            return MockInventory.parseShorthand(mockGpus);
        }
        if (mockDevices != null) {
            return MockInventory.parseDevices(mockDevices);
        }
        if (mockInventory == null) {
            throw new ConfigException("--device-source", "mock without an inventory", "--mock-gpus such as A100-80GB"
                    + " or L4-24GB:2, --mock-devices such as Ascend910B4:2,DCU-K100, or --mock-inventory FILE");
        }
        try {
            return MockInventory.load(ConfigFiles.require("--mock-inventory", mockInventory));
        } catch (IOException e) {
            throw ConfigException.of("--mock-inventory", mockInventory + ": " + e.getMessage(), e);
        }
    }
}
