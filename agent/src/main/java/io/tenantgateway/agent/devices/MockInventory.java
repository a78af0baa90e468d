package io.tenantgateway.agent.devices;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.common.config.ConfigException;
import io.tenantgateway.hami.GpuDevice;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.dataformat.yaml.YAMLMapper;

/**
 * The simulated devices of a node, from configuration: NVIDIA GPUs and, in mock mode, Hygon DCUs and Ascend chips
 * ({@link VendorPreset}). Either YAML/JSON:
 *
 * <pre>
 * hamiVnpuCore: false        # Ascend: node annotation hami-vnpu-core and devcore 100 (default false: template mode)
 * devices:
 *   - preset: L4-24GB        # or name: "NVIDIA L4" plus memoryMiB: 23034
 *     count: 2               # GPUs of this kind (default 1)
 *     splitCount: 10         # HAMi "count" (default: --device-split-count)
 *     cores: 100             # HAMi "devcore" (default 100)
 *     numa: 0                # default 0
 *     mode: hami-core        # default hami-core
 *     healthy: true          # default true
 *   - preset: Ascend910B4    # a Hygon or Ascend preset takes only count and healthy
 *     count: 2
 * </pre>
 *
 * or the shorthand {@code A100-80GB} / {@code L4-24GB:2} / {@code A100-80GB,L4-24GB:2}
 * (preset, optional {@code :count}): {@link #parseShorthand} for {@code --mock-gpus} (NVIDIA presets only, as
 * before), {@link #parseDevices} for {@code --mock-devices} (every preset, e.g. {@code Ascend910B4:2,DCU-K100}).
 *
 * <p>What is wrong in either is a {@link ConfigException} naming the flag or the file and entry. Simulated devices
 * are objects on the heap (and replicas in the device plugins): at most {@value #MAX_PER_ENTRY} per entry and
 * {@value #MAX_DEVICES} in all, more than any node has.
 *
 * @param entries       the NVIDIA GPU kinds, in index order
 * @param vendorEntries the Hygon and Ascend parts, in inventory order (each vendor's devices are indexed in this
 *                      order); at least one entry in all
 * @param hamiVnpuCore  Ascend's hami-vnpu-core mode: devcore 100 and node annotation {@code hami-vnpu-core: "true"}
 *                      (default: template mode, devcore aiCore, {@code "false"})
 */
public record MockInventory(List<Entry> entries, List<VendorEntry> vendorEntries, boolean hamiVnpuCore) {

    private static final Set<String> ENTRY_KEYS =
            Set.of("preset", "name", "memoryMiB", "count", "splitCount", "cores", "numa", "mode", "healthy");
    private static final Set<String> VENDOR_ENTRY_KEYS = Set.of("preset", "count", "healthy");
    private static final String DEVICES_FLAG = "--mock-devices";
    /** The most simulated devices (GPUs, DCUs, chips) of one entry. */
    public static final int MAX_PER_ENTRY = 64;
    /** The most simulated devices of an inventory, every vendor's together. */
    public static final int MAX_DEVICES = 256;

    public MockInventory {
        requireNonNull(entries, "entries");
        requireNonNull(vendorEntries, "vendorEntries");
        if (entries.isEmpty() && vendorEntries.isEmpty()) {
            throw new ConfigException("mock inventory", "no devices", "at least one entry");
        }
        requireTotal("mock inventory", total(entries, vendorEntries));
        entries = List.copyOf(entries);
        vendorEntries = List.copyOf(vendorEntries);
    }

    /** NVIDIA GPUs only. */
    public MockInventory(List<Entry> entries) {
        this(entries, List.of(), false);
    }

    /** Every simulated device of {@code entries} and {@code vendorEntries}. */
    static long total(List<Entry> entries, List<VendorEntry> vendorEntries) {
        return entries.stream().mapToLong(Entry::count).sum() + vendorEntries.stream().mapToLong(VendorEntry::count)
                .sum();
    }

    /** {@code total} when it is at most {@link #MAX_DEVICES}; else a {@link ConfigException} naming {@code flag}. */
    static void requireTotal(String flag, long total) {
        if (total > MAX_DEVICES) {
            throw new ConfigException(flag, total + " simulated devices", "at most " + MAX_DEVICES + " in all, "
                    + MAX_PER_ENTRY + " per entry");
        }
    }

    /** {@code count} of a flag's {@code piece} when it is 1 to {@link #MAX_PER_ENTRY}; else naming the flag. */
    private static int requireCount(String flag, String piece, String name, int count) {
        if (count <= 0 || count > MAX_PER_ENTRY) {
            throw new ConfigException(flag, piece, "PRESET[:N] with N from 1 to " + MAX_PER_ENTRY + ", e.g. " + name
                    + ":2; at most " + MAX_DEVICES + " simulated devices in all");
        }
        return count;
    }

