package io.tenantgateway.webhook.policy;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.common.config.ConfigException;
import java.io.IOException;
import java.io.InputStream;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.dataformat.yaml.YAMLMapper;

/**
 * HAMi's device configuration: the {@code device-config.yaml} key of ConfigMap {@code hami-scheduler-device}. Read
 * from the same YAML HAMi reads (or from the whole ConfigMap manifest). Unknown keys are ignored, as HAMi's YAML
 * decoder ignores them.
 *
 * <p>Every vendor block is read: {@code nvidia:} fully (a missing block or key gets HAMi's default), the other
 * vendors' resource names ({@link #CHART_BLOCKS}), {@code vnpus:} (Ascend chips, a list or
 * {@code {hamiVnpuCore, configs}}) and {@code iluvatars:}. As in HAMi, a file without a vendor's block gives that
 * vendor empty resource names, so it matches nothing; with no file at all ({@link #defaults()}) every vendor gets
 * what HAMi's chart (v2.10) writes.
 *
 * @param nvidia the {@code nvidia:} block
 * @param blocks the other mapping blocks by top-level key ({@code cambricon}, {@code hygon}, {@code metax},
 *     {@code enflame}, {@code mthreads}, {@code kunlun}, {@code awsneuron}, {@code amd}, {@code vastai},
 *     {@code biren}); an absent one is {@link VendorBlock#EMPTY}
 * @param vnpus the Ascend chips ({@code vnpus}), in file order
 * @param iluvatars the Iluvatar chips ({@code iluvatars}), in file order
 */
