package io.tenantgateway.hami.region;

import static java.util.Objects.requireNonNull;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.List;

/**
 * Writes a v1 region file as HAMi-core would for a container: what simulated devices stand in with, so the monitor
 * reads real files of the real layout where no GPU and no {@code libvgpu.so} exist (the lab, tests). Never used on a
 * region HAMi-core owns: it writes a whole new file beside the old one and moves it into place.
 */
public final class SimulatedRegion {
    /** One device of the simulated container: its UUID and limits, and what its one process uses now. */
    public record Device(String uuid, long limitBytes, long smLimitPercent, long usedBytes, long smUtil) {
        public Device {
            requireNonNull(uuid, "uuid");
            if (uuid.getBytes(StandardCharsets.US_ASCII).length >= RegionLayout.UUID_BYTES) {
                throw new IllegalArgumentException("uuid: " + uuid.length() + " characters (expected: < "
                        + RegionLayout.UUID_BYTES + ")");
            }
        }
    }

    private SimulatedRegion() {
    }

    /**
     * Writes {@code file} as a v1 region of one running process ({@code pid}) using {@code devices}, its last kernel
     * launch at {@code lastKernelTime} (unix seconds; 0: none). Replaces the file atomically.
     */
    public static void write(Path file, int pid, List<Device> devices, long lastKernelTime) throws IOException {
        requireNonNull(file, "file");
        if (devices.size() > RegionLayout.MAX_DEVICES) {
            throw new IllegalArgumentException("devices: " + devices.size() + " (expected: at most "
                    + RegionLayout.MAX_DEVICES + ")");
        }
        ByteBuffer region = ByteBuffer.allocate(RegionLayout.V1_SIZE).order(ByteOrder.LITTLE_ENDIAN);
        region.putInt(0, RegionLayout.MAGIC);
        region.putInt(4, 1);
        region.putInt(8, 2);
        region.putLong(RegionLayout.V1_OWNER_PID, pid);
        region.putLong(RegionLayout.V1_DEVICE_NUM, devices.size());
        int slot = RegionLayout.V1_PROCS;
        region.putInt(slot, pid);
        region.putInt(slot + 4, pid);
        for (int i = 0; i < devices.size(); i++) {
            Device device = devices.get(i);
            byte[] uuid = device.uuid().getBytes(StandardCharsets.US_ASCII);
            region.put(RegionLayout.V1_UUIDS + i * RegionLayout.UUID_BYTES, uuid);
            region.putLong(RegionLayout.V1_LIMIT + i * 8, device.limitBytes());
            region.putLong(RegionLayout.V1_SM_LIMIT + i * 8, device.smLimitPercent());
            int memory = slot + RegionLayout.V1_SLOT_USED + i * RegionLayout.V1_MEMORY_ENTRY;
            region.putLong(memory + RegionLayout.MEMORY_CONTEXT, device.usedBytes() / 8);
            region.putLong(memory + RegionLayout.MEMORY_MODULE, device.usedBytes() / 8);
            region.putLong(memory + RegionLayout.MEMORY_DATA, device.usedBytes() - 2 * (device.usedBytes() / 8));
            region.putLong(memory + RegionLayout.MEMORY_TOTAL, device.usedBytes());
            region.putLong(slot + RegionLayout.V1_SLOT_DEVICE_UTIL + i * RegionLayout.V1_UTIL_ENTRY
                    + RegionLayout.UTIL_SM, device.smUtil());
        }
        region.putInt(slot + RegionLayout.V1_SLOT_STATUS, 1);
        region.putLong(slot + RegionLayout.V1_SLOT_SEQLOCK, 2);
        region.putInt(RegionLayout.V1_PROC_NUM, 1);
        region.putLong(RegionLayout.V1_LAST_KERNEL_TIME, lastKernelTime);
        Path parent = file.toAbsolutePath().getParent();
        Files.createDirectories(parent);
        Path temporary = Files.createTempFile(parent, ".region-", ".tmp");
        try (FileChannel channel = FileChannel.open(temporary, StandardOpenOption.WRITE)) {
            region.rewind();
            while (region.hasRemaining()) {
                channel.write(region);
            }
        }
        Files.move(temporary, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }
}
