package io.tenantgateway.webhook.policy;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.common.config.ConfigException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.dataformat.yaml.YAMLMapper;

/**
 * HAMi's device configuration: the {@code device-config.yaml} key of ConfigMap {@code hami-scheduler-device}. Read
 * from the same YAML HAMi reads (or from the whole ConfigMap manifest); a vendor block or key that is missing gets
 * HAMi's documented default. Unknown keys are ignored, as HAMi's YAML decoder ignores them.
 *
 * <p>Other vendors' blocks ({@code cambricon:}, {@code hygon:}, {@code vnpus:}, … as HAMi's chart writes them) are
 * read without failing and named in {@link #otherVendors()}: NVIDIA is the one vendor implemented, and the
 * caller says so once.
 *
 * <p>To add a vendor: a record for its block, a field here, and one {@link Vendor} class in {@link #vendors()}.
 *
 * @param nvidia the {@code nvidia:} block
 * @param otherVendors the other top-level blocks present (non-empty), in file order: configured but not implemented
 */
public record DeviceConfig(NvidiaConfig nvidia, List<String> otherVendors) {

    /** The ConfigMap key HAMi reads. */
    public static final String CONFIG_MAP_KEY = "device-config.yaml";
    /** The top-level key of the one implemented vendor. */
    public static final String NVIDIA_BLOCK = "nvidia";

    public DeviceConfig {
        requireNonNull(nvidia, "nvidia");
        otherVendors = List.copyOf(requireNonNull(otherVendors, "otherVendors"));
    }

    public DeviceConfig(NvidiaConfig nvidia) {
        this(nvidia, List.of());
    }

    public static DeviceConfig defaults() {
        return new DeviceConfig(NvidiaConfig.defaults());
    }

    /** The vendors whose admission rules apply, in HAMi's order. */
    public List<Vendor> vendors() {
        return List.of(new NvidiaVendor(nvidia));
    }

    /**
     * Reads a {@code device-config.yaml} file (or a ConfigMap manifest holding one).
     *
     * @throws ConfigException when the file is missing or unreadable, or its content is wrong (the message names
     *     the file and the key)
     */
    public static DeviceConfig load(Path file) {
        requireNonNull(file, "file");
        String yaml;
        try {
            yaml = Files.readString(file, StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            throw new ConfigException("--device-config", file + " does not exist", "HAMi's device-config.yaml", e);
        } catch (IOException e) {
            throw ConfigException.of("--device-config", "cannot read " + file + ": " + e.getMessage(), e);
        }
        return parse(yaml, file.toString());
    }

    /**
     * Parses YAML text.
     *
     * @param source named in error messages (a file name, {@code ConfigMap kube-system/hami-scheduler-device})
     * @throws ConfigException naming {@code source}, the key, the value and what was expected
     */
    public static DeviceConfig parse(String yaml, String source) {
        requireNonNull(yaml, "yaml");
        JsonNode root = readYaml(yaml, source);
        if (root.isObject() && "ConfigMap".equals(root.path("kind").asString(""))) {
            JsonNode embedded = root.path("data").path(CONFIG_MAP_KEY);
            if (!embedded.isString()) {
                throw new ConfigException(source, "ConfigMap has no data." + CONFIG_MAP_KEY,
                        "HAMi's hami-scheduler-device ConfigMap");
            }
            source = source + " data." + CONFIG_MAP_KEY;
            root = readYaml(embedded.stringValue(), source);
        }
        if (root.isMissingNode() || root.isNull()) {
            return defaults();
        }
        if (!root.isObject()) {
            throw new ConfigException(source, "top level is " + JsonTypes.describe(root),
                    "a mapping with an nvidia: block");
        }
        List<String> others = new ArrayList<>();
        for (Map.Entry<String, JsonNode> block : root.properties()) {
            JsonNode value = block.getValue();
            boolean empty = value.isNull() || (value.isContainer() && value.isEmpty());
            if (!block.getKey().equals(NVIDIA_BLOCK) && !empty) {
                others.add(block.getKey());
            }
        }
        try {
            return new DeviceConfig(parseNvidia(new Block(root.get(NVIDIA_BLOCK), source + ": nvidia")), others);
        } catch (IllegalArgumentException e) {
            throw e.getMessage().startsWith(source) ? e : ConfigException.of(source, e.getMessage(), e);
        }
    }

    private static JsonNode readYaml(String yaml, String source) {
        try {
            return YAMLMapper.builder().build().readTree(yaml);
        } catch (JacksonException e) {
            throw ConfigException.of(source, "not valid YAML: " + e.getOriginalMessage(), e);
        }
    }

    private static NvidiaConfig parseNvidia(Block block) {
        NvidiaConfig d = NvidiaConfig.defaults();
        return new NvidiaConfig(
                block.string("resourceCountName", d.resourceCountName()),
                block.string("resourceMemoryName", d.resourceMemoryName()),
                block.string("resourceMemoryPercentageName", d.resourceMemoryPercentageName()),
                block.string("resourceCoreName", d.resourceCoreName()),
                block.string("resourcePriorityName", d.resourcePriorityName()),
                block.bool("overwriteEnv", d.overwriteEnv()),
                block.integer("defaultMemory", d.defaultMemory()),
                block.integer("defaultCores", d.defaultCores()),
                block.integer("defaultGPUNum", d.defaultGpuNum()),
                (int) Math.min(Integer.MAX_VALUE, block.integer("memoryFactor", d.memoryFactor())),
                block.string("gpuCorePolicy", d.gpuCorePolicy()),
                block.string("runtimeClassName", d.runtimeClassName()),
                block.integer("deviceSplitCount", d.deviceSplitCount()),
                block.decimal("deviceMemoryScaling", d.deviceMemoryScaling()),
                block.decimal("deviceCoreScaling", d.deviceCoreScaling()));
    }

    /** Typed reads from one YAML block; errors name the key, the value and what was expected. */
    private record Block(JsonNode node, String path) {
        Block {
            if (node != null && !node.isNull() && !node.isObject()) {
                throw new ConfigException(path, JsonTypes.describe(node), "a mapping");
            }
        }

        private JsonNode value(String key) {
            if (node == null || node.isNull()) {
                return null;
            }
            JsonNode value = node.get(key);
            return value == null || value.isNull() ? null : value;
        }

        String string(String key, String fallback) {
            JsonNode value = value(key);
            if (value == null) {
                return fallback;
            }
            if (!value.isValueNode() || value.isBoolean()) {
                throw new ConfigException(path + "." + key, JsonTypes.describe(value), "a string");
            }
            return value.asString();
        }

        boolean bool(String key, boolean fallback) {
            JsonNode value = value(key);
            if (value == null) {
                return fallback;
            }
            if (!value.isBoolean()) {
                throw new ConfigException(path + "." + key, "'" + value.asString() + "'", "true or false");
            }
            return value.booleanValue();
        }

        long integer(String key, long fallback) {
            JsonNode value = value(key);
            if (value == null) {
                return fallback;
            }
            if (!value.isIntegralNumber()) {
                throw new ConfigException(path + "." + key, "'" + value.asString() + "'", "a whole number");
            }
            return value.longValue();
        }

        double decimal(String key, double fallback) {
            JsonNode value = value(key);
            if (value == null) {
                return fallback;
            }
            if (!value.isNumber()) {
                throw new ConfigException(path + "." + key, "'" + value.asString() + "'", "a number");
            }
            return value.doubleValue();
        }
    }
}
