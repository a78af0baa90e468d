package io.tenantgateway.hami;

import static java.util.Objects.requireNonNull;

import java.util.List;
import java.util.Optional;

/**
 * One row of the table of HAMi node register annotations (hami-vendors.md §5): which key, which format, and the
 * scheduler's messages when the key is missing or lists no device. Vendors are data: every codec decision is made
 * from this table, by {@link #forKey}. Keys and formats come from the vendor table ({@link HamiVendor}).
 *
 * @param vendor         the backend, for people
 * @param keyPrefix      the key, or the part before the chip's common word for per-chip keys
 * @param keySuffix      empty for a fixed key; the part after the common word for per-chip keys
 * @param format         how the value is written
 * @param missingMessage the scheduler's error when the node lacks the key ({@code <key>} is replaced)
 * @param emptyMessage   the scheduler's error when the value lists no device
 * @param wholeCoreOnRead whether the scheduler sets every device's devcore to 100 after reading (Vastai, Biren:
 *                       "only for calscore use")
 * @param commonWord     HAMi's common word for the vendor, which the scheduler puts into every device it reads as
 *                       {@code devicevendor} and keys requests on; empty for per-chip keys, whose word is the chip's
 *                       part of the key ({@link #commonWord(String)})
 */
public record RegisterVendor(String vendor, String keyPrefix, String keySuffix, RegisterFormat format,
                             String missingMessage, String emptyMessage, boolean wholeCoreOnRead, String commonWord) {

    private static final String ANNOS_NOT_FOUND = "annos not found <key>";
    private static final String NO_GPU = "no gpu found on node";
    private static final String NO_DEVICE = "no device found on node";

    /**
     * Fixed keys first, then the per-chip patterns (Iluvatar {@code hami.io/node-X-register}, Ascend
     * {@code hami.io/node-register-X}), so that e.g. {@code hami.io/node-dcu-register} is Hygon, not an Iluvatar chip.
     * NVIDIA's messages are those of HAMi's {@code pkg/device/nvidia/device.go GetNodeDevices} (not in §5).
     */
    public static final List<RegisterVendor> TABLE = List.of(
            fixed("NVIDIA", HamiVendor.NVIDIA, ANNOS_NOT_FOUND, NO_GPU),
            fixed("Hygon", HamiVendor.HYGON, ANNOS_NOT_FOUND, NO_GPU),
            fixed("Kunlun vXPU", HamiVendor.KUNLUN_VXPU, ANNOS_NOT_FOUND, NO_DEVICE),
            fixed("AMD", HamiVendor.AMD, ANNOS_NOT_FOUND, NO_GPU),
            fixed("Vastai", HamiVendor.VASTAI, ANNOS_NOT_FOUND, NO_GPU).readingWholeCores(),
            fixed("Biren", HamiVendor.BIREN, ANNOS_NOT_FOUND, NO_GPU).readingWholeCores(),
            fixed("Metax sGPU", HamiVendor.METAX_SGPU, ANNOS_NOT_FOUND, "no sdevice found on node"),
            fixed("Enflame DRS", HamiVendor.ENFLAME_SHARED, "annotation not found <key>",
                    "no drs devices found on node <node>"),
            perChip("Ascend", HamiVendor.ASCEND, ANNOS_NOT_FOUND, NO_DEVICE),
            perChip("Iluvatar", HamiVendor.ILUVATAR, ANNOS_NOT_FOUND, NO_GPU));

    public RegisterVendor {
        requireNonNull(vendor, "vendor");
        requireNonNull(keyPrefix, "keyPrefix");
        requireNonNull(keySuffix, "keySuffix");
        requireNonNull(format, "format");
        requireNonNull(missingMessage, "missingMessage");
        requireNonNull(emptyMessage, "emptyMessage");
        requireNonNull(commonWord, "commonWord");
    }

    /**
     * The row of a vendor with one register key: key, format and common word from its {@link HamiVendor} row (the
     * word of the releases that read the key; only AMD's differs, in v2.9, which reads AMD from capacity).
     */
    private static RegisterVendor fixed(String name, HamiVendor vendor, String missing, String empty) {
        return new RegisterVendor(name, vendor.registerKey(), "", vendor.registerFormat(), missing, empty, false,
                vendor.commonWord(HamiRelease.V2_10));
    }

    /**
     * The row of a per-chip vendor: its register key split around {@link HamiVendor#CHIP}; the common word is the
     * chip's, taken from the key.
     */
    private static RegisterVendor perChip(String name, HamiVendor vendor, String missing, String empty) {
        String key = vendor.registerKey();
        int chip = key.indexOf(HamiVendor.CHIP);
        return new RegisterVendor(name, key.substring(0, chip), key.substring(chip + HamiVendor.CHIP.length()),
                vendor.registerFormat(), missing, empty, false, "");
    }

    private RegisterVendor readingWholeCores() {
        return new RegisterVendor(vendor, keyPrefix, keySuffix, format, missingMessage, emptyMessage, true,
                commonWord);
    }

    /**
     * The common word of the devices read from {@code key} (a key this row {@linkplain #matches matches}): the row's
     * word, or for a per-chip key the chip's part of it ({@code Ascend910B3} of
     * {@code hami.io/node-register-Ascend910B3}, {@code MR-V100} of {@code hami.io/node-MR-V100-register}).
     */
    public String commonWord(String key) {
        requireNonNull(key, "key");
        return isFixedKey() ? commonWord : key.substring(keyPrefix.length(), key.length() - keySuffix.length());
    }

    /** Whether this row is one key ({@code false}: a pattern with the chip's common word in the middle). */
    public boolean isFixedKey() {
        return keySuffix.isEmpty() && !keyPrefix.endsWith("-");
    }

    boolean matches(String key) {
        if (isFixedKey()) {
            return keyPrefix.equals(key);
        }
        return key.length() > keyPrefix.length() + keySuffix.length() && key.startsWith(keyPrefix)
                && key.endsWith(keySuffix)
                && key.substring(keyPrefix.length(), key.length() - keySuffix.length()).indexOf('/') < 0;
    }

    /** The row for {@code key}: the first fixed key that equals it, else the first pattern that matches. */
    public static Optional<RegisterVendor> forKey(String key) {
        requireNonNull(key, "key");
        return TABLE.stream().filter(v -> v.isFixedKey() && v.matches(key)).findFirst()
                .or(() -> TABLE.stream().filter(v -> !v.isFixedKey() && v.matches(key)).findFirst());
    }

    /** The scheduler's message for a node without {@code key}. */
    public String missing(String key) {
        return missingMessage.replace("<key>", key);
    }

    /** The scheduler's message for a value that lists no device on {@code node}. */
    public String empty(String node) {
        return emptyMessage.replace("<node>", node);
    }
}
