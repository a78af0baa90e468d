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
import java.util.Set;

import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.dataformat.yaml.YAMLMapper;

/**
 * The simulated GPUs of a node, from configuration. Either YAML/JSON:
 *
 * <pre>
 * devices:
 *   - preset: L4-24GB        # or name: "NVIDIA L4" plus memoryMiB: 23034
 *     count: 2               # GPUs of this kind (default 1)
 *     splitCount: 10         # HAMi "count" (default: --device-split-count)
 *     cores: 100             # HAMi "devcore" (default 100)
 *     numa: 0                # default 0
 *     mode: hami-core        # default hami-core
 *     healthy: true          # default true
 * </pre>
 *
 * or the shorthand {@code A100-80GB} / {@code L4-24GB:2} / {@code A100-80GB,L4-24GB:2}
 * (preset, optional {@code :count}).
 *
 * <p>What is wrong in either is a {@link ConfigException} naming the flag or the file and entry.
 *
 * @param entries the GPU kinds, in index order; at least one
 */
public record MockInventory(List<Entry> entries) {

    private static final Set<String> ENTRY_KEYS =
            Set.of("preset", "name", "memoryMiB", "count", "splitCount", "cores", "numa", "mode", "healthy");

    public MockInventory {
        requireNonNull(entries, "entries");
        if (entries.isEmpty()) {
            throw new ConfigException("mock inventory", "no devices", "at least one entry");
        }
        entries = List.copyOf(entries);
    }

    /** The number of simulated GPUs. */
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
            }
            entries.add(Entry.of(preset(name, "--mock-gpus"), count));
        }
        if (entries.isEmpty()) {
            throw new ConfigException("--mock-gpus", "'" + text + "'", "PRESET[:COUNT], one of " + GpuPreset.names());
        }
        return new MockInventory(entries);
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
        for (int i = 0; i < devices.size(); i++) {
            entries.add(parseEntry(devices.get(i), source + ": devices[" + i + "]"));
        }
        return new MockInventory(entries);
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
        GpuPreset preset = node.has("preset") ? preset(text(node, "preset", where), where + ".preset") : null;
        String name = node.has("name") ? text(node, "name", where) : preset == null ? null : preset.modelName();
        if (name == null) {
            throw new ConfigException(where, "neither preset nor name",
                    "preset: " + GpuPreset.names() + ", or name plus memoryMiB");
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