    /** The number of simulated NVIDIA GPUs. */
    public int gpuCount() {
        return entries.stream().mapToInt(Entry::count).sum();
    }

    /**
     * One kind of simulated GPU.
     *
     * @param modelName  model name as nvidia-smi prints it (the HAMi type gets the NVIDIA prefix rule)
     * @param memoryMiB  device memory in MiB
     * @param count      how many GPUs of this kind
     * @param splitCount HAMi split count, or {@code null} for the registration default
     * @param cores      HAMi devcore, 100 = whole GPU
     * @param numa       NUMA node
     * @param mode       HAMi mode
     * @param healthy    registered healthy
     */
    public record Entry(String modelName, int memoryMiB, int count, Integer splitCount, int cores, int numa,
                        String mode, boolean healthy) {
        public Entry {
            requireNonNull(modelName, "modelName");
            requireNonNull(mode, "mode");
            if (modelName.isBlank()) {
                throw new ConfigException("mock inventory", "name: ''", "a GPU model name");
            }
            requirePositive(modelName, "memoryMiB", memoryMiB);
            requirePositive(modelName, "count", count);
            if (count > MAX_PER_ENTRY) {
                throw new ConfigException("mock inventory", modelName + ": count: " + count, "at most "
                        + MAX_PER_ENTRY + " per entry");
            }
            if (splitCount != null) {
                requirePositive(modelName, "splitCount", splitCount);
            }
            if (cores < 0 || cores > 100) {
                throw new ConfigException("mock inventory", modelName + ": cores: " + cores, "0..100");
            }
            if (numa < 0) {
                throw new ConfigException("mock inventory", modelName + ": numa: " + numa, ">= 0");
            }
        }

        /** {@code count} GPUs of a preset model with default settings. */
        public static Entry of(GpuPreset preset, int count) {
            return new Entry(preset.modelName(), preset.memoryMiB(), count, null, 100, 0,
                    GpuDevice.MODE_HAMI_CORE, true);
        }

        private static void requirePositive(String model, String field, int value) {
            if (value <= 0) {
                throw new ConfigException("mock inventory", model + ": " + field + ": " + value, "> 0");
            }
        }
    }

    /**
     * Simulated Hygon or Ascend devices of one preset.
     *
     * @param preset  the part
     * @param count   how many devices (DCUs, chips) of it
     * @param healthy registered healthy
     */
    public record VendorEntry(VendorPreset preset, int count, boolean healthy) {
        public VendorEntry {
            requireNonNull(preset, "preset");
            if (count <= 0) {
                throw new ConfigException("mock inventory", preset.presetName() + ": count: " + count, "> 0");
            }
            if (count > MAX_PER_ENTRY) {
                throw new ConfigException("mock inventory", preset.presetName() + ": count: " + count, "at most "
                        + MAX_PER_ENTRY + " per entry");
            }
        }

        /** {@code count} healthy devices of {@code preset}. */
        public static VendorEntry of(VendorPreset preset, int count) {
            return new VendorEntry(preset, count, true);
        }
    }

    /** Convenience: an inventory of one preset kind. */
    public static MockInventory of(GpuPreset preset, int count) {
        return new MockInventory(List.of(Entry.of(preset, count)));
    }

    /**
     * Parses the shorthand {@code PRESET[:COUNT][,PRESET[:COUNT]…]}, e.g. {@code L4-24GB:2}.
     *
     * @throws ConfigException naming the piece that is not a known preset or count
     */
    public static MockInventory parseShorthand(String text) {
        requireNonNull(text, "text");
        List<Entry> entries = new ArrayList<>();
        for (String piece : text.split(",")) {
            String p = piece.strip();
            if (p.isEmpty()) {
                continue;
            }
            int colon = p.indexOf(':');
            String name = colon < 0 ? p : p.substring(0, colon);
            int count = 1;
            if (colon >= 0) {
                try {
                    count = Integer.parseInt(p.substring(colon + 1).strip());
                } catch (NumberFormatException e) {
                    throw new ConfigException("--mock-gpus", "'" + p + "'", "PRESET[:COUNT], e.g. L4-24GB:2", e);
                }
                requireCount("--mock-gpus", p, name.strip(), count);
            }
            entries.add(Entry.of(nvidiaPreset(name), count));
        }
        if (entries.isEmpty()) {
            throw new ConfigException("--mock-gpus", "'" + text + "'", "PRESET[:COUNT], one of " + GpuPreset.names());
        }
        requireTotal("--mock-gpus", total(entries, List.of()));
        return new MockInventory(entries);
    }