public record DeviceConfig(NvidiaConfig nvidia, Map<String, VendorBlock> blocks, List<AscendChip> vnpus,
        List<IluvatarChip> iluvatars) {

    /** The ConfigMap key HAMi reads. */
    public static final String CONFIG_MAP_KEY = "device-config.yaml";
    public static final String NVIDIA_BLOCK = "nvidia";
    public static final String ASCEND_BLOCK = "vnpus";
    public static final String ILUVATAR_BLOCK = "iluvatars";

    /**
     * The largest {@code device-config.yaml} read, in bytes (1 MiB, the most a Kubernetes ConfigMap holds): a file
     * or ConfigMap value over it is refused before it is parsed.
     */
    public static final int MAX_BYTES = 1024 * 1024;
    /** At most this many {@code vnpus} entries, and as many {@code iluvatars} entries (HAMi's chart has 7 and 4). */
    public static final int MAX_CHIPS = 4096;
    /** At most this many {@code templates} per Ascend chip (HAMi's chart has at most 4). */
    public static final int MAX_TEMPLATES = 64;
    /** Go's {@code int32} maximum: HAMi reads most counts and factors into {@code int32} fields. */
    static final long INT32_MAX = Integer.MAX_VALUE;

    /**
     * The other vendors' mapping blocks, the resource-name keys the webhook reads from each, and the values HAMi's
     * chart (v2.10) writes. Enflame's {@code resourceNameVGCU}/{@code resourceNameVGCUPercentage} are v2.9's keys
     * (v2.10 reads {@code resourceNameVGCU} only as a fallback DRS name).
     */
    public static final Map<String, Map<String, String>> CHART_BLOCKS = chartBlocks();

    public DeviceConfig {
        requireNonNull(nvidia, "nvidia");
        blocks = Map.copyOf(requireNonNull(blocks, "blocks"));
        vnpus = List.copyOf(requireNonNull(vnpus, "vnpus"));
        iluvatars = List.copyOf(requireNonNull(iluvatars, "iluvatars"));
    }

    /** The given NVIDIA settings and every other vendor as HAMi's chart configures it. */
    public DeviceConfig(NvidiaConfig nvidia) {
        this(nvidia, chartVendorBlocks(), chartAscendChips(), chartIluvatarChips());
    }

    /** No file: HAMi's defaults for NVIDIA, HAMi's chart for the others. */
    public static DeviceConfig defaults() {
        return new DeviceConfig(NvidiaConfig.defaults());
    }

    /** A vendor's block; {@link VendorBlock#EMPTY} when the file has none. */
    public VendorBlock block(String key) {
        return blocks.getOrDefault(key, VendorBlock.EMPTY);
    }

    /** The vendor backends of this configuration under a policy, in the webhook's fixed order ({@link VendorCatalog}). */
    public List<Vendor> vendors(PolicyConfig policy) {
        return vendors(policy, ClusterDeviceState.DEFAULTS);
    }

    /** As {@link #vendors(PolicyConfig)}, with the scheduler-side state the AWS Neuron and Enflame backends read. */
    public List<Vendor> vendors(PolicyConfig policy, ClusterDeviceState state) {
        return VendorCatalog.vendors(this, policy, requireNonNull(state, "state"));
    }

    /**
     * Reads a {@code device-config.yaml} file (or a ConfigMap manifest holding one).
     *
     * @throws ConfigException when the file is missing or unreadable, or its content is wrong (the message names
     *     the file and the key)
     */
    public static DeviceConfig load(Path file) {
        return parse(read(file), source(file));
    }

    /** How errors name a file: {@code --device-config /etc/hami/device-config.yaml}. */
    private static String source(Path file) {
        return "--device-config " + file;
    }

    /**
     * Only the {@code nvidia:} block of a {@code device-config.yaml} file (or a ConfigMap manifest holding one), for
     * the node-side parts that read nothing else: a pure-NVIDIA node then builds none of the other vendors' config
     * (no Ascend or Iluvatar chip classes loaded; DevicePluginRunIT).
     *
     * @throws ConfigException as {@link #load}, for the file and its nvidia block
     */
    public static NvidiaConfig loadNvidia(Path file) {
        Document document = document(read(file), source(file));
        if (document.root() == null) {
            return NvidiaConfig.defaults();
        }
        try {
            return parseNvidia(new Block(document.root().get(NVIDIA_BLOCK), document.source() + ": nvidia"));
        } catch (IllegalArgumentException | JacksonException e) {
            throw InvalidDeviceConfigException.of(InvalidDeviceConfigException.Problem.INVALID_VALUE,
                    document.source(), e);
        }
    }

    /** The file's text, refused unread past {@link #MAX_BYTES} (a 20 MB file would fill the agent's heap). */
    private static String read(Path file) {
        requireNonNull(file, "file");
        try (InputStream in = Files.newInputStream(file)) {
            byte[] bytes = in.readNBytes(MAX_BYTES + 1);
            if (bytes.length > MAX_BYTES) {
                throw tooLarge(source(file), Math.max(bytes.length, Files.size(file)) + " bytes");
            }
            return new String(bytes, StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            throw new ConfigException("--device-config", file + " does not exist", "HAMi's device-config.yaml", e);
        } catch (IOException e) {
            throw ConfigException.of("--device-config", "cannot read " + file + ": " + e.getMessage(), e);
        }
    }

    /** The document's root mapping ({@code null}: empty) and the name its errors give, a ConfigMap unwrapped. */
    private record Document(JsonNode root, String source) {
    }

    private static InvalidDeviceConfigException tooLarge(String source, String size) {
        return new InvalidDeviceConfigException(InvalidDeviceConfigException.Problem.TOO_LARGE, source, size,
                "at most " + MAX_BYTES + " bytes, 1 MiB: the most a Kubernetes ConfigMap holds");
    }

    /** The UTF-8 length of {@code text}, counted without encoding it (a lone surrogate counts 3). */
    static long utf8Length(String text) {
        return io.tenantgateway.common.text.PeerText.utf8Length(text);
    }

    private static Document document(String yaml, String source) {
        requireNonNull(yaml, "yaml");
        if (yaml.length() > MAX_BYTES || utf8Length(yaml) > MAX_BYTES) {
            throw tooLarge(source, utf8Length(yaml) + " bytes");
        }
        JsonNode root = readYaml(yaml, source);
        if (root.isObject() && "ConfigMap".equals(root.path("kind").asString(""))) {
            JsonNode embedded = root.path("data").path(CONFIG_MAP_KEY);
            if (!embedded.isString()) {
                throw new InvalidDeviceConfigException(InvalidDeviceConfigException.Problem.NO_KEY, source,
                        "ConfigMap has no data." + CONFIG_MAP_KEY, "HAMi's hami-scheduler-device ConfigMap");
            }
            source = source + " data." + CONFIG_MAP_KEY;
            root = readYaml(embedded.stringValue(), source);
        }
        if (root.isMissingNode() || root.isNull()) {
            return new Document(null, source);
        }
        if (!root.isObject()) {
            throw new InvalidDeviceConfigException(InvalidDeviceConfigException.Problem.INVALID_VALUE, source,
                    "top level is " + JsonTypes.describe(root), "a mapping with an nvidia: block");
        }
        return new Document(root, source);
    }

    /**
     * Parses YAML text.
     *
     * @param source named in error messages (a file name, {@code ConfigMap kube-system/hami-scheduler-device})
     * @throws InvalidDeviceConfigException naming {@code source}, the key, the value and what was expected, and
     *     what kind of problem it is (for metrics)
     */
    public static DeviceConfig parse(String yaml, String source) {
        Document document = document(yaml, source);
        if (document.root() == null) {
            return defaults();
        }
        JsonNode root = document.root();
        source = document.source();
        try {
            Map<String, VendorBlock> blocks = new LinkedHashMap<>();
            for (Map.Entry<String, Map<String, String>> known : CHART_BLOCKS.entrySet()) {
                Block block = new Block(root.get(known.getKey()), source + ": " + known.getKey());
                Map<String, String> values = new LinkedHashMap<>();
                for (String key : known.getValue().keySet()) {
                    String value = key.equals("memoryFactor")
                            ? memoryFactor(block) : block.string(key, null);
                    if (value != null) {
                        values.put(key, value);
                    }
                }
                blocks.put(known.getKey(), new VendorBlock(values));
            }
            return new DeviceConfig(parseNvidia(new Block(root.get(NVIDIA_BLOCK), source + ": nvidia")), blocks,
                    parseAscend(root.get(ASCEND_BLOCK), source + ": " + ASCEND_BLOCK),
                    parseIluvatar(root.get(ILUVATAR_BLOCK), source + ": " + ILUVATAR_BLOCK));
        } catch (IllegalArgumentException | JacksonException e) {
            // A JacksonException here is a value the tree cannot convert: still the file's fault, named as such.
            throw InvalidDeviceConfigException.of(InvalidDeviceConfigException.Problem.INVALID_VALUE, source, e);
        }
    }

    /** A block's {@code memoryFactor}: a whole number in {@code 1..2^31-1}, or {@code null} when absent. */
    private static String memoryFactor(Block block) {
        JsonNode value = block.value("memoryFactor");
        if (value == null) {
            return null;
        }
        return Long.toString(block.integer("memoryFactor", 1, 1, INT32_MAX));
    }

    /** A YAML list of at most {@code max} entries. */
    private static List<JsonNode> list(JsonNode node, String path, int max) {
        if (node == null || node.isNull()) {
            return List.of();
        }
        if (!node.isArray()) {
            throw new ConfigException(path, JsonTypes.describe(node), "a list");
        }
        if (node.size() > max) {
            throw new ConfigException(path, node.size() + " entries", "at most " + max);
        }
        List<JsonNode> out = new ArrayList<>();
        node.forEach(out::add);
        return out;
    }

    private static List<AscendChip> parseAscend(JsonNode node, String path) {
        JsonNode configs = node;
        String configsPath = path;
        if (node != null && node.isObject()) {
            configs = node.get("configs");
            configsPath = path + ".configs";
        }
        List<AscendChip> chips = new ArrayList<>();
        List<JsonNode> entries = list(configs, configsPath, MAX_CHIPS);
        for (int i = 0; i < entries.size(); i++) {
            String at = configsPath + "[" + i + "]";
            Block b = new Block(entries.get(i), at);
            List<AscendChip.Template> templates = new ArrayList<>();
            List<JsonNode> templateNodes = list(b.value("templates"), at + ".templates", MAX_TEMPLATES);
            for (int t = 0; t < templateNodes.size(); t++) {
                Block tb = new Block(templateNodes.get(t), at + ".templates[" + t + "]");
                templates.add(new AscendChip.Template(tb.string("name", ""),
                        tb.integer("memory", 0, 0, Long.MAX_VALUE)));
            }
            // Memory in MiB (Go int64, never negative); memoryFactor Go int32, 0 (absent) read as 1.
            chips.add(new AscendChip(b.string("commonWord", ""), b.string("chipName", ""),
                    b.string("resourceName", ""), b.string("resourceMemoryName", ""),
                    b.string("resourceCoreName", ""), b.integer("memoryAllocatable", 0, 0, Long.MAX_VALUE),
                    b.integer("memoryCapacity", 0, 0, Long.MAX_VALUE),
                    (int) Math.max(1, b.integer("memoryFactor", 1, 0, INT32_MAX)), b.string("runtimeClassName", ""),
                    b.bool("overwriteEnv", false), templates, b.bool("superPod", false)));
        }
        return chips;
    }

    private static List<IluvatarChip> parseIluvatar(JsonNode node, String path) {
        List<IluvatarChip> chips = new ArrayList<>();
        List<JsonNode> entries = list(node, path, MAX_CHIPS);
        for (int i = 0; i < entries.size(); i++) {
            Block b = new Block(entries.get(i), path + "[" + i + "]");
            chips.add(new IluvatarChip(b.string("chipName", ""), b.string("commonWord", ""),
                    b.string("resourceCountName", ""), b.string("resourceMemoryName", ""),
                    b.string("resourceCoreName", "")));
        }
        return chips;
    }

    private static Map<String, Map<String, String>> chartBlocks() {
        Map<String, Map<String, String>> chart = new LinkedHashMap<>();
        chart.put("cambricon", names("resourceCountName", "cambricon.com/vmlu",
                "resourceMemoryName", "cambricon.com/mlu.smlu.vmemory", "resourceCoreName", "cambricon.com/mlu.smlu.vcore"));
        chart.put("hygon", names("resourceCountName", "hygon.com/dcunum", "resourceMemoryName", "hygon.com/dcumem",
                "resourceCoreName", "hygon.com/dcucores", "memoryFactor", "1"));
        chart.put("metax", names("resourceCountName", "metax-tech.com/gpu", "resourceVCountName", "metax-tech.com/sgpu",
                "resourceVMemoryName", "metax-tech.com/vmemory", "resourceVCoreName", "metax-tech.com/vcore"));
        chart.put("enflame", names("resourceNameGCU", "enflame.com/gcu", "resourceNameDRSGCU", "enflame.com/drs-gcu",
                "resourceNameGCUMemory", "enflame.com/gcu-memory", "resourceNameGCUCore", "enflame.com/gcu-core",
                "resourceNameVGCU", "enflame.com/vgcu", "resourceNameVGCUPercentage", "enflame.com/vgcu-percentage"));
        chart.put("mthreads", names("resourceCountName", "mthreads.com/vgpu", "resourceMemoryName",
                "mthreads.com/sgpu-memory", "resourceCoreName", "mthreads.com/sgpu-core"));
        chart.put("kunlun", names("resourceCountName", "kunlunxin.com/xpu", "resourceVCountName", "kunlunxin.com/vxpu",
                "resourceVMemoryName", "kunlunxin.com/vxpu-memory"));
        chart.put("awsneuron", names("resourceCountName", "aws.amazon.com/neuron", "resourceCoreName",
                "aws.amazon.com/neuroncore"));
        chart.put("amd", names("resourceCountName", "amd.com/gpu", "resourceMemoryName", "amd.com/gpumem",
                "resourceCoreName", "amd.com/gpucores"));
        chart.put("vastai", names("resourceCountName", "vastaitech.com/va"));
        chart.put("biren", names("resourceCountName", "birentech.com/gpu"));
        return Collections.unmodifiableMap(chart);
    }

    private static Map<String, String> names(String... keysAndValues) {
        Map<String, String> map = new LinkedHashMap<>();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            map.put(keysAndValues[i], keysAndValues[i + 1]);
        }
        return Collections.unmodifiableMap(map);
    }

    private static Map<String, VendorBlock> chartVendorBlocks() {
        Map<String, VendorBlock> blocks = new LinkedHashMap<>();
        CHART_BLOCKS.forEach((key, values) -> blocks.put(key, new VendorBlock(values)));
        return blocks;
    }

    /** HAMi's chart's {@code vnpus} (v2.10; Ascend910C's memoryFactor is not in the spec and taken as 1). */
    static List<AscendChip> chartAscendChips() {
        return List.of(
                AscendChip.chart("Ascend910A", "910A", 32768, 32768, 1, false, t("vir02", 2184), t("vir04", 4369),
                        t("vir08", 8738), t("vir16", 17476)),
                AscendChip.chart("Ascend910B2", "910B2", 65536, 65536, 1, false, t("vir03_1c_8g", 8192),
                        t("vir06_1c_16g", 16384), t("vir12_3c_32g", 32768)),
                AscendChip.chart("Ascend910B3", "910B3", 65536, 65536, 1, false, t("vir05_1c_16g", 16384),
                        t("vir10_3c_32g", 32768)),
                AscendChip.chart("Ascend910B4-1", "910B4-1", 65536, 65536, 1, false, t("vir05_1c_16g", 16384),
                        t("vir10_3c_32g", 32768)),
                AscendChip.chart("Ascend910B4", "910B4", 32768, 32768, 1, false, t("vir05_1c_8g", 8192),
                        t("vir10_3c_16g", 16384)),
                AscendChip.chart("Ascend310P", "310P3", 21527, 24576, 1, false, t("vir01", 3072), t("vir02", 6144),
                        t("vir04", 12288)),
                AscendChip.chart("Ascend910C", "Ascend910", 65536, 65536, 1, true, t("", 16384), t("", 32768)));
    }

    private static AscendChip.Template t(String name, long memory) {
        return new AscendChip.Template(name, memory);
    }

    static List<IluvatarChip> chartIluvatarChips() {
        return List.of(IluvatarChip.chart("MR-V100"), IluvatarChip.chart("MR-V50"), IluvatarChip.chart("BI-V150"),
                IluvatarChip.chart("BI-V100"));
    }

    private static JsonNode readYaml(String yaml, String source) {
        try {
            return YAMLMapper.builder().build().readTree(yaml);
        } catch (JacksonException e) {
            throw InvalidDeviceConfigException.of(InvalidDeviceConfigException.Problem.NOT_YAML, source,
                    "not valid YAML: " + e.getOriginalMessage(), e);
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
                block.integer("defaultMemory", d.defaultMemory(), 0, INT32_MAX),
                block.integer("defaultCores", d.defaultCores(), 0, 100),
                block.integer("defaultGPUNum", d.defaultGpuNum(), 0, INT32_MAX),
                (int) block.integer("memoryFactor", d.memoryFactor(), 1, INT32_MAX),
                block.string("gpuCorePolicy", d.gpuCorePolicy()),
                block.string("runtimeClassName", d.runtimeClassName()),
                block.integer("deviceSplitCount", d.deviceSplitCount(), 1, INT32_MAX),
                block.scaling("deviceMemoryScaling", d.deviceMemoryScaling()),
                block.scaling("deviceCoreScaling", d.deviceCoreScaling()));
    }

    /** Typed reads from one YAML block; errors name the key, the value and what was expected. */
    private record Block(JsonNode node, String path) {
        Block {
            if (node != null && !node.isNull() && !node.isObject()) {
                throw new ConfigException(path, JsonTypes.describe(node), "a mapping");
            }
        }

        JsonNode value(String key) {
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

        /** A whole number in {@code min..max} (the key's Go type, narrowed where HAMi's meaning is). */
        long integer(String key, long fallback, long min, long max) {
            JsonNode value = value(key);
            if (value == null) {
                return fallback;
            }
            if (!value.isIntegralNumber()) {
                throw new ConfigException(path + "." + key, "'" + value.asString() + "'", "a whole number");
            }
            BigInteger number = value.bigIntegerValue(); // any size: 2^63 must be an error, not an overflow
            if (number.compareTo(BigInteger.valueOf(min)) < 0 || number.compareTo(BigInteger.valueOf(max)) > 0) {
                throw new ConfigException(path + "." + key, number, min + ".." + max);
            }
            return number.longValueExact();
        }

        /** A scaling factor: a finite number in {@code (0, NvidiaConfig.MAX_SCALING]}. */
        double scaling(String key, double fallback) {
            JsonNode value = value(key);
            if (value == null) {
                return fallback;
            }
            if (!value.isNumber()) {
                throw new ConfigException(path + "." + key, "'" + value.asString() + "'", "a number");
            }
            BigDecimal number = finite(value);
            if (number == null || number.signum() <= 0
                    || number.compareTo(BigDecimal.valueOf(NvidiaConfig.MAX_SCALING)) > 0) {
                throw new ConfigException(path + "." + key, value.asString(), NvidiaConfig.SCALING_RANGE);
            }
            return number.doubleValue();
        }

        /** The number exactly, or {@code null} for NaN and infinities. */
        private static BigDecimal finite(JsonNode value) {
            if (value.isDouble() || value.isFloat()) {
                double d = value.doubleValue();
                return Double.isFinite(d) ? BigDecimal.valueOf(d) : null;
            }
            return value.decimalValue();
        }
    }
}
