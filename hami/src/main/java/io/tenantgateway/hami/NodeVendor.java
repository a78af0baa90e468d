package io.tenantgateway.hami;

import static java.util.Objects.requireNonNull;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The node side of one HAMi vendor, as data: what its device plugin registers with kubelet and writes for HAMi's
 * scheduler, and which pod annotations carry its allocation, built from the vendor's row of {@link HamiVendor} (the
 * vendor plugins' facts in device-plugin/VENDOR-PLUGINS.md). The agent simulates NVIDIA, Hygon DCU and each Ascend chip; the few rules that
 * really differ per vendor (how Allocate answers) live in small classes of the device plugin, chosen by {@link #kind}.
 *
 * @param kind          which vendor's rules apply
 * @param commonWord    HAMi's common word: the device type in pod annotations ({@code NVIDIA}, {@code DCU},
 *                      {@code Ascend910B4})
 * @param resourceName  the count resource registered with kubelet ({@code nvidia.com/gpu}, {@code hygon.com/dcunum},
 *                      {@code huawei.com/Ascend910B4})
 * @param memoryResource the memory resource HAMi's webhook and quota read
 * @param coreResource  the core resource
 * @param registerKey   the node register annotation
 * @param registerFormat how the register value is written
 * @param handshakeKey  the node handshake annotation
 * @param toAllocateKey the pod annotation the scheduler fills at Filter and Allocate erases, container by container
 * @param allocatedKey  the pod annotation recording what the scheduler placed
 * @param socketName    the real plugin's socket file in kubelet's device-plugins directory (the simulated plugin
 *                      serves the same name, so a real plugin there is found and stood aside for)
 */
