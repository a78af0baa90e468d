package io.tenantgateway.hami;

import static java.util.Objects.requireNonNull;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Codec for HAMi's pod device lists ({@code hami.io/vgpu-devices-to-allocate} and
 * {@code …-allocated}): one entry per container, init containers first, each entry terminated by
 * {@code ;}; inside an entry each device is {@code <UUID>,<type>,<memMiB>,<cores>} terminated by
 * {@code :}. Empty entries are kept, because an entry's position is the container's position.
 *
 * <p>Examples: {@code GPU-a,NVIDIA,24576,100:;} · {@code ;GPU-b,NVIDIA,6144,30:;} ·
 * {@code GPU-a,NVIDIA,3000,0:GPU-b,NVIDIA,3000,0:;}
 */
public final class DeviceAllocationCodec {
    private static final char ENTRY_END = ';';
    private static final char DEVICE_END = ':';
    private static final String FORMAT =
            "<UUID>,<type>,<memMiB>,<cores> each ':'-terminated, one ';'-terminated entry per container";

    /** The most characters of the value an error text quotes (escaped, as Go's {@code %q}). */
    private static final int QUOTED = 200;

    private DeviceAllocationCodec() {
    }

    /**
     * Decodes an annotation value into one list per container entry (empty lists for empty entries).
     * A missing final {@code ;} is tolerated (the remainder is the last entry).
     *
     * @throws IllegalArgumentException naming the value and the expected format
     */
    public static List<List<ContainerDevice>> decode(String value) {
        requireNonNull(value, "value");
        Annotations.checkSize("device list", value);
        List<List<ContainerDevice>> entries = new ArrayList<>();
        int start = 0;
        while (start < value.length()) {
            int end = value.indexOf(ENTRY_END, start);
            if (end < 0) {
                end = value.length();
            }
            entries.add(decodeEntry(value, value.substring(start, end)));
            start = end + 1;
        }
        return entries;
    }

    private static List<ContainerDevice> decodeEntry(String value, String entry) {
        List<ContainerDevice> devices = new ArrayList<>();
        for (String device : entry.split(String.valueOf(DEVICE_END), -1)) {
            if (device.isEmpty()) {
                continue; // the text after the last ':' terminator
            }
            String[] fields = device.split(",", -1);
            if (fields.length != 4) {
                throw malformed(value, "device " + GoStrconv.quoteAbbreviated(device, QUOTED) + " has "
                        + fields.length + " fields");
            }
            String quoted = GoStrconv.quoteAbbreviated(device, QUOTED);
            long memory;
            int cores;
            try {
                memory = Long.parseLong(fields[2]);
            } catch (NumberFormatException e) { // its message would repeat the field raw
                throw malformed(value, "device " + quoted + ": For input string: "
                        + GoStrconv.quoteAbbreviated(fields[2], QUOTED));
            }
            try {
                cores = Integer.parseInt(fields[3]);
            } catch (NumberFormatException e) {
                throw malformed(value, "device " + quoted + ": For input string: "
                        + GoStrconv.quoteAbbreviated(fields[3], QUOTED));
            }
            try {
                devices.add(new ContainerDevice(fields[0], fields[1], memory, cores));
            } catch (IllegalArgumentException e) { // names the field, quoted
                throw malformed(value, "device " + quoted + ": " + e.getMessage());
            }
        }
        return devices;
    }

    private static IllegalArgumentException malformed(String value, String problem) {
        return new IllegalArgumentException("device list " + GoStrconv.quoteAbbreviated(value, QUOTED) + ": " + problem
                + " (expected: " + FORMAT + ")");
    }

    /** Encodes container entries; the exact inverse of {@link #decode} for terminated values. */
    public static String encode(List<List<ContainerDevice>> entries) {
        requireNonNull(entries, "entries");
        StringBuilder out = new StringBuilder();
        for (List<ContainerDevice> entry : entries) {
            for (ContainerDevice device : entry) {
                out.append(device.uuid()).append(',').append(device.type()).append(',')
                        .append(device.memoryMiB()).append(',').append(device.cores()).append(DEVICE_END);
            }
            out.append(ENTRY_END);
        }
        return out.toString();
    }

    /**
     * The value after every entry has been handed to its container: each entry emptied, the
     * {@code ;} structure kept ({@code "a:;;b:;"} → {@code ";;;"}).
     */
    public static String consumeAll(String value) {
        return String.valueOf(ENTRY_END).repeat(decode(value).size());
    }

    /**
     * The position of the next entry to hand out: the first that names a device (HAMi's device plugin takes entries
     * in order, one per Allocate call, and empties each it took), or {@code -1} when none is left.
     */
    public static int nextEntry(List<List<ContainerDevice>> entries) {
        requireNonNull(entries, "entries");
        for (int i = 0; i < entries.size(); i++) {
            if (!entries.get(i).isEmpty()) {
                return i;
            }
        }
        return -1;
    }

    /** The entries with the one at {@code index} emptied; positions (and so the {@code ;} structure) are kept. */
    public static List<List<ContainerDevice>> erase(List<List<ContainerDevice>> entries, int index) {
        requireNonNull(entries, "entries");
        if (index < 0 || index >= entries.size()) {
            throw new IllegalArgumentException("index: " + index + " (expected: 0.." + (entries.size() - 1) + ")");
        }
        List<List<ContainerDevice>> erased = new ArrayList<>(entries);
        erased.set(index, List.of());
        return List.copyOf(erased);
    }

    /** True when no entry names a device (all consumed, or nothing was assigned). */
    public static boolean isFullyConsumed(List<List<ContainerDevice>> entries) {
        return entries.stream().allMatch(List::isEmpty);
    }

    /** Every device UUID named in the entries, in order of appearance, without duplicates. */
    public static Set<String> deviceUuids(List<List<ContainerDevice>> entries) {
        Set<String> uuids = new LinkedHashSet<>();
        entries.forEach(entry -> entry.forEach(device -> uuids.add(device.uuid())));
        return uuids;
    }
}
