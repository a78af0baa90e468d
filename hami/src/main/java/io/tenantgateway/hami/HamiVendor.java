package io.tenantgateway.hami;

import static java.util.Objects.requireNonNull;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The vendor table: every HAMi vendor backend once, in HAMi's registration order, with its facts (hami-vendors.md §1,
 * §2, §5). The other places that name a vendor derive from this table or are checked against it by a test:
 * <ul>
 *   <li>{@link NodeVendor} (the simulated plugins' keys and resources) and {@link RegisterVendor#TABLE} (the register
 *       keys and formats the codecs choose by) are built from it;</li>
 *   <li>{@link CapacityVendor#TABLE} (which capacity HAMi derives devices from), the webhook's vendor catalogue
 *       (common words, blocks, releases), the simulation presets, the own-node policy's key lists, the chart's and
 *       kustomize's vendor switches and the README's vendor table are checked against it (hami/README.md lists the
 *       tests).</li>
 * </ul>
 * A per-chip vendor (Ascend, Iluvatar) writes {@code <chip>} where the chip's common word goes.
 */
public enum HamiVendor {
    NVIDIA(row("NVIDIA", "NVIDIA", "nvidia").count(ResourceNames.NVIDIA_GPU)
            .memory(ResourceNames.NVIDIA_GPU_MEMORY).cores(ResourceNames.NVIDIA_GPU_CORES)
            .otherResources(ResourceNames.NVIDIA_GPU_MEMORY_PERCENTAGE)
            .register(Annotations.NODE_NVIDIA_REGISTER, RegisterFormat.JSON).handshake(Annotations.NODE_HANDSHAKE)
            .pod(Annotations.POD_DEVICES_TO_ALLOCATE, Annotations.POD_DEVICES_ALLOCATED).lock(Annotations.NODE_LOCK)
            .simulated(NodeVendor.Kind.NVIDIA, "nvidia-gpu.sock")),
    CAMBRICON(row("Cambricon", "MLU", "cambricon").count("cambricon.com/vmlu")
            .memory("cambricon.com/mlu.smlu.vmemory").cores("cambricon.com/mlu.smlu.vcore")
            .pod("hami.io/cambricon-mlu-devices-to-allocate", "hami.io/cambricon-mlu-devices-allocated")
            .lock("cambricon.com/dsmlu.lock").capacity("cambricon.com/mlu.smlu.vcore", HamiRelease.values())),
    HYGON(row("Hygon", "DCU", "hygon").count("hygon.com/dcunum").memory("hygon.com/dcumem")
            .cores("hygon.com/dcucores").register("hami.io/node-dcu-register", RegisterFormat.LEGACY_TEXT)
            .handshake("hami.io/node-handshake-dcu")
            .pod("hami.io/dcu-devices-to-allocate", "hami.io/dcu-devices-allocated").lock(Annotations.NODE_LOCK)
            .simulated(NodeVendor.Kind.HYGON, "hygon.com_dcunum")),
    ENFLAME_GCU(row("Enflame GCU", "GCU", "enflame").count("enflame.com/gcu")
            .pod("hami.io/enflame-gcu-devices-to-allocate", "hami.io/enflame-gcu-devices-allocated")
            .capacity("enflame.com/gcu", HamiRelease.values())),
    ENFLAME_SHARED(row("Enflame shared", "Enflame", "enflame").count("enflame.com/drs-gcu")
            .memory("enflame.com/gcu-memory").cores("enflame.com/gcu-core")
            .register("enflame.com/gcu-drs-capacity", RegisterFormat.ENFLAME_DRS)
            .pod("", "hami.io/enflame-vgpu-devices-allocated")
            .capacity("enflame.com/gcu-count", HamiRelease.V2_9)),
    MTHREADS(row("Mthreads", "Mthreads", "mthreads").count("mthreads.com/vgpu").memory("mthreads.com/sgpu-memory")
            .cores("mthreads.com/sgpu-core").pod("", "hami.io/mthreads-vgpu-devices-allocated")
            .capacity("mthreads.com/sgpu-core", HamiRelease.values())),
    METAX_GPU(row("Metax GPU", "Metax-GPU", "metax").count("metax-tech.com/gpu")
            .pod("hami.io/metax-gpu-devices-to-allocate", "hami.io/metax-gpu-devices-allocated")
            .capacity("metax-tech.com/gpu", HamiRelease.values())),
    METAX_SGPU(row("Metax sGPU", "Metax-SGPU", "metax").count("metax-tech.com/sgpu")
            .memory("metax-tech.com/vmemory").cores("metax-tech.com/vcore")
            .register("metax-tech.com/node-gpu-devices", RegisterFormat.METAX_SGPU)
            .pod("hami.io/metax-sgpu-devices-to-allocate", "hami.io/metax-sgpu-devices-allocated")
            .lock(Annotations.NODE_LOCK)),
    KUNLUN_XPU(row("Kunlun XPU", "kunlun", "kunlun").count("kunlunxin.com/xpu").pod("", "hami.io/kunlun-allocated")
            .capacity("kunlunxin.com/xpu", HamiRelease.values())),
    KUNLUN_VXPU(row("Kunlun vXPU", "XPU", "kunlun").count("kunlunxin.com/vxpu").memory("kunlunxin.com/vxpu-memory")
            .register("hami.io/node-register-xpu", RegisterFormat.JSON).handshake("hami.io/node-handshake-xpu")
            .pod("hami.io/xpu-devices-to-allocate", "hami.io/xpu-devices-allocated").lock(Annotations.NODE_LOCK)),
    AWS_NEURON(row("AWS Neuron", "AWSNeuron", "awsneuron").count("aws.amazon.com/neuron")
            .cores("aws.amazon.com/neuroncore").pod("", "hami.io/aws-neuron-devices-allocated")
            .capacity("aws.amazon.com/neuron", HamiRelease.values())),
    /** v2.10 reads a register annotation; v2.9 derives devices from capacity and calls the vendor {@code AMDGPU}. */
    AMD(row("AMD", "AMD", "amd").commonWordV29("AMDGPU").count("amd.com/gpu").memory("amd.com/gpumem")
            .cores("amd.com/gpucores").register("hami.io/node-amd-register", RegisterFormat.JSON)
            .pod("hami.io/amd-devices-to-allocate", "hami.io/amd-devices-allocated").lock(Annotations.NODE_LOCK)
            .capacity("amd.com/gpu", HamiRelease.V2_9)),
    VASTAI(row("Vastai", "Vastai", "vastai").count("vastaitech.com/va")
            .register("hami.io/node-va-register", RegisterFormat.JSON).handshake("hami.io/node-handshake-va")
            .pod("hami.io/Vastai-devices-to-allocate", "hami.io/Vastai-devices-allocated")
            .lock(Annotations.NODE_LOCK)),
    BIREN(row("Biren", "Biren", "biren").releases(HamiRelease.V2_10).count("birentech.com/gpu")
            .register("hami.io/node-biren-register", RegisterFormat.JSON).handshake("hami.io/node-handshake-biren")
            .pod("hami.io/Biren-devices-to-allocate", "hami.io/Biren-devices-allocated")
            .lock(Annotations.NODE_LOCK)),
    /** One backend per {@code vnpus} chip, with {@code --enable-ascend}; simulated per chip (its own plugin). */
    ASCEND(row("Ascend", HamiVendor.CHIP, "vnpus").count("huawei.com/" + HamiVendor.CHIP).memory("huawei.com/" + HamiVendor.CHIP + "-memory")
            .cores("huawei.com/" + HamiVendor.CHIP + "-core").register("hami.io/node-register-" + HamiVendor.CHIP, RegisterFormat.JSON)
            .handshake("hami.io/node-handshake-" + HamiVendor.CHIP)
            .pod("hami.io/" + HamiVendor.CHIP + "-devices-to-allocate", "hami.io/" + HamiVendor.CHIP + "-devices-allocated")
            .lock(Annotations.NODE_LOCK).enabledBy("ascend").chipPrefix("Ascend")
            .nodeAnnotations(Annotations.NODE_HAMI_VNPU_CORE)
            .simulated(NodeVendor.Kind.ASCEND, HamiVendor.CHIP + ".sock")),
    /** One backend per {@code iluvatars} chip, with {@code --enable-iluvatar}. */
    ILUVATAR(row("Iluvatar", HamiVendor.CHIP, "iluvatars").count("iluvatar.ai/" + HamiVendor.CHIP + "-vgpu")
            .memory("iluvatar.ai/" + HamiVendor.CHIP + ".vMem").cores("iluvatar.ai/" + HamiVendor.CHIP + ".vCore")
            .register("hami.io/node-" + HamiVendor.CHIP + "-register", RegisterFormat.LEGACY_TEXT)
            .handshake("hami.io/node-handshake-" + HamiVendor.CHIP)
            .pod("hami.io/" + HamiVendor.CHIP + "-devices-to-allocate", "hami.io/" + HamiVendor.CHIP + "-devices-allocated")
            .lock(Annotations.NODE_LOCK).enabledBy("iluvatar"));

    /** Where a per-chip vendor's keys and resources hold the chip's common word. */
    public static final String CHIP = "<chip>";

    private final Row row;

    HamiVendor(Row row) {
        this.row = row;
    }

    /** For people, as the README's vendor table names it: {@code Hygon}, {@code Kunlun vXPU}. */
    public String display() {
        return row.display;
    }

    /** HAMi's CommonWord under {@code release} ({@code DCU}, {@code XPU}; {@code <chip>} per chip). */
    public String commonWord(HamiRelease release) {
        return release == HamiRelease.V2_9 && !row.commonWordV29.isEmpty() ? row.commonWordV29 : row.commonWord;
    }

    /** The device-config block the backend reads its names from ({@code hygon}, {@code vnpus}). */
    public String block() {
        return row.block;
    }

    /** Whether HAMi's release has this backend (Biren: v2.10 only). */
    public boolean in(HamiRelease release) {
        return row.releases.contains(release);
    }

    /** Whether the backend is one per configured chip: its keys and resources hold {@link #CHIP}. */
    public boolean perChip() {
        return CHIP.equals(row.commonWord);
    }

    /** The count resource a pod asks for, by the chart's default name ({@code hygon.com/dcunum}). */
    public String countResource() {
        return row.count;
    }

    /** The memory resource, or empty. */
    public String memoryResource() {
        return row.memory;
    }

    /** The core resource, or empty. */
    public String coreResource() {
        return row.cores;
    }

    /** Count, memory, core and the vendor's other resources (NVIDIA's {@code gpumem-percentage}), those it has. */
    public List<String> resources() {
        List<String> all = new ArrayList<>();
        for (String each : List.of(row.count, row.memory, row.cores)) {
            if (!each.isEmpty()) {
                all.add(each);
            }
        }
        all.addAll(row.otherResources);
        return List.copyOf(all);
    }

    /** The node register annotation, or empty for a vendor HAMi reads from capacity only. */
    public String registerKey() {
        return row.registerKey;
    }

    /** How the register value is written; {@code null} without a register key. */
    public RegisterFormat registerFormat() {
        return row.registerFormat;
    }

    /** The node handshake annotation, or empty for a vendor without one. */
    public String handshakeKey() {
        return row.handshakeKey;
    }

    /** The pod annotation the scheduler fills and the plugin erases, or empty (allocated only). */
    public String toAllocateKey() {
        return row.toAllocateKey;
    }

    /** The pod annotation recording what the scheduler placed. */
    public String allocatedKey() {
        return row.allocatedKey;
    }

    /** The node lock the scheduler takes for this vendor, or empty for none. */
    public String lockKey() {
        return row.lockKey;
    }

    /** The capacity HAMi's scheduler derives devices from under {@code release}, or empty (the capacity rule). */
    public String capacityResource(HamiRelease release) {
        return row.capacityReleases.contains(release) ? row.capacityResource : "";
    }

    /**
     * The switch that turns the webhook's backend on, or empty when it is always on: {@code ascend} is the flag
     * {@code --enable-ascend}, the chart's {@code devices.ascend.enabled}, kustomize's {@code components/enable-ascend}.
     */
    public String switchName() {
        return row.switchName;
    }

    /** {@code --enable-<switch>}, or empty. */
    public String enableFlag() {
        return row.switchName.isEmpty() ? "" : "--enable-" + row.switchName;
    }

    /** Which simulated plugin's rules apply, or {@code null} when the agent does not simulate the vendor. */
    public NodeVendor.Kind simulation() {
        return row.simulation;
    }

    /** The simulated plugin's socket file in kubelet's device-plugins directory, or empty. */
    public String socketName() {
        return row.socketName;
    }

    /** Node annotations the vendor's plugin writes besides register and handshake (Ascend: {@code hami-vnpu-core}). */
    public List<String> nodeAnnotations() {
        return row.nodeAnnotations;
    }

    /** The fixed start of every simulated chip's common word ({@code Ascend}), or empty. */
    public String chipPrefix() {
        return row.chipPrefix;
    }

    /** {@code pattern} for chip {@code commonWord}: {@code huawei.com/<chip>} → {@code huawei.com/Ascend910B4}. */
    public static String forChip(String pattern, String commonWord) {
        requireNonNull(commonWord, "commonWord");
        return pattern.replace(CHIP, commonWord);
    }

    /** The row whose {@link #simulation} is {@code kind}. */
    public static HamiVendor simulatedAs(NodeVendor.Kind kind) {
        requireNonNull(kind, "kind");
        for (HamiVendor vendor : values()) {
            if (vendor.row.simulation == kind) {
                return vendor;
            }
        }
        throw new IllegalStateException("no vendor row simulates " + kind);
    }

    /**
     * What the own-node policy lets the agent write for this vendor, {@link #CHIP} cut to the {@link #chipPrefix}
     * (a prefix then): node annotations (register, handshake, the plugin's others; NVIDIA also the node lock) and,
     * in mock mode, resources. Empty for a vendor the agent does not simulate.
     */
    public OwnNodeKeys ownNodeKeys() {
        if (row.simulation == null) {
            return new OwnNodeKeys(Set.of(), Set.of(), Set.of(), Set.of());
        }
        Set<String> annotations = new LinkedHashSet<>();
        Set<String> annotationPrefixes = new LinkedHashSet<>();
        Set<String> resources = new LinkedHashSet<>();
        Set<String> resourcePrefixes = new LinkedHashSet<>();
        List<String> keys = new ArrayList<>(List.of(row.registerKey, row.handshakeKey));
        if (this == NVIDIA) {
            keys.add(row.lockKey);
        }
        keys.addAll(row.nodeAnnotations);
        for (String key : keys) {
            sort(key, annotations, annotationPrefixes);
        }
        for (String resource : resources()) {
            sort(resource, resources, resourcePrefixes);
        }
        return new OwnNodeKeys(annotations, annotationPrefixes, resources, resourcePrefixes);
    }

    private void sort(String key, Set<String> exact, Set<String> prefixes) {
        int chip = key.indexOf(CHIP);
        if (chip < 0) {
            exact.add(key);
        } else {
            prefixes.add(key.substring(0, chip) + row.chipPrefix);
        }
    }

    /**
     * The own-node policy's lists for a vendor (manifests/base/own-node-policy.yaml).
     *
     * @param annotations        node annotations, exact
     * @param annotationPrefixes node annotations, by prefix (per chip)
     * @param resources          capacity and allocatable resources (mock mode), exact
     * @param resourcePrefixes   resources by prefix (per chip)
     */
    public record OwnNodeKeys(Set<String> annotations, Set<String> annotationPrefixes, Set<String> resources,
                              Set<String> resourcePrefixes) {
        public OwnNodeKeys {
            annotations = Set.copyOf(annotations);
            annotationPrefixes = Set.copyOf(annotationPrefixes);
            resources = Set.copyOf(resources);
            resourcePrefixes = Set.copyOf(resourcePrefixes);
        }
    }

    private static Row row(String display, String commonWord, String block) {
        return new Row(display, commonWord, block);
    }

    /** A row being written: the enum's constructor argument. */
    private static final class Row {
        private final String display;
        private final String commonWord;
        private final String block;
        private String commonWordV29 = "";
        private Set<HamiRelease> releases = EnumSet.allOf(HamiRelease.class);
        private String count = "";
        private String memory = "";
        private String cores = "";
        private List<String> otherResources = List.of();
        private String registerKey = "";
        private RegisterFormat registerFormat;
        private String handshakeKey = "";
        private String toAllocateKey = "";
        private String allocatedKey = "";
        private String lockKey = "";
        private String capacityResource = "";
        private Set<HamiRelease> capacityReleases = EnumSet.noneOf(HamiRelease.class);
        private String switchName = "";
        private String chipPrefix = "";
        private List<String> nodeAnnotations = List.of();
        private NodeVendor.Kind simulation;
        private String socketName = "";

        private Row(String display, String commonWord, String block) {
            this.display = display;
            this.commonWord = commonWord;
            this.block = block;
        }

        Row commonWordV29(String word) {
            commonWordV29 = word;
            return this;
        }

        Row releases(HamiRelease... only) {
            releases = EnumSet.copyOf(List.of(only));
            return this;
        }

        Row count(String resource) {
            count = resource;
            return this;
        }

        Row memory(String resource) {
            memory = resource;
            return this;
        }

        Row cores(String resource) {
            cores = resource;
            return this;
        }

        Row otherResources(String... resources) {
            otherResources = List.of(resources);
            return this;
        }

        Row register(String key, RegisterFormat format) {
            registerKey = key;
            registerFormat = format;
            return this;
        }

        Row handshake(String key) {
            handshakeKey = key;
            return this;
        }

        Row pod(String toAllocate, String allocated) {
            toAllocateKey = toAllocate;
            allocatedKey = allocated;
            return this;
        }

        Row lock(String key) {
            lockKey = key;
            return this;
        }

        Row capacity(String resource, HamiRelease... in) {
            capacityResource = resource;
            capacityReleases = EnumSet.copyOf(List.of(in));
            return this;
        }

        Row enabledBy(String name) {
            switchName = name;
            return this;
        }

        Row chipPrefix(String prefix) {
            chipPrefix = prefix;
            return this;
        }

        Row nodeAnnotations(String... keys) {
            nodeAnnotations = List.of(keys);
            return this;
        }

        Row simulated(NodeVendor.Kind kind, String socket) {
            simulation = kind;
            socketName = socket;
            return this;
        }
    }
}