    /** A {@code --mock-gpus} name: NVIDIA only; a Hygon or Ascend part is pointed to {@code --mock-devices}. */
    private static GpuPreset nvidiaPreset(String name) {
        Optional<GpuPreset> preset = GpuPreset.byName(name);
        if (preset.isPresent()) {
            return preset.get();
        }
        // Only on this error path does a pure-NVIDIA node load the vendor table.
        if (VendorPreset.byName(name).isPresent()) {
            throw new ConfigException("--mock-gpus", name, "an NVIDIA preset, one of " + GpuPreset.names()
                    + "; Hygon and Ascend parts go in --mock-devices, e.g. --mock-devices=" + name.strip());
        }
        return preset(name, "--mock-gpus");
    }

    /**
     * Parses {@code --mock-devices}: {@code PRESET[:N][,PRESET[:N]…]} over every preset, NVIDIA's
     * ({@link GpuPreset}) and Hygon's and Ascend's ({@link VendorPreset}), e.g.
     * {@code Ascend910B4:2,DCU-K100:1,A100-80GB:1}. NVIDIA entries are what {@link #parseShorthand} makes of them.
     *
     * @throws ConfigException {@code --mock-devices: <piece> (expected: …)} naming every preset
     */
    public static MockInventory parseDevices(String text) {
        requireNonNull(text, "text");
        List<Entry> entries = new ArrayList<>();
        List<VendorEntry> vendorEntries = new ArrayList<>();
        for (String piece : text.split(",")) {
            String p = piece.strip();
            if (p.isEmpty()) {
                continue;
            }
            int colon = p.indexOf(':');
            String name = (colon < 0 ? p : p.substring(0, colon)).strip();
            int count = 1;
            if (colon >= 0) {
                try {
                    count = Integer.parseInt(p.substring(colon + 1).strip());
                } catch (NumberFormatException e) {
                    throw new ConfigException(DEVICES_FLAG, p, "PRESET[:N] with N > 0, e.g. " + name + ":2", e);
                }
                requireCount(DEVICES_FLAG, p, name, count);
            }
            Optional<GpuPreset> nvidia = GpuPreset.byName(name);
            if (nvidia.isPresent()) {
                entries.add(Entry.of(nvidia.get(), count));
                continue;
            }
            VendorPreset vendor = VendorPreset.byName(name).orElseThrow(() -> new ConfigException(DEVICES_FLAG, p,
                    devicesExpected()));
            vendorEntries.add(VendorEntry.of(vendor, count));
        }
        if (entries.isEmpty() && vendorEntries.isEmpty()) {
            throw new ConfigException(DEVICES_FLAG, "'" + text + "'", devicesExpected());
        }
        requireTotal(DEVICES_FLAG, total(entries, vendorEntries));
        return new MockInventory(entries, vendorEntries, false);
    }

    private static String devicesExpected() {
        return "PRESET[:N],… with PRESET one of " + allPresetNames();
    }

    /** Every preset's name, NVIDIA's first. */
    static String allPresetNames() {
        return GpuPreset.names() + ", " + VendorPreset.names();
    }

    /** Reads an inventory file (YAML or JSON; see the class comment). */
    public static MockInventory load(Path file) throws IOException {
        return parse(Files.readString(file, StandardCharsets.UTF_8), file.toString());
    }

    /**
     * Parses YAML or JSON text (JSON is YAML).
     *
     * @param source where the text came from, for error messages
     */
    public static MockInventory parse(String text, String source) {
        JsonNode root;
        try {
            root = YAMLMapper.builder().build().readTree(text);
        } catch (JacksonException e) {
            throw ConfigException.of(source, "not valid YAML (" + e.getOriginalMessage() + ")", e);
        }
        JsonNode devices = root == null ? null : root.get("devices");
        if (devices == null || !devices.isArray()) {
            throw new ConfigException(source, "no 'devices' list", "devices: [ {preset: L4-24GB, count: 2} ]");
        }
        List<Entry> entries = new ArrayList<>();
        List<VendorEntry> vendorEntries = new ArrayList<>();
        for (int i = 0; i < devices.size(); i++) {
            String where = source + ": devices[" + i + "]";
            JsonNode node = devices.get(i);
            Optional<VendorPreset> vendor = vendorPreset(node);
            if (vendor.isPresent()) {
                vendorEntries.add(parseVendorEntry(node, vendor.get(), where));
            } else {
                entries.add(parseEntry(node, where));
            }
        }
        JsonNode vnpuCore = root.get("hamiVnpuCore");
        if (vnpuCore != null && !vnpuCore.isBoolean()) {
            throw new ConfigException(source + ": hamiVnpuCore", vnpuCore, "true or false");
        }
        boolean hamiVnpuCore = vnpuCore != null && vnpuCore.booleanValue();
        requireTotal(source, total(entries, vendorEntries));
        return new MockInventory(entries, vendorEntries, hamiVnpuCore);
    }

