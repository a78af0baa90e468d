package io.tenantgateway.agent.devices;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.hami.NodeVendor;
import java.util.Arrays;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * Simulated Hygon DCU and Huawei Ascend parts a mock inventory can name ({@code --mock-devices}, {@code preset:} in
 * {@code --mock-inventory}), as data: the figures each vendor's device plugin registers for one device of that part.
 * The name is the HAMi type the plugin registers (Hygon: {@code DCU-} + the DCGM model name; Ascend: the chip's
 * common word), so it keeps the vendor's own spelling ({@code DCU-K100_AI}). Where each figure comes from is listed in
 * agent/README.md, "Simulated Hygon and Ascend devices": Ascend's are the HAMi chart's {@code vnpus} entries
 * (device-plugin/VENDOR-PLUGINS.md §2.7); Hygon's memory is nominal (the public spec sheet's GB × 1024), since the
 * real plugin reads it from the hardware and no source gives it.
 */
public enum VendorPreset {
    /** Hygon DCU Z100L, 32 GB: 4 slices (the real plugin's fixed split), devcore 100. */
    DCU_Z100L(NodeVendor.Kind.HYGON, "DCU-Z100L", 32768, 100, 4),
    /** Hygon DCU K100, 64 GB. */
    DCU_K100(NodeVendor.Kind.HYGON, "DCU-K100", 65536, 100, 4),
    /** Hygon DCU K100_AI, 64 GB. */
    DCU_K100_AI(NodeVendor.Kind.HYGON, "DCU-K100_AI", 65536, 100, 4),
    /** Ascend 910B4 (chip 910B4): memoryAllocatable 32768, aiCore 20, 32768 / 8192 = 4 virtual devices. */
    ASCEND_910B4(NodeVendor.Kind.ASCEND, "Ascend910B4", 32768, 20, 4),
    /** Ascend 910B3 (chip 910B3): memoryAllocatable 65536, aiCore 20, 65536 / 16384 = 4 virtual devices. */
    ASCEND_910B3(NodeVendor.Kind.ASCEND, "Ascend910B3", 65536, 20, 4),
    /** Ascend 310P (chip 310P3): memoryAllocatable 21527, aiCore 8, 21527 / 3072 = 7 virtual devices. */
    ASCEND_310P(NodeVendor.Kind.ASCEND, "Ascend310P", 21527, 8, 7);

    private final NodeVendor.Kind kind;
    private final String type;
    private final int devmem;
    private final int devcore;
    private final int count;

    VendorPreset(NodeVendor.Kind kind, String type, int devmem, int devcore, int count) {
        this.kind = kind;
        this.type = type;
        this.devmem = devmem;
        this.devcore = devcore;
        this.count = count;
    }

    /** Hygon or Ascend. */
    public NodeVendor.Kind kind() {
        return kind;
    }

    /**
     * The name inventories use, which is also the {@code type} the vendor's plugin registers: {@code DCU-K100},
     * {@code Ascend910B4}.
     */
    public String presetName() {
        return type;
    }

    /** The registered {@code devmem}, MiB. */
    public int devmem() {
        return devmem;
    }

    /** The registered {@code devcore}: 100 for Hygon, the chip's aiCore for Ascend (template mode). */
    public int devcore() {
        return devcore;
    }

    /** The registered {@code count}: how many slices kubelet lists per device (Hygon 4, Ascend VDeviceCount). */
    public int count() {
        return count;
    }

    /** The vendor whose plugin registers this part: {@link NodeVendor#HYGON}, or the Ascend plugin of this chip. */
    public NodeVendor vendor() {
        return switch (kind) {
            case HYGON -> NodeVendor.HYGON;
            case ASCEND -> NodeVendor.ascend(type);
            case NVIDIA -> throw new IllegalStateException("NVIDIA parts are GpuPresets, not VendorPresets: " + this);
        };
    }

    /** Looks a preset up by its inventory name, ignoring case and surrounding white space. */
    public static Optional<VendorPreset> byName(String name) {
        String wanted = requireNonNull(name, "name").strip();
        return Arrays.stream(values()).filter(p -> p.type.equalsIgnoreCase(wanted)).findFirst();
    }

    /** {@code DCU-Z100L, DCU-K100, …}, for error messages. */
    public static String names() {
        return Arrays.stream(values()).map(VendorPreset::presetName).collect(Collectors.joining(", "));
    }
}