public record NodeVendor(Kind kind, String commonWord, String resourceName, String memoryResource, String coreResource,
        String registerKey, RegisterFormat registerFormat, String handshakeKey, String toAllocateKey,
        String allocatedKey, String socketName) {

    /**
     * Which simulated plugin's rules apply; also how the vendor is named for people (its {@link HamiVendor} row's
     * name). Every switch over it is exhaustive, with no default branch: a kind added here does not compile until each
     * place that differs per vendor (Allocate's rules, the simulation, the handshake) has its case.
     */
    public enum Kind {
        NVIDIA, HYGON, ASCEND;

        public String display() {
            return HamiVendor.simulatedAs(this).display();
        }
    }

    /** HAMi's NVIDIA device plugin. */
    public static final NodeVendor NVIDIA = of(HamiVendor.NVIDIA);

    /** Project-HAMi/dcu-vgpu-device-plugin (Hygon DCU). */
    public static final NodeVendor HYGON = of(HamiVendor.HYGON);

    public NodeVendor {
        requireNonNull(kind, "kind");
        requireNonNull(commonWord, "commonWord");
        requireNonNull(resourceName, "resourceName");
        requireNonNull(memoryResource, "memoryResource");
        requireNonNull(coreResource, "coreResource");
        requireNonNull(registerKey, "registerKey");
        requireNonNull(registerFormat, "registerFormat");
        requireNonNull(handshakeKey, "handshakeKey");
        requireNonNull(toAllocateKey, "toAllocateKey");
        requireNonNull(allocatedKey, "allocatedKey");
        requireNonNull(socketName, "socketName");
    }

    /** Project-HAMi/ascend-device-plugin serving one chip, e.g. {@code Ascend910B4}: one plugin process per chip. */
    public static NodeVendor ascend(String commonWord) {
        return of(HamiVendor.ASCEND, commonWord);
    }

    private static NodeVendor of(HamiVendor row) {
        return of(row, row.commonWord(HamiRelease.V2_10));
    }

    /** The simulated plugin of vendor table row {@code row} for {@code commonWord} (the chip's, for a per-chip row). */
    private static NodeVendor of(HamiVendor row, String commonWord) {
        requireNonNull(commonWord, "commonWord");
        return new NodeVendor(row.simulation(), commonWord, HamiVendor.forChip(row.countResource(), commonWord),
                HamiVendor.forChip(row.memoryResource(), commonWord),
                HamiVendor.forChip(row.coreResource(), commonWord), HamiVendor.forChip(row.registerKey(), commonWord),
                row.registerFormat(), HamiVendor.forChip(row.handshakeKey(), commonWord),
                HamiVendor.forChip(row.toAllocateKey(), commonWord), HamiVendor.forChip(row.allocatedKey(),
                commonWord), HamiVendor.forChip(row.socketName(), commonWord));
    }

    /** For people: {@code NVIDIA}, {@code Hygon}, {@code Ascend910B4}. */
    public String displayName() {
        return kind == Kind.ASCEND ? commonWord : kind.display();
    }

    /**
     * The handshake value this vendor's plugin writes at {@code now}, in the plugin's local time {@code zone}
     * ({@code started}: when the plugin started, for Go's monotonic reading):
     * <ul>
     *   <li>NVIDIA: {@code Reported <yyyy-MM-dd HH:mm:ss>} (hami.md);</li>
     *   <li>Hygon: {@code Reported } + Go's {@code time.Now().String()}:
     *       {@code 2006-01-02 15:04:05.999999999 -0700 MST m=+<seconds>};</li>
     *   <li>Ascend: {@code Reported_} + now plus the plugin's 1 s report offset, {@code 2006.01.02 15:04:05}.</li>
     * </ul>
     */
    public String handshake(Instant now, Instant started, ZoneId zone) {
        return switch (kind) {
            case NVIDIA -> Annotations.HANDSHAKE_REPORTED_PREFIX + NVIDIA_TIME.format(now.atZone(zone));
            case HYGON -> Annotations.HANDSHAKE_REPORTED_PREFIX + goTimeString(now, started, zone);
            case ASCEND -> "Reported_" + ASCEND_TIME.format(now.plusSeconds(1).atZone(zone));
        };
    }

    private static final DateTimeFormatter NVIDIA_TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss", Locale.ROOT);
    private static final DateTimeFormatter ASCEND_TIME = DateTimeFormatter.ofPattern("yyyy.MM.dd HH:mm:ss", Locale.ROOT);
    private static final DateTimeFormatter GO_WALL = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss", Locale.ROOT);
    private static final DateTimeFormatter GO_ZONE = DateTimeFormatter.ofPattern("Z z", Locale.ROOT);

    /** Go's {@code Time.String()}: wall clock, trimmed fraction, offset and zone abbreviation, monotonic reading. */
    static String goTimeString(Instant now, Instant started, ZoneId zone) {
        ZonedDateTime at = now.atZone(zone);
        StringBuilder out = new StringBuilder(GO_WALL.format(at));
        int nanos = now.getNano();
        if (nanos != 0) {
            String fraction = String.format(Locale.ROOT, "%09d", nanos).replaceAll("0+$", "");
            out.append('.').append(fraction);
        }
        // Go names UTC "UTC" where Java's ZoneOffset.UTC says "Z".
        out.append(' ').append(GO_ZONE.format(at).replaceFirst(" Z$", " UTC"));
        Duration since = Duration.between(started, now);
        if (!since.isNegative()) {
            out.append(String.format(Locale.ROOT, " m=+%d.%09d", since.getSeconds(), since.getNano()));
        }
        return out.toString();
    }

    /**
     * Whether any vendor's {@code hami.io/<word>-devices-to-allocate} on a pod still names a device: a pod asking for
     * NVIDIA and Ascend is complete (bind-phase success, node lock released) only once every vendor's plugin erased
     * its last entry. Keys of every HAMi vendor count (Cambricon, Metax, Kunlun… too), not only the simulated ones;
     * a value that does not decode counts as pending (nothing is released on a guess).
     */
    public static boolean anyEntryLeft(Map<String, String> podAnnotations) {
        requireNonNull(podAnnotations, "podAnnotations");
        for (Map.Entry<String, String> annotation : podAnnotations.entrySet()) {
            if (!isToAllocateKey(annotation.getKey()) || annotation.getValue() == null) {
                continue;
            }
            try {
                List<List<ContainerDevice>> entries = DeviceAllocationCodec.decode(annotation.getValue());
                if (DeviceAllocationCodec.nextEntry(entries) >= 0) {
                    return true;
                }
            } catch (IllegalArgumentException e) {
                return true;
            }
        }
        return false;
    }

    /** {@code hami.io/<word>-devices-to-allocate}, for any vendor's word. */
    public static boolean isToAllocateKey(String key) {
        return key.startsWith("hami.io/") && key.endsWith("-devices-to-allocate")
                && key.length() > "hami.io/".length() + "-devices-to-allocate".length()
                && key.indexOf('/', "hami.io/".length()) < 0;
    }
}