    /** The entry's Hygon or Ascend preset, if it names one (an NVIDIA name never loads the vendor table). */
    private static Optional<VendorPreset> vendorPreset(JsonNode node) {
        if (node == null || !node.isObject() || !node.has("preset") || !node.get("preset").isString()) {
            return Optional.empty();
        }
        String name = node.get("preset").stringValue();
        return GpuPreset.byName(name).isPresent() ? Optional.empty() : VendorPreset.byName(name);
    }

    private static VendorEntry parseVendorEntry(JsonNode node, VendorPreset preset, String where) {
        for (Map.Entry<String, JsonNode> property : node.properties()) {
            if (!VENDOR_ENTRY_KEYS.contains(property.getKey())) {
                throw ConfigException.of(where, "key '" + property.getKey() + "' does not apply to "
                        + preset.presetName() + " (expected one of: "
                        + String.join(", ", VENDOR_ENTRY_KEYS.stream().sorted().toList()) + ")");
            }
        }
        int count = node.has("count") ? integer(node, "count", where) : 1;
        boolean healthy = !node.has("healthy") || bool(node, "healthy", where);
        try {
            return new VendorEntry(preset, count, healthy);
        } catch (IllegalArgumentException e) {
            throw ConfigException.of(where, e.getMessage(), e);
        }
    }

    private static Entry parseEntry(JsonNode node, String where) {
        if (node == null || !node.isObject()) {
            throw new ConfigException(where, node, "a mapping with preset or name");
        }
        for (Map.Entry<String, JsonNode> property : node.properties()) {
            if (!ENTRY_KEYS.contains(property.getKey())) {
                throw ConfigException.of(where, "unknown key '" + property.getKey()
                        + "' (expected one of: " + String.join(", ", ENTRY_KEYS.stream().sorted().toList()) + ")");
            }
        }
        GpuPreset preset = node.has("preset") ? filePreset(text(node, "preset", where), where + ".preset") : null;
        String name = node.has("name") ? text(node, "name", where) : preset == null ? null : preset.modelName();
        if (name == null) {
            throw new ConfigException(where, "neither preset nor name",
                    "preset: " + allPresetNames() + ", or name plus memoryMiB");
        }
        Integer memory = null;
        if (node.has("memoryMiB")) {
            memory = integer(node, "memoryMiB", where);
        } else if (preset != null) {
            memory = preset.memoryMiB();
        }
        if (memory == null) {
            throw new ConfigException(where, "name '" + name + "' without memoryMiB", "the MiB nvidia-smi reports");
        }
        try {
            return new Entry(name, memory,
                    node.has("count") ? integer(node, "count", where) : 1,
                    node.has("splitCount") ? integer(node, "splitCount", where) : null,
                    node.has("cores") ? integer(node, "cores", where) : 100,
                    node.has("numa") ? integer(node, "numa", where) : 0,
                    node.has("mode") ? text(node, "mode", where) : GpuDevice.MODE_HAMI_CORE,
                    !node.has("healthy") || bool(node, "healthy", where));
        } catch (IllegalArgumentException e) {
            throw ConfigException.of(where, e.getMessage(), e);
        }
    }

    private static GpuPreset preset(String name, String where) {
        return GpuPreset.byName(name).orElseThrow(() -> ConfigException.of(where,
                "unknown preset '" + name + "' (expected one of: " + GpuPreset.names() + ")"));
    }

    /** An inventory file's preset: NVIDIA's, or (checked before, see {@link #vendorPreset}) Hygon's or Ascend's. */
    private static GpuPreset filePreset(String name, String where) {
        return GpuPreset.byName(name).orElseThrow(() -> ConfigException.of(where,
                "unknown preset '" + name + "' (expected one of: " + allPresetNames() + ")"));
    }

    private static String text(JsonNode node, String key, String where) {
        JsonNode v = node.get(key);
        if (!v.isString()) {
            throw new ConfigException(where + "." + key, v, "a string");
        }
        return v.stringValue();
    }

    private static int integer(JsonNode node, String key, String where) {
        JsonNode v = node.get(key);
        if (!v.isIntegralNumber() || !v.canConvertToInt()) {
            throw new ConfigException(where + "." + key, v, "an integer");
        }
        return v.intValue();
    }

    private static boolean bool(JsonNode node, String key, String where) {
        JsonNode v = node.get(key);
        if (!v.isBoolean()) {
            throw new ConfigException(where + "." + key, v, "true or false");
        }
        return v.booleanValue();
    }
}
