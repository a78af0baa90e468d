package io.tenantgateway.agent.devices;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.common.config.FlagValues;
import java.util.Arrays;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * GPU models a mock inventory can name. Model name and memory are what {@code nvidia-smi}
 * ({@code name}, {@code memory.total} in MiB) prints for that card, so a simulated node registers
 * the same values a real one would. Where each figure comes from is listed in agent/README.md.
 */
public enum GpuPreset {
    /** A100 SXM4 80 GB: nvidia-smi reports 81920 MiB. */
    A100_80GB("NVIDIA A100-SXM4-80GB", 81920),
    /** L4 24 GB: nvidia-smi reports 23034 MiB. */
    L4_24GB("NVIDIA L4", 23034),
    /** H100 SXM5 80 GB HBM3: nvidia-smi reports 81559 MiB. */
    H100_80GB("NVIDIA H100 80GB HBM3", 81559),
    /** H200 141 GB HBM3e: nvidia-smi reports 143771 MiB. */
    H200_141GB("NVIDIA H200", 143771);

    private final String modelName;
    private final int memoryMiB;

    GpuPreset(String modelName, int memoryMiB) {
        this.modelName = modelName;
        this.memoryMiB = memoryMiB;
    }

    /** The name used in inventories, e.g. {@code L4-24GB}: the constant's, with {@code -} for {@code _}. */
    public String presetName() {
        return name().replace('_', '-');
    }

    /** The model name nvidia-smi prints, e.g. {@code NVIDIA L4}. */
    public String modelName() {
        return modelName;
    }

    /** Total memory in MiB as nvidia-smi prints it. */
    public int memoryMiB() {
        return memoryMiB;
    }

    /** Looks a preset up by its inventory name, ignoring case. */
    public static Optional<GpuPreset> byName(String name) {
        return FlagValues.find(GpuPreset.class, requireNonNull(name, "name"));
    }

    /** {@code A100-80GB, L4-24GB, …}, for error messages. */
    public static String names() {
        return Arrays.stream(values()).map(GpuPreset::presetName).collect(Collectors.joining(", "));
    }
}
