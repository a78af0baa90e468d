package io.tenantgateway.tools.lab;

import static java.util.Objects.requireNonNull;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoopGroup;
import io.tenantgateway.agent.Agent;
import io.tenantgateway.agent.PartViews;
import io.tenantgateway.agent.devices.VendorPreset;
import io.tenantgateway.agent.locks.policy.LockPolicy;
import io.tenantgateway.agent.monitor.ContainerUsage;
import io.tenantgateway.agent.monitor.MonitorPart;
import io.tenantgateway.agent.monitor.MonitorSnapshot;
import io.tenantgateway.hami.AscendRuntimeInfo;
import io.tenantgateway.hami.HamiRelease;
import io.tenantgateway.hami.NodeVendor;
import io.tenantgateway.hami.RegisterCodec;
import io.tenantgateway.hami.RegisterFormat;
import io.tenantgateway.hami.RegisteredDevice;
import io.tenantgateway.webhook.policy.AscendVendor;
import io.tenantgateway.webhook.policy.DeviceConfig;
import io.tenantgateway.tools.hamisim.BindResult;
import io.tenantgateway.tools.lab.AdmissionCaller.Admission;
import io.tenantgateway.tools.lab.AdmissionCaller.AdmissionFailure;
import io.tenantgateway.tools.lab.LabScheduler.FilterResult;
import io.tenantgateway.agent.locks.AllocationConfig;
import io.tenantgateway.agent.locks.AllocationController;
import io.tenantgateway.deviceplugin.DevicePlugin;
import io.tenantgateway.hami.Annotations;
import io.tenantgateway.hami.ContainerDevice;
import io.tenantgateway.hami.GpuDevice;
import io.tenantgateway.hami.HamiCore;
import io.tenantgateway.hami.region.DeviceUsage;
import io.tenantgateway.deviceplugin.testing.KubeletStandIn;
import io.tenantgateway.deviceplugin.v1beta1.ContainerAllocateResponse;
import io.tenantgateway.deviceplugin.v1beta1.RegisterRequest;
import io.tenantgateway.hami.HamiDeviceCodec;
import io.tenantgateway.hami.ResourceNames;
import io.tenantgateway.agent.devices.DeviceRegistrar;
import io.tenantgateway.common.time.GoDuration;
import io.tenantgateway.tunnel.client.ServerConnectionSnapshot;
import io.tenantgateway.tunnel.policy.DialPolicy;
import io.tenantgateway.tunnel.proxy.ProxyClient;
import io.tenantgateway.tunnel.server.ServerSnapshot;
import io.tenantgateway.webhook.AdmissionRecord;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The checks of the lab: the reference lab's eight, the kubelet path of the device plugin, Hygon and Ascend
 * devices next to NVIDIA's on tenant-b's second worker, and the vGPU monitor with a HAMi-core stand-in. Each
 * returns its evidence line or throws {@link CheckFailed} with the reason. Checks run one after another on the lab's
 * thread and may be run alone: each creates the pods it needs.
 */
final class LabChecks {
    static final List<String> TITLES = List.of(
            "control planes up, agents connected",
            "devices registered in HAMi format",
            "GPU pod admitted through the tunnel",
            "fractional GPU sharing",
            "node lock: back-to-back binds",
            "control-plane isolation",
            "tunnel isolation",
            "resilience: server restart",
            "kubelet device plugin: Allocate answer",
            "heterogeneous devices: Ascend and Hygon",
            "vGPU monitor: usage, fallback, cleanup");

    /** Check 4: four of these fill an A100 80 GB by memory and by cores. */
    static final long SHARE_MEMORY_MIB = 20480;
    static final int SHARE_CORES = 25;
    /** Check 4: one of these fits an L4 24 GB, two do not, so tenant-b's pods spread over its two L4s. */
    static final long L4_SHARE_MEMORY_MIB = 16384;
    static final int L4_SHARE_CORES = 50;
    /** Check 9: fits next to checks 4 and 5's pods on an L4. */
    static final long KUBELET_POD_MEMORY_MIB = 2048;
    static final int KUBELET_POD_CORES = 20;
    /** Check 10: an Ascend slice the webhook rounds up to the 910B4's 8 GiB template. */
    static final long NPU_POD_MEMORY_MIB = 6144;
    /** Check 10: a DCU slice. */
    static final long DCU_POD_MEMORY_MIB = 4096;
    static final int DCU_POD_CORES = 30;
    /**
     * The vendors whose device plugins kubelet calls, in the order the lab's kubelet asks a container's resources:
     * NVIDIA, Hygon, then each Ascend chip of HAMi's chart ({@code vnpus}).
     */
    static final List<NodeVendor> KUBELET_VENDORS = Stream.concat(Stream.of(NodeVendor.NVIDIA, NodeVendor.HYGON),
            DeviceConfig.defaults().vnpus().stream().map(chip -> NodeVendor.ascend(chip.commonWord()))).toList();
    /** Check 11: two of these fit next to checks 4, 5 and 9's pods on worker-b. */
    static final long MONITOR_POD_MEMORY_MIB = 1024;
    static final int MONITOR_POD_CORES = 10;
    /** Check 5: small enough to fit next to check 4's pods. */
    static final long LOCK_POD_MEMORY_MIB = 1024;
    static final int LOCK_POD_CORES = 10;

    private final LabTenant a;
    private final LabTenant b;
    private final Map<LabTenant, LabScheduler> schedulers = new LinkedHashMap<>();
    private final Duration timeout;
    private final Waiter waiter;
    private final EventLoopGroup group;
    private final Clock clock;

    LabChecks(LabTenant a, LabTenant b, Duration timeout, Waiter waiter, EventLoopGroup group, Clock clock) {
        this.a = requireNonNull(a, "a");
        this.b = requireNonNull(b, "b");
        this.timeout = requireNonNull(timeout, "timeout");
        this.waiter = requireNonNull(waiter, "waiter");
        this.group = requireNonNull(group, "group");
        this.clock = requireNonNull(clock, "clock");
        schedulers.put(a, new LabScheduler(a.client(), clock));
        schedulers.put(b, new LabScheduler(b.client(), clock));
    }

    String run(int number) throws CheckFailed, InterruptedException {
        return switch (number) {
            case 1 -> controlPlanesAndAgents();
            case 2 -> devicesRegistered();
            case 3 -> admissionThroughTunnel();
            case 4 -> fractionalSharing();
            case 5 -> nodeLock();
            case 6 -> controlPlaneIsolation();
            case 7 -> tunnelIsolation();
            case 8 -> serverRestart();
            case 9 -> kubeletPath();
            case 10 -> heterogeneousDevices();
            case 11 -> vgpuMonitor();
            default -> throw new IllegalArgumentException("check " + number + " (expected: 1-" + TITLES.size() + ")");
        };
    }

    // --- 1 ----------------------------------------------------------------------------------------------------

    private String controlPlanesAndAgents() throws CheckFailed {
        List<String> evidence = new ArrayList<>();
        for (LabTenant tenant : List.of(a, b)) {
            List<String> nodes = nodeNames(tenant);
            String serverId = tenant.spec.serverId();
            List<String> agents = tenant.server().snapshot().agents().stream().map(ServerSnapshot.Agent::agentId)
                    .sorted().toList();
            List<String> expected = tenant.spec.nodes().stream().sorted().toList();
            if (!agents.equals(expected)) {
                throw new CheckFailed(tenant.spec.name() + ": " + serverId + " has agents " + agents + " (expected: "
                        + expected + "); " + (tenant.workers().size() == 1 && !tenant.workers().get(0).split()
                        ? "agent " + notReady(tenant.agent()) : tenant.workers().stream().map(w ->
                                w.tunnelAgentLabel() + " " + notReady(w.agent())).collect(Collectors.joining(", "))));
            }
            List<String> ready = new ArrayList<>();
            for (LabTenant.Worker worker : tenant.workers()) {
                Optional<ServerConnectionSnapshot> connection = worker.agent().tunnel().orElseThrow().snapshot()
                        .servers().stream().filter(s -> s.serverId().equals(serverId)).findFirst();
                if (connection.isEmpty() || !"READY".equals(connection.get().state())) {
                    throw new CheckFailed(tenant.spec.name() + ": " + worker.tunnelAgentLabel() + " has no READY"
                            + " connection to " + serverId + " ("
                            + connection.map(ServerConnectionSnapshot::state).orElse("none") + ")");
                }
                ready.add(worker.tunnelAgentLabel() + " READY" + (worker.split() ? " (Kamaji's konnectivity-agent:"
                        + " tunnel + webhook, --enable-lock-controller=false; parts " + parts(worker.agent()) + ")"
                        : ""));
                if (worker.split()) {
                    ready.add(nodeRoleReady(tenant, worker));
                }
            }
            evidence.add(tenant.spec.name() + ": API " + tenant.apiUrl() + " nodes " + nodes + ", " + serverId
                    + " (" + tenant.spec.auth().label + ") ← " + String.join(", ", ready));
        }
        return String.join("; ", evidence);
    }

    /**
     * A Kamaji-style worker's node agent: no tunnel (no connection to the tenant's server), ready, with the node's
     * parts and without the webhook; its tunnel agent has none of the node's parts.
     */
    private static String nodeRoleReady(LabTenant tenant, LabTenant.Worker worker) throws CheckFailed {
        Agent node = worker.nodeAgent();
        String label = worker.nodeAgentLabel() + " (--tunnel=false, --agent-id=" + worker.nodeAgentId() + ")";
        if (node.tunnel().isPresent() || tenant.server().snapshot().agents().stream()
                .anyMatch(a -> a.agentId().equals(worker.nodeAgentId()))) {
            throw new CheckFailed(tenant.spec.name() + ": " + label + " runs a tunnel (expected: none, the node"
                    + " role)");
        }
        Agent tunnelAgent = worker.agent();
        if (PartViews.devices(tunnelAgent).isPresent() || PartViews.devicePlugin(tunnelAgent).isPresent()
                || PartViews.allocation(tunnelAgent).isPresent() || tunnelAgent.part(MonitorPart.NAME).isPresent()
                || PartViews.webhook(node).isPresent()) {
            throw new CheckFailed(tenant.spec.name() + ": " + worker.tunnelAgentLabel() + " runs "
                    + parts(tunnelAgent) + ", " + label + " runs " + parts(node) + " (expected: the tunnel agent"
                    + " the webhook only, the node agent the devices, device plugin, lock controller and monitor)");
        }
        String notReady = notReady(node);
        if (!"ready".equals(notReady)) {
            throw new CheckFailed(tenant.spec.name() + ": " + label + " " + notReady);
        }
        return label + " ready " + node.readiness().keySet() + ", no server connection; parts " + parts(node);
    }

    /** The parts {@code agent} runs besides its tunnel, in the words of the start lines. */
    private static String parts(Agent agent) {
        List<String> parts = new ArrayList<>();
        PartViews.webhook(agent).ifPresent(w -> parts.add("webhook"));
        PartViews.devices(agent).ifPresent(d -> parts.add("device registration"));
        PartViews.devicePlugin(agent).ifPresent(p -> parts.add("device plugin"));
        PartViews.allocation(agent).ifPresent(l -> parts.add("lock controller"));
        agent.part(MonitorPart.NAME).ifPresent(m -> parts.add("vGPU monitor"));
        return parts.isEmpty() ? "none" : String.join(", ", parts);
    }

    // --- 2 ----------------------------------------------------------------------------------------------------

    private String devicesRegistered() throws CheckFailed {
        List<String> evidence = new ArrayList<>();
        for (LabTenant tenant : List.of(a, b)) {
            for (LabTenant.Worker worker : tenant.workers()) {
                Node node = tenant.client().nodes().withName(worker.node()).get();
                if (node == null) {
                    throw new CheckFailed(tenant.spec.name() + ": node " + worker.node() + " not found");
                }
                List<String> registered = new ArrayList<>();
                if (worker.spec.gpus() > 0) {
                    registered.add(nvidiaRegistered(worker, node));
                }
                Map<NodeVendor, List<Map.Entry<VendorPreset, Integer>>> vendors = new LinkedHashMap<>();
                worker.spec.vendorDevices().entrySet().forEach(entry -> vendors.computeIfAbsent(
                        entry.getKey().vendor(), v -> new ArrayList<>()).add(entry));
                for (Map.Entry<NodeVendor, List<Map.Entry<VendorPreset, Integer>>> vendor : vendors.entrySet()) {
                    registered.add(vendorRegistered(worker, node, vendor.getKey(), vendor.getValue()));
                }
                evidence.add(worker.node() + ": " + String.join("; ", registered));
            }
        }
        return String.join("; ", evidence);
    }

    /** NVIDIA's register annotation in HAMi's exact JSON, its handshake and the advertised capacity. */
    private static String nvidiaRegistered(LabTenant.Worker worker, Node node) throws CheckFailed {
        String nodeName = worker.node();
        Map<String, String> annotations = node.getMetadata().getAnnotations();
        String register = Annotations.get(annotations, Annotations.NODE_NVIDIA_REGISTER);
        if (register == null) {
            throw new CheckFailed(nodeName + ": no " + Annotations.NODE_NVIDIA_REGISTER + " annotation ("
                    + (PartViews.devices(worker.nodeAgent()).isEmpty() ? worker.nodeAgentLabel() + " runs without"
                    + " device registration: --device-source=none" : worker.nodeAgentLabel() + " "
                    + notReady(worker.nodeAgent())) + ")");
        }
        List<GpuDevice> devices;
        try {
            devices = HamiDeviceCodec.decodeJson(register);
        } catch (IllegalArgumentException e) {
            throw new CheckFailed(nodeName + ": " + Annotations.NODE_NVIDIA_REGISTER + " is not HAMi's JSON: "
                    + e.getMessage());
        }
        if (!HamiDeviceCodec.encode(devices).equals(register)) {
            throw new CheckFailed(nodeName + ": " + Annotations.NODE_NVIDIA_REGISTER + " is not in HAMi's exact"
                    + " form (key order, omitted zero values): " + AdmissionCaller.abbreviate(register));
        }
        if (devices.size() != worker.spec.gpus()) {
            throw new CheckFailed(nodeName + ": " + devices.size() + " devices registered (expected: "
                    + worker.spec.gpus() + " from --mock-gpus=" + worker.spec.mockGpus() + ")");
        }
        for (GpuDevice device : devices) {
            if (!device.healthy() || !device.type().contains("NVIDIA") || device.count() < 1
                    || device.devmemMiB() < 1 || device.devcore() < 1) {
                throw new CheckFailed(nodeName + ": device " + device.id() + " is not schedulable by HAMi"
                        + " (health " + device.healthy() + ", type " + device.type() + ", count " + device.count()
                        + ", devmem " + device.devmemMiB() + ", devcore " + device.devcore() + ")");
            }
        }
        String handshake = Annotations.get(annotations, Annotations.NODE_HANDSHAKE);
        if (handshake == null || !handshake.startsWith(Annotations.HANDSHAKE_REPORTED_PREFIX)) {
            throw new CheckFailed(nodeName + ": " + Annotations.NODE_HANDSHAKE + " is " + handshake
                    + " (expected: Reported <time>, or HAMi's scheduler unregisters the node)");
        }
        GpuDevice first = devices.get(0);
        return devices.size() + " × " + first.type() + " " + first.devmemMiB() + " MiB split " + first.count() + " ("
                + devices.stream().map(FirstFitPlacement::shortId).collect(Collectors.joining(", "))
                + "), handshake \"" + handshake + "\", capacity " + ResourceNames.NVIDIA_GPU + "="
                + capacity(node, ResourceNames.NVIDIA_GPU);
    }

    /** Hygon's legacy text: {@code Reported } + Go's {@code time.Now().String()}. */
    private static final Pattern HYGON_HANDSHAKE = Pattern.compile("Reported \\d{4}-\\d{2}-\\d{2}"
            + " \\d{2}:\\d{2}:\\d{2}(\\.\\d{1,9})? [+-]\\d{4} \\S+( m=\\+\\d+\\.\\d{9})?");
    /** Ascend's: {@code Reported_2006.01.02 15:04:05}. */
    private static final Pattern ASCEND_HANDSHAKE = Pattern.compile(
            "Reported_\\d{4}\\.\\d{2}\\.\\d{2} \\d{2}:\\d{2}:\\d{2}");

    /**
     * One Hygon or Ascend registration, read as HAMi v2.10's scheduler reads it ({@link RegisterCodec}): the
     * simulated devices of {@code presets}, healthy, with the presets' figures; the vendor's handshake in its
     * plugin's shape; Ascend's {@code hami-vnpu-core}; the capacity kubelet would advertise.
     */
    private static String vendorRegistered(LabTenant.Worker worker, Node node, NodeVendor vendor,
            List<Map.Entry<VendorPreset, Integer>> presets) throws CheckFailed {
        String nodeName = worker.node();
        Map<String, String> annotations = node.getMetadata().getAnnotations();
        String key = vendor.registerKey();
        String register = Annotations.get(annotations, key);
        if (register == null) {
            throw new CheckFailed(nodeName + ": no " + key + " annotation (" + worker.nodeAgentLabel() + " runs with"
                    + " --mock-devices=" + worker.spec.mockDevices() + "; " + notReady(worker.nodeAgent()) + ")");
        }
        RegisterCodec.Result decoded = RegisterCodec.decode(key, register, HamiRelease.V2_10, nodeName);
        if (!decoded.isOk()) {
            throw new CheckFailed(nodeName + ": " + key + " does not decode as HAMi's scheduler reads it: "
                    + decoded.error() + " (" + AdmissionCaller.abbreviate(register) + ")");
        }
        List<RegisteredDevice> devices = decoded.devices();
        List<VendorPreset> expected = new ArrayList<>();
        presets.forEach(entry -> expected.addAll(Collections.nCopies(entry.getValue(), entry.getKey())));
        if (devices.size() != expected.size()) {
            throw new CheckFailed(nodeName + ": " + devices.size() + " devices in " + key + " (expected: "
                    + expected.size() + " from --mock-devices=" + worker.spec.mockDevices() + ")");
        }
        for (int i = 0; i < devices.size(); i++) {
            RegisteredDevice device = devices.get(i);
            VendorPreset preset = expected.get(i);
            if (!device.health() || !device.type().toLowerCase(Locale.ROOT).contains(vendor.commonWord()
                    .toLowerCase(Locale.ROOT)) || device.count() != preset.count() || device.devmem() != preset.devmem()
                    || device.devcore() != preset.devcore() || device.index() != i) {
                throw new CheckFailed(nodeName + ": " + key + " device " + device.id() + " is not the simulated "
                        + preset.presetName() + " HAMi schedules (health " + device.health() + ", type "
                        + device.type() + ", index " + device.index() + ", count " + device.count() + ", devmem "
                        + device.devmem() + ", devcore " + device.devcore() + "; expected: healthy, a type with "
                        + vendor.commonWord() + ", index " + i + ", count " + preset.count() + ", devmem "
                        + preset.devmem() + ", devcore " + preset.devcore() + ")");
            }
        }
        String handshake = Annotations.get(annotations, vendor.handshakeKey());
        Pattern shape = switch (vendor.kind()) {
            case ASCEND -> ASCEND_HANDSHAKE;
            case HYGON -> HYGON_HANDSHAKE;
            case NVIDIA -> throw new IllegalArgumentException("NVIDIA is checked by its own register check");
        };
        if (handshake == null || !shape.matcher(handshake).matches()) {
            throw new CheckFailed(nodeName + ": " + vendor.handshakeKey() + " is " + (handshake == null ? "absent"
                    : "\"" + handshake + "\"") + " (expected: " + shape.pattern() + ", as "
                    + vendor.displayName() + "'s device plugin writes it)");
        }
        String extra = "";
        if (vendor.kind() == NodeVendor.Kind.ASCEND) {
            String vnpuCore = Annotations.get(annotations, LabScheduler.NODE_HAMI_VNPU_CORE);
            if (!"false".equals(vnpuCore)) {
                throw new CheckFailed(nodeName + ": " + LabScheduler.NODE_HAMI_VNPU_CORE + " is " + vnpuCore
                        + " (expected: \"false\", template mode)");
            }
            extra = ", " + LabScheduler.NODE_HAMI_VNPU_CORE + "=" + vnpuCore;
        }
        int replicas = devices.stream().mapToInt(RegisteredDevice::count).sum();
        String capacity = capacity(node, vendor.resourceName());
        if (!Integer.toString(replicas).equals(capacity)) {
            throw new CheckFailed(nodeName + ": capacity " + vendor.resourceName() + "=" + capacity + " (expected: "
                    + replicas + ", the replicas kubelet lists)");
        }
        RegisteredDevice first = devices.get(0);
        return vendor.displayName() + " " + key + " (" + (vendor.registerFormat() == RegisterFormat.JSON ? "JSON"
                : "legacy text") + "): " + devices.size() + " × " + first.type() + " " + first.devmem() + " MiB split "
                + first.count() + " devcore " + first.devcore() + " (" + devices.stream()
                .map(VendorFirstFitPlacement::shortId).collect(Collectors.joining(", ")) + "), handshake \""
                + handshake + "\"" + extra + ", capacity " + vendor.resourceName() + "=" + capacity;
    }

    private static String capacity(Node node, String resource) {
        Quantity capacity = node.getStatus() == null || node.getStatus().getCapacity() == null ? null
                : node.getStatus().getCapacity().get(resource);
        return capacity == null ? "none" : capacity.toString();
    }

    // --- 3 ----------------------------------------------------------------------------------------------------

    private String admissionThroughTunnel() throws CheckFailed, InterruptedException {
        // tenant-a asks only for a memory share (HAMi adds the GPU count and exclusive cores), tenant-b for a GPU.
        String evidenceA = smokeAdmission(a, Map.of(ResourceNames.NVIDIA_GPU_MEMORY_PERCENTAGE, "100"));
        String evidenceB = smokeAdmission(b, Map.of(ResourceNames.NVIDIA_GPU, "1"));
        return evidenceA + "; " + evidenceB;
    }

    private String smokeAdmission(LabTenant tenant, Map<String, String> limits)
            throws CheckFailed, InterruptedException {
        String name = "gpu-smoke";
        Admission admission = admit(tenant, name, limits);
        Pod stored = tenant.client().pods().inNamespace(tenant.spec.namespace()).withName(name).get();
        if (stored == null) {
            throw new CheckFailed(tenant.spec.name() + ": pod " + name + " admitted but not stored");
        }
        String schedulerName = stored.getSpec().getSchedulerName();
        Map<String, Quantity> stored0 = stored.getSpec().getContainers().get(0).getResources().getLimits();
        String gpu = String.valueOf(stored0.get(ResourceNames.NVIDIA_GPU));
        String cores = String.valueOf(stored0.get(ResourceNames.NVIDIA_GPU_CORES));
        if (!LabScheduler.SCHEDULER_NAME.equals(schedulerName) || !"1".equals(gpu) || !"100".equals(cores)) {
            throw new CheckFailed(tenant.spec.name() + ": pod " + name + " stored unmutated or wrongly mutated:"
                    + " schedulerName=" + schedulerName + " nvidia.com/gpu=" + gpu + " nvidia.com/gpucores=" + cores
                    + " (expected: hami-scheduler, 1, 100); patch " + admission.patchOperations());
        }
        List<AdmissionRecord> seen = PartViews.webhook(tenant.agent()).orElseThrow().recentAdmissions().snapshot();
        if (seen.stream().noneMatch(r -> r.uid().equals(admission.uid()))) {
            throw new CheckFailed(tenant.spec.name() + ": admission " + admission.uid() + " was answered, but not by"
                    + " the webhook of " + tenant.spec.node());
        }
        return tenant.spec.name() + " " + name + ": " + AdmissionCaller.WEBHOOK_DNS_NAME + " → "
                + LabTenant.hostPort(tenant.webhookService().address()) + " via " + tenant.spec.serverId()
                + " → webhook on " + tenant.spec.node() + (tenant.workers().get(0).split() ? "'s tunnel agent" : "")
                + ": allowed, " + admission.patchOperations().size()
                + " patch ops → schedulerName=" + schedulerName + " gpu=" + gpu + " gpucores=" + cores + " ("
                + admission.timings() + ")";
    }

    // --- 4 ----------------------------------------------------------------------------------------------------

    private String fractionalSharing() throws CheckFailed, InterruptedException {
        // tenant-a: four 20 GiB / 25 % pods fill the A100; the fifth does not fit.
        String deviceA = null;
        String split = "";
        for (int i = 1; i <= 4; i++) {
            String pod = "a-share-" + i;
            Admission admission = admit(a, pod, shareLimits(SHARE_MEMORY_MIB, SHARE_CORES));
            Allocation allocation = scheduleAndAdmit(a, pod);
            if (i == 1) {
                split = splitPath(a, pod, admission, allocation);
            }
            List<ContainerDevice> devices = allocation.devices();
            String uuid = devices.get(0).uuid();
            if (deviceA != null && !deviceA.equals(uuid)) {
                throw new CheckFailed(pod + " placed on " + uuid + ", the others on " + deviceA
                        + " (expected: one shared A100)");
            }
            deviceA = uuid;
        }
        admit(a, "a-share-5", shareLimits(SHARE_MEMORY_MIB, SHARE_CORES));
        FilterResult fifth = schedulers.get(a).filter(a.spec.namespace(), "a-share-5");
        if (fifth.fits()) {
            throw new CheckFailed("a-share-5 placed on " + fifth.node().get() + " " + fifth.devices()
                    + " (expected: refused, four 20 GiB pods fill the A100)");
        }
        if (!fifth.refusal().contains("memory")) {
            throw new CheckFailed("a-share-5 refused, but not for memory: " + fifth.refusal());
        }
        // tenant-b: a 16 GiB pod fits an L4 once, so two spread over both L4s.
        List<String> placedB = new ArrayList<>();
        List<String> uuidsB = new ArrayList<>();
        for (int i = 1; i <= 2; i++) {
            String pod = "b-share-" + i;
            admit(b, pod, shareLimits(L4_SHARE_MEMORY_MIB, L4_SHARE_CORES));
            String uuid = scheduleAndAllocate(b, pod).get(0).uuid();
            uuidsB.add(uuid);
            placedB.add(pod + " → " + deviceLabel(b, uuid));
        }
        if (uuidsB.get(0).equals(uuidsB.get(1))) {
            throw new CheckFailed("b-share-1 and b-share-2 both on " + uuidsB.get(0) + " (expected: one per L4)");
        }
        return "a-share-1…4 (" + SHARE_MEMORY_MIB + " MiB / " + SHARE_CORES + " % each) share " + a.spec.node()
                + " " + deviceLabel(a, deviceA) + split + "; a-share-5 refused by Filter: " + fifth.refusal() + "; "
                + String.join(", ", placedB) + " on " + b.spec.node() + " (" + L4_SHARE_MEMORY_MIB + " MiB / "
                + L4_SHARE_CORES + " % each)";
    }

    /**
     * On a Kamaji-style worker (two agents), which agent did what for {@code pod}: its admission was answered by the
     * tunnel agent's webhook (reached through the tenant's tunnel), kubelet's Allocate by the node agent's device
     * plugin ({@code --tunnel=false}; the tunnel agent has none), and the node lock was released by the node agent's
     * lock controller. {@code ""} on a worker with one agent.
     */
    private String splitPath(LabTenant tenant, String pod, Admission admission, Allocation allocation)
            throws CheckFailed, InterruptedException {
        LabTenant.Worker worker = tenant.worker(allocation.node()).orElseThrow();
        if (!worker.split()) {
            return "";
        }
        Agent tunnelAgent = worker.agent();
        Agent nodeAgent = worker.nodeAgent();
        String tunnelLabel = worker.node() + "'s tunnel agent";
        String nodeLabel = worker.node() + "'s node agent (--tunnel=false)";
        // Admission: the tunnel agent's webhook answered it; the node agent serves none.
        boolean admittedByTunnelAgent = PartViews.webhook(tunnelAgent).map(w -> w.recentAdmissions().snapshot()
                .stream().anyMatch(r -> r.uid().equals(admission.uid()))).orElse(false);
        if (!admittedByTunnelAgent || PartViews.webhook(nodeAgent).isPresent()) {
            throw new CheckFailed(pod + ": admission " + admission.uid() + " not answered by " + tunnelLabel
                    + " webhook (its webhook: " + PartViews.webhook(tunnelAgent).map(w -> "127.0.0.1:" + w.port())
                    .orElse("off") + ", " + nodeLabel + "'s: " + PartViews.webhook(nodeAgent).map(w -> "127.0.0.1:"
                    + w.port()).orElse("off") + ")");
        }
        // Allocate: kubelet called the plugin registered on its socket, the node agent's; the tunnel agent has none.
        Optional<DevicePlugin> plugin = PartViews.devicePlugin(nodeAgent);
        Optional<KubeletStandIn.Plugin> registered = worker.kubelet().plugin(ResourceNames.NVIDIA_GPU);
        if (plugin.isEmpty() || PartViews.devicePlugin(tunnelAgent).isPresent() || registered.isEmpty()
                || !plugin.get().config().directory().equals(worker.kubelet().directory())
                || !plugin.get().config().socketName().equals(registered.get().registration().getEndpoint())) {
            throw new CheckFailed(pod + ": kubelet's " + ResourceNames.NVIDIA_GPU + " plugin "
                    + registered.map(r -> r.registration().getEndpoint()).orElse("none") + " in "
                    + worker.kubelet().directory() + " is not the " + nodeLabel + " device plugin (" + plugin.map(p ->
                    p.config().socket().toString()).orElse("no device plugin") + "; " + tunnelLabel + "'s: "
                    + PartViews.devicePlugin(tunnelAgent).map(p -> p.config().socket().toString()).orElse("none")
                    + ")");
        }
        KubeletStandIn.ContainerResult cuda = allocation.kubelet().containers().get(0);
        // The lock (already released: scheduleAndAdmit waited for it): only a device plugin (HAMi's release after
        // a successful Allocate) or a lock controller (its reaper) releases one, and both are the node agent's.
        // Whichever did recorded a NodeLockReleased Event naming the pod's lock; the lock controller remembers its
        // release before it records the Event.
        String owner = "," + tenant.spec.namespace() + "," + pod + "\"";
        Optional<AllocationController> locks = PartViews.allocation(nodeAgent);
        boolean recorded = waiter.until(timeout, () -> lockReleases(tenant, worker.node(), owner) >= 1);
        if (locks.isEmpty() || PartViews.allocation(tunnelAgent).isPresent() || !recorded) {
            throw new CheckFailed(pod + ": node lock released, " + (recorded ? ""
                    : "no " + LockPolicy.REASON_LOCK_RELEASED + " Event for it, ") + "lock controller on " + nodeLabel + ": " + locks.map(l -> "on")
                    .orElse("off") + ", on " + tunnelLabel + ": " + PartViews.allocation(tunnelAgent).map(l -> "on")
                    .orElse("off") + " (expected: the node agent's only)");
        }
        boolean byLockController = locks.get().snapshot().recentActions().stream().anyMatch(action ->
                "lock-released".equals(action.kind()) && action.detail().contains(owner));
        return " (" + pod + ": admitted by " + tunnelLabel + " webhook 127.0.0.1:"
                + PartViews.webhook(tunnelAgent).orElseThrow().port() + " through " + tenant.spec.serverId()
                + ", Allocate(" + cuda.container() + ", " + cuda.deviceIds() + ") served by " + nodeLabel
                + " device plugin " + plugin.get().config().socketName() + " → env " + env(cuda.response()
                .getContainerResponses(0).getEnvsMap()) + ", bind-phase success, node lock released by "
                + worker.node() + "'s node agent (" + (byLockController ? "its lock controller"
                : "its device plugin after Allocate") + "; " + tunnelLabel + " runs neither))";
    }

    // --- 5 ----------------------------------------------------------------------------------------------------

    private String nodeLock() throws CheckFailed, InterruptedException {
        LabScheduler scheduler = schedulers.get(b);
        String namespace = b.spec.namespace();
        List<String> nodes = new ArrayList<>();
        for (String pod : List.of("b-lock-1", "b-lock-2")) {
            admit(b, pod, shareLimits(LOCK_POD_MEMORY_MIB, LOCK_POD_CORES));
            FilterResult filter = scheduler.filter(namespace, pod);
            if (!filter.fits()) {
                throw new CheckFailed(pod + " refused by Filter: " + filter.refusal());
            }
            nodes.add(filter.node().get());
        }
        String node = nodes.get(0);
        if (!nodes.get(1).equals(node)) {
            throw new CheckFailed("b-lock-1 and b-lock-2 placed on " + nodes + " (expected: one node, to bind back to"
                    + " back)");
        }
        long start = System.nanoTime();
        BindResult first = scheduler.bind(namespace, "b-lock-1", node);
        if (!first.bound()) {
            throw new CheckFailed("first bind refused: " + first.error());
        }
        kubeletAdmits(b, "b-lock-1"); // without a device plugin it fails, and nobody completes the allocation
        boolean released = awaitLockReleased(b, node);
        Duration held = Duration.ofNanos(System.nanoTime() - start);
        BindResult second = scheduler.bind(namespace, "b-lock-2", node);
        Duration between = Duration.ofNanos(System.nanoTime() - start);
        if (!second.bound()) {
            throw new CheckFailed("second bind refused: " + second.error() + " (lock of " + namespace
                    + "/b-lock-1 " + (released ? "released after " + Lab.millis(held) : "still held after "
                    + Lab.seconds(held) + ": nobody completed the allocation") + ")");
        }
        KubeletStandIn.PodResult admitted = kubeletAdmits(b, "b-lock-2");
        if (!admitted.admitted()) {
            throw new CheckFailed("b-lock-2: kubelet's admission failed: " + admitted.error().orElse("?"));
        }
        awaitAllocated(b, "b-lock-2", node);
        return node + ": bind b-lock-1 ok, node lock held " + Lab.millis(held) + " until the agent's device plugin"
                + " completed the allocation in kubelet's Allocate and released it; bind b-lock-2 ok " + Lab.millis(between) + " after the first"
                + " (without release: refused until HAMi's "
                + GoDuration.format(AllocationConfig.DEFAULT_NODE_LOCK_TIMEOUT) + " lock expiry)";
    }

    // --- 6 ----------------------------------------------------------------------------------------------------

    private String controlPlaneIsolation() throws CheckFailed {
        List<String> evidence = new ArrayList<>();
        for (LabTenant tenant : List.of(a, b)) {
            List<String> nodes = nodeNames(tenant);
            List<String> own = tenant.spec.nodes().stream().sorted().toList();
            if (!nodes.equals(own)) {
                throw new CheckFailed(tenant.spec.name() + "'s API lists nodes " + nodes + " (expected: only "
                        + String.join(", ", own) + ")");
            }
            List<Pod> pods = tenant.client().pods().inAnyNamespace().list().getItems();
            List<String> foreign = pods.stream().map(p -> p.getMetadata().getNamespace() + "/"
                    + p.getMetadata().getName()).filter(p -> !p.startsWith(tenant.spec.namespace() + "/")).toList();
            if (!foreign.isEmpty()) {
                throw new CheckFailed(tenant.spec.name() + "'s API shows pods outside " + tenant.spec.namespace() + ": "
                        + foreign);
            }
            List<String> described = new ArrayList<>();
            for (String nodeName : tenant.spec.nodes()) {
                Node node = tenant.client().nodes().withName(nodeName).get();
                List<String> kinds = new ArrayList<>();
                List<GpuDevice> gpus = LabScheduler.registeredDevices(node);
                if (!gpus.isEmpty()) {
                    kinds.add(gpus.size() + " × " + gpus.stream().map(GpuDevice::type).distinct()
                            .collect(Collectors.joining("/")));
                }
                for (NodeVendor vendor : otherVendors(node)) {
                    List<RegisteredDevice> devices = LabScheduler.registeredDevices(node, vendor);
                    if (!devices.isEmpty()) {
                        kinds.add(devices.size() + " × " + devices.stream().map(RegisteredDevice::type).distinct()
                                .collect(Collectors.joining("/")));
                    }
                }
                described.add("node " + nodeName + " (" + (kinds.isEmpty() ? "no GPUs registered"
                        : String.join(", ", kinds)) + ")");
            }
            evidence.add(tenant.spec.name() + " API: " + String.join(", ", described) + ", " + pods.size()
                    + " pods, all in " + tenant.spec.namespace());
        }
        return String.join("; ", evidence);
    }

    // --- 7 ----------------------------------------------------------------------------------------------------

    private String tunnelIsolation() throws CheckFailed, InterruptedException {
        CredentialProbe.Outcome aTokenAtB = CredentialProbe.attempt(b.server().agentAddress(),
                b.ca().trustBundle(), null, a.token(), a.spec.node(), group, Lab.CALL_TIMEOUT, clock);
        if (aTokenAtB.accepted()) {
            throw new CheckFailed(b.spec.serverId() + " accepted tenant-a's agent token (serverid "
                    + aTokenAtB.serverId() + "; expected: refused, it requires a tenant-b client certificate)");
        }
        CredentialProbe.Outcome bCertAtA = CredentialProbe.attempt(a.server().agentAddress(),
                a.ca().trustBundle(), b.agentCertificate(), null, b.spec.node(), group, Lab.CALL_TIMEOUT, clock);
        if (bCertAtA.accepted()) {
            throw new CheckFailed(a.spec.serverId() + " accepted tenant-b's agent certificate (serverid "
                    + bCertAtA.serverId() + "; expected: refused, it requires a tenant-a token)");
        }
        String aToB = dialDenied(a, b.webhookService().address(), a.spec.name() + " tunnel → " + b.spec.name()
                + " webhook", null);
        String bToA = dialDenied(b, a.webhookService().address(), b.spec.name() + " tunnel → " + a.spec.name()
                + " webhook", null);
        // The agent's own admin port (thread dumps, heap histograms) is never dialled, whatever --dial-allow says.
        String aAdmin = dialDenied(a, adminAddress(a), a.spec.name() + " tunnel → " + a.spec.node() + " admin port",
                DialPolicy.ADMIN_PORT);
        String bAdmin = dialDenied(b, adminAddress(b), b.spec.name() + " tunnel → " + b.spec.node() + " admin port",
                DialPolicy.ADMIN_PORT);
        return "tenant-a token → " + b.spec.serverId() + ": refused (" + aTokenAtB.refusal() + "); tenant-b"
                + " certificate → " + a.spec.serverId() + ": refused (" + bCertAtA.refusal() + "); " + aToB + "; "
                + bToA + "; " + aAdmin + "; " + bAdmin;
    }

    private static InetSocketAddress adminAddress(LabTenant tenant) {
        return new InetSocketAddress("127.0.0.1", tenant.agent().admin().orElseThrow().boundPort());
    }

    /**
     * Dials {@code target} through {@code tenant}'s server; the agent's dial policy must refuse it (by {@code rule}
     * when given).
     */
    private String dialDenied(LabTenant tenant, InetSocketAddress target, String description, String rule)
            throws CheckFailed, InterruptedException {
        String what = description + " " + LabTenant.hostPort(target);
        try (ProxyClient proxy = tenant.proxyClient()) {
            Channel channel = proxy.dial(target.getHostString(), target.getPort(), new ChannelInboundHandlerAdapter())
                    .get(Lab.CALL_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            channel.close();
            throw new CheckFailed(what + ": dial succeeded (expected: denied by " + tenant.spec.node()
                    + "'s dial policy)");
        } catch (ExecutionException e) {
            String reason = String.valueOf(e.getCause().getMessage());
            if (!reason.contains("denied by policy")) {
                // The agent tried the address: only the target's answer stopped it, not the policy.
                throw new CheckFailed(what + ": not stopped by " + tenant.spec.node() + "'s dial policy, the dial"
                        + " failed at the target: " + reason);
            }
            if (rule != null && !reason.contains("denied by policy (" + rule + ")")) {
                throw new CheckFailed(what + ": " + reason + " (expected: denied by policy (" + rule + "))");
            }
            return what + ": " + reason;
        } catch (TimeoutException e) {
            throw new CheckFailed(what + ": no DIAL_RSP within " + Lab.seconds(Lab.CALL_TIMEOUT));
        }
    }

    // --- 8 ----------------------------------------------------------------------------------------------------

    private String serverRestart() throws CheckFailed, InterruptedException {
        String agentId = a.spec.node();
        long start = System.nanoTime();
        a.restartServer();
        Duration restarted = Duration.ofNanos(System.nanoTime() - start);
        boolean reconnected = waiter.until(timeout, () -> a.server().snapshot().agents().stream()
                .anyMatch(agent -> agent.agentId().equals(agentId)));
        Duration reconnect = Duration.ofNanos(System.nanoTime() - start);
        InetSocketAddress listening = a.server().agentAddress();
        if (!reconnected) {
            throw new CheckFailed("agent " + agentId + " did not reconnect to the restarted " + a.spec.serverId()
                    + " within " + Lab.seconds(timeout) + ": the server listens on " + LabTenant.hostPort(listening)
                    + ", the agent dials 127.0.0.1:" + a.agent().config().tunnel().orElseThrow().proxyServerPort()
                    + "; agent " + notReady(a.agent()));
        }
        Admission admission = admit(a, "after-restart", Map.of(ResourceNames.NVIDIA_GPU, "1"));
        String schedulerName = admission.stored().getSpec().getSchedulerName();
        if (!LabScheduler.SCHEDULER_NAME.equals(schedulerName)) {
            throw new CheckFailed("after-restart admitted but not mutated: schedulerName " + schedulerName);
        }
        // A Kamaji-style worker's node agent has no server connection: the restart leaves it ready.
        LabTenant.Worker worker = a.workers().get(0);
        String nodeRole = "";
        if (worker.split()) {
            String nodeReady = notReady(worker.nodeAgent());
            if (!"ready".equals(nodeReady)) {
                throw new CheckFailed(worker.nodeAgentLabel() + " (--tunnel=false) " + nodeReady + " after "
                        + a.spec.serverId() + "'s restart (expected: ready, it has no server connection)");
            }
            nodeRole = "; " + worker.nodeAgentLabel() + " (--tunnel=false) stayed ready";
        }
        return a.spec.serverId() + " stopped and started again on " + LabTenant.hostPort(listening) + " in "
                + Lab.millis(restarted) + "; agent " + agentId + " reconnected " + Lab.millis(reconnect)
                + " after the stop; pod after-restart admitted through the new server: schedulerName="
                + schedulerName + " (" + admission.timings() + ")" + nodeRole;
    }

    // --- 9 ----------------------------------------------------------------------------------------------------

    /**
     * tenant-b's worker through kubelet's path: its agent's device plugin is registered with the kubelet stand-in
     * and lists every GPU's replicas; a pod with an init container and a sidecar (no GPU) and one GPU container is
     * admitted, filtered, bound and admitted by kubelet, whose Allocate for the GPU container answers HAMi-core's
     * environment and mounts; the entries are consumed, the pod allocated, the node lock released.
     */
    private String kubeletPath() throws CheckFailed, InterruptedException {
        LabTenant tenant = b;
        String node = tenant.spec.node();
        String namespace = tenant.spec.namespace();
        if (tenant.kubelet() == null) {
            throw new CheckFailed(node + " has no kubelet stand-in: Unix sockets need Netty's native epoll (Linux)");
        }
        Optional<KubeletStandIn.Plugin> registered = tenant.kubelet().plugin(ResourceNames.NVIDIA_GPU);
        if (registered.isEmpty()) {
            throw new CheckFailed(node + ": kubelet has no device plugin registered for " + ResourceNames.NVIDIA_GPU
                    + " (kubelet.sock in " + tenant.kubelet().directory() + "; agent's device plugin: "
                    + PartViews.devicePlugin(tenant.workers().get(0).nodeAgent()).map(p -> p.snapshot().phase() + " at "
                    + p.config().socket()
                    + ": " + p.snapshot().detail()).orElse("off") + ")");
        }
        KubeletStandIn.Plugin plugin = registered.get();
        RegisterRequest registration = plugin.registration();
        int replicas = LabScheduler.registeredDevices(tenant.client().nodes().withName(node).get()).stream()
                .mapToInt(GpuDevice::count).sum();
        if (!"v1beta1".equals(registration.getVersion()) || !"nvidia-gpu.sock".equals(registration.getEndpoint())
                || plugin.healthyIds().size() != replicas) {
            throw new CheckFailed(node + ": registration " + registration.getVersion() + " endpoint "
                    + registration.getEndpoint() + ", ListAndWatch " + plugin.healthyIds().size() + " healthy of "
                    + plugin.devices().size() + " (expected: v1beta1, nvidia-gpu.sock, " + replicas
                    + " healthy: GPUs × split count)");
        }
        String name = "b-kubelet";
        Map<String, Quantity> limits = new LinkedHashMap<>();
        limits.put(ResourceNames.NVIDIA_GPU_MEMORY, new Quantity(Long.toString(KUBELET_POD_MEMORY_MIB)));
        limits.put(ResourceNames.NVIDIA_GPU_CORES, new Quantity(Integer.toString(KUBELET_POD_CORES)));
        Pod pod = new PodBuilder()
                .withNewMetadata().withName(name).withNamespace(namespace).addToLabels("app", "lab").endMetadata()
                .withNewSpec()
                    .addNewInitContainer().withName("setup").withImage("busybox:1.36").withCommand("true")
                    .endInitContainer()
                    .addNewContainer().withName("cuda").withImage("nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04")
                        .withCommand("sleep", "infinity").withNewResources().withLimits(limits).endResources()
                    .endContainer()
                    .addNewContainer().withName("sidecar").withImage("busybox:1.36").withCommand("sleep", "infinity")
                    .endContainer()
                .endSpec()
                .withNewStatus().withPhase("Pending").endStatus()
                .build();
        admit(tenant, name, pod);
        LabScheduler scheduler = schedulers.get(tenant);
        FilterResult filter = scheduler.filter(namespace, name);
        if (!filter.fits()) {
            throw new CheckFailed(name + " refused by Filter: " + filter.refusal());
        }
        BindResult bind = scheduler.bind(namespace, name, filter.node().get());
        if (!bind.bound()) {
            throw new CheckFailed(name + " Bind refused: " + bind.error());
        }
        KubeletStandIn.PodResult admission = kubeletAdmits(tenant, name);
        if (!admission.admitted()) {
            throw new CheckFailed(name + ": kubelet's admission failed: " + admission.error().orElse("?"));
        }
        if (admission.containers().size() != 1 || !admission.containers().get(0).container().equals("cuda")) {
            throw new CheckFailed(name + ": kubelet called Allocate for " + admission.containers().stream()
                    .map(KubeletStandIn.ContainerResult::container).toList() + " (expected: [cuda] only)");
        }
        KubeletStandIn.ContainerResult cuda = admission.containers().get(0);
        ContainerAllocateResponse answer = cuda.response().getContainerResponses(0);
        ContainerDevice device = filter.devices().get(1).get(0);
        String uid = tenant.client().pods().inNamespace(namespace).withName(name).get().getMetadata().getUid();
        Map<String, String> envs = answer.getEnvsMap();
        String cache = envs.getOrDefault(HamiCore.ENV_MEMORY_SHARED_CACHE, "");
        Map<String, String> expected = new LinkedHashMap<>();
        expected.put(HamiCore.ENV_VISIBLE_DEVICES, device.uuid());
        expected.put(HamiCore.ENV_MEMORY_LIMIT_PREFIX + 0, device.memoryMiB() + "m");
        expected.put(HamiCore.ENV_SM_LIMIT, Integer.toString(device.cores()));
        expected.put(HamiCore.ENV_MEMORY_SHARED_CACHE, cache);
        List<String> mounts = answer.getMountsList().stream().map(m -> m.getContainerPath() + "←" + m.getHostPath()
                + (m.getReadOnly() ? " (ro)" : "")).toList();
        List<String> expectedMounts = List.of("/usr/local/vgpu/libvgpu.so←/usr/local/vgpu/libvgpu.so (ro)",
                "/usr/local/vgpu←/usr/local/vgpu/containers/" + uid + "_cuda", "/tmp/vgpulock←/tmp/vgpulock",
                "/etc/ld.so.preload←/usr/local/vgpu/ld.so.preload (ro)");
        if (!envs.equals(expected) || !cache.matches("/usr/local/vgpu/[0-9a-f-]{36}\\.cache")
                || !mounts.equals(expectedMounts)) {
            throw new CheckFailed(name + ": Allocate answered env " + envs + " mounts " + mounts + " (expected: env "
                    + expected + " with a /usr/local/vgpu/<uuid>.cache, mounts " + expectedMounts + ")");
        }
        awaitAllocated(tenant, name, filter.node().get());
        String toAllocate = Annotations.get(tenant.client().pods().inNamespace(namespace).withName(name).get()
                .getMetadata().getAnnotations(), Annotations.POD_DEVICES_TO_ALLOCATE);
        if (!";;;".equals(toAllocate)) {
            throw new CheckFailed(name + ": " + Annotations.POD_DEVICES_TO_ALLOCATE + " \"" + toAllocate
                    + "\" after Allocate (expected: \";;;\", every entry consumed, positions kept)");
        }
        String env = envs.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue())
                .collect(Collectors.joining(" "));
        return node + ": device plugin registered with kubelet (" + registration.getVersion() + ", endpoint "
                + registration.getEndpoint() + ", " + registration.getResourceName() + ", preferred allocation "
                + (plugin.options().getGetPreferredAllocationAvailable() ? "on" : "off") + "), ListAndWatch "
                + plugin.healthyIds().size() + " × Healthy; pod " + name + " (init setup, cuda, sidecar): kubelet"
                + " Allocate(cuda, " + cuda.deviceIds() + ") → env " + env + "; mounts " + String.join(", ", mounts)
                + "; " + Annotations.POD_DEVICES_TO_ALLOCATE + " \"" + toAllocate + "\", bind-phase success, node lock"
                + " released";
    }

    // --- 10 ---------------------------------------------------------------------------------------------------

    /**
     * tenant-b's second worker, with simulated Hygon and Ascend devices: (a) an Ascend pod and a Hygon pod, admitted
     * through the tunnel, placed on a device of their vendor, allocated through kubelet's path on the vendor's own
     * socket — Allocate's answer printed — and completed; (b) a pod asking for NVIDIA in one container and Ascend in
     * another: after the first Allocate it is still allocating and the node still locked, after the second it is
     * complete and the lock released once; (c) a pod whose only device container is an init container takes the
     * node lock at Bind and releases it after that container's Allocate.
     */
    private String heterogeneousDevices() throws CheckFailed, InterruptedException {
        LabTenant tenant = b;
        LabTenant.Worker worker = tenant.workers().stream().filter(w -> !w.spec.vendorDevices().isEmpty())
                .findFirst().orElseThrow(() -> new CheckFailed(tenant.spec.name() + " has no worker with Hygon or"
                        + " Ascend devices"));
        NodeVendor ascend = worker.spec.vendorDevices().keySet().stream().map(VendorPreset::vendor)
                .filter(v -> v.kind() == NodeVendor.Kind.ASCEND).findFirst().orElseThrow(() ->
                        new CheckFailed(worker.node() + " has no Ascend devices (--mock-devices="
                                + worker.spec.mockDevices() + ")"));
        NodeVendor hygon = NodeVendor.HYGON;
        String namespace = tenant.spec.namespace();
        String webhookNode = tenant.spec.node();
        List<String> evidence = new ArrayList<>();

        // (a) one pod per vendor.
        Map<String, String> npuLimits = new LinkedHashMap<>();
        npuLimits.put(ascend.resourceName(), "1");
        npuLimits.put(ascend.memoryResource(), Long.toString(NPU_POD_MEMORY_MIB));
        String npuPod = "b2-npu";
        Admission npuAdmission = admit(tenant, npuPod, pod(namespace, npuPod, List.of(),
                List.of(container("npu", "busybox:1.36", npuLimits))));
        String rounded = vendorAdmitted(tenant, npuAdmission, npuPod, "npu", ascend.memoryResource());
        FilterResult npuFilter = placeAndBind(tenant, npuPod, worker.node());
        ContainerDevice npu = onlyDevice(npuPod, npuFilter, ascend);
        KubeletStandIn.ContainerResult npuAllocate = allocateOnly(tenant, npuPod, "npu");
        Map<String, String> npuEnv = npuAllocate.response().getContainerResponses(0).getEnvsMap();
        Map<String, String> npuExpected = ascendEnv(tenant, worker, npuPod, ascend, npu);
        if (!npuEnv.equals(npuExpected)) {
            throw new CheckFailed(npuPod + ": Allocate answered env " + npuEnv + " (expected: " + npuExpected
                    + ", from " + AscendRuntimeInfo.annotationKey(ascend.commonWord()) + ")");
        }
        awaitAllocated(tenant, npuPod, worker.node());
        evidence.add(npuPod + " (" + ascend.resourceName() + ": 1, " + ascend.memoryResource() + ": "
                + NPU_POD_MEMORY_MIB + " → " + rounded + " by the webhook on " + webhookNode + ") → " + worker.node()
                + " " + deviceLabel(tenant, worker.node(), ascend, npu.uuid()) + ": kubelet Allocate(npu, "
                + npuAllocate.deviceIds() + ") on " + ascend.socketName() + " → env " + env(npuEnv)
                + ", bind-phase success, node lock released");

        Map<String, String> dcuLimits = dcuLimits(hygon);
        String dcuPod = "b2-dcu";
        Admission dcuAdmission = admit(tenant, dcuPod, pod(namespace, dcuPod, List.of(),
                List.of(container("dcu", "busybox:1.36", dcuLimits))));
        vendorAdmitted(tenant, dcuAdmission, dcuPod, "dcu", null);
        FilterResult dcuFilter = placeAndBind(tenant, dcuPod, worker.node());
        ContainerDevice dcu = onlyDevice(dcuPod, dcuFilter, hygon);
        KubeletStandIn.ContainerResult dcuAllocate = allocateOnly(tenant, dcuPod, "dcu");
        ContainerAllocateResponse dcuAnswer = dcuAllocate.response().getContainerResponses(0);
        if (!dcuAnswer.getEnvsMap().isEmpty() || dcuAnswer.getMountsCount() > 0 || dcuAnswer.getDevicesCount() > 0
                || !dcuAnswer.getAnnotationsMap().isEmpty()) {
            throw new CheckFailed(dcuPod + ": Allocate answered env " + dcuAnswer.getEnvsMap() + ", "
                    + dcuAnswer.getMountsCount() + " mounts, " + dcuAnswer.getDevicesCount() + " device specs"
                    + " (expected: nothing, as the simulated dcu-vgpu-device-plugin)");
        }
        awaitAllocated(tenant, dcuPod, worker.node());
        evidence.add(dcuPod + " (" + dcuLimits.entrySet().stream().map(e -> e.getKey() + ": " + e.getValue())
                .collect(Collectors.joining(", ")) + ") → " + worker.node() + " "
                + deviceLabel(tenant, worker.node(), hygon, dcu.uuid()) + ": kubelet Allocate(dcu, "
                + dcuAllocate.deviceIds() + ") on " + hygon.socketName() + " → (no env: dcu-vgpu-device-plugin"
                + " answers none; device nodes omitted in simulation), " + hygon.allocatedKey() + " \""
                + podAnnotation(tenant, dcuPod, hygon.allocatedKey()) + "\", bind-phase success, node lock"
                + " released");

        // (b) NVIDIA and Ascend in one pod: complete, and the lock released once, after the last vendor's entry.
        String mixedPod = "b2-mixed";
        Map<String, String> cudaLimits = shareLimits(KUBELET_POD_MEMORY_MIB, KUBELET_POD_CORES);
        admit(tenant, mixedPod, pod(namespace, mixedPod, List.of(), List.of(
                container("cuda", "nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04", cudaLimits),
                container("npu", "busybox:1.36", Map.of(ascend.resourceName(), "1")))));
        FilterResult mixedFilter = placeAndBind(tenant, mixedPod, worker.node());
        Pod mixed = tenant.client().pods().inNamespace(namespace).withName(mixedPod).get();
        KubeletStandIn.PodResult cuda = kubeletAllocates(tenant, mixed, List.of(container(mixed, "cuda")));
        if (!cuda.admitted() || cuda.containers().size() != 1) {
            throw new CheckFailed(mixedPod + ": kubelet's Allocate for cuda: " + cuda.error().orElse(
                    cuda.containers().size() + " calls (expected: 1)"));
        }
        String phaseBetween = podAnnotation(tenant, mixedPod, Annotations.POD_BIND_PHASE);
        String lockBetween = lockValue(tenant, worker.node());
        String owner = namespace + "," + mixedPod;
        if (!Annotations.BIND_PHASE_ALLOCATING.equals(phaseBetween) || !lockBetween.endsWith("," + owner)) {
            throw new CheckFailed(mixedPod + ": after cuda's Allocate (" + ascend.commonWord() + "'s entry still to"
                    + " come) bind-phase " + phaseBetween + ", node lock " + lockBetween + " (expected: "
                    + Annotations.BIND_PHASE_ALLOCATING + ", held by " + owner + ")");
        }
        KubeletStandIn.PodResult npuMixed = kubeletAllocates(tenant, mixed, List.of(container(mixed, "npu")));
        if (!npuMixed.admitted() || npuMixed.containers().size() != 1) {
            throw new CheckFailed(mixedPod + ": kubelet's Allocate for npu: " + npuMixed.error().orElse(
                    npuMixed.containers().size() + " calls (expected: 1)"));
        }
        awaitAllocated(tenant, mixedPod, worker.node());
        String releasedBy = "," + owner + "\"";
        boolean recorded = waiter.until(timeout, () -> lockReleases(tenant, worker.node(), releasedBy) >= 1);
        long releases = lockReleases(tenant, worker.node(), releasedBy);
        if (!recorded || releases != 1) {
            throw new CheckFailed(mixedPod + ": " + releases + " " + LockPolicy.REASON_LOCK_RELEASED + " events for"
                    + " its lock on " + worker.node() + " (expected: exactly one)");
        }
        ContainerDevice mixedGpu = mixedFilter.devices().get(0).get(0);
        ContainerDevice mixedNpu = mixedFilter.byVendor().get(ascend).get(1).get(0);
        evidence.add(mixedPod + " (cuda: " + KUBELET_POD_MEMORY_MIB + " MiB / " + KUBELET_POD_CORES + " % of an"
                + " NVIDIA GPU, npu: a whole " + ascend.commonWord() + ") → " + worker.node() + " "
                + deviceLabel(tenant, worker.node(), NodeVendor.NVIDIA, mixedGpu.uuid()) + " + "
                + deviceLabel(tenant, worker.node(), ascend, mixedNpu.uuid()) + ": Allocate(cuda) → env "
                + HamiCore.ENV_VISIBLE_DEVICES + "=" + cuda.containers().get(0).response().getContainerResponses(0)
                .getEnvsMap().get(HamiCore.ENV_VISIBLE_DEVICES) + " …, bind-phase " + phaseBetween
                + ", node lock held; Allocate(npu) → env " + env(npuMixed.containers().get(0).response().getContainerResponses(0).getEnvsMap())
                + ", bind-phase success, node lock released once (" + releases + " "
                + LockPolicy.REASON_LOCK_RELEASED + " event)");

        // (c) The only device container is an init container: the lock is taken at Bind and released after it.
        String initPod = "b2-init";
        admit(tenant, initPod, pod(namespace, initPod, List.of(container("load", "busybox:1.36", dcuLimits)),
                List.of(container("app", "busybox:1.36", Map.of()))));
        placeAndBind(tenant, initPod, worker.node());
        String lockAtBind = lockValue(tenant, worker.node());
        if (!lockAtBind.endsWith("," + namespace + "," + initPod)) {
            throw new CheckFailed(initPod + ": node lock after Bind " + lockAtBind + " (expected: held by "
                    + namespace + "," + initPod + ", whichever container asks for the devices)");
        }
        KubeletStandIn.PodResult init = kubeletAdmits(tenant, initPod);
        if (!init.admitted() || init.containers().size() != 1 || !init.containers().get(0).container().equals("load")) {
            throw new CheckFailed(initPod + ": kubelet called Allocate for " + init.containers().stream()
                    .map(KubeletStandIn.ContainerResult::container).toList() + init.error().map(e -> " (" + e + ")")
                    .orElse("") + " (expected: [load] only)");
        }
        awaitAllocated(tenant, initPod, worker.node());
        evidence.add(initPod + " (init container load: 1 DCU, app: none): node lock taken at Bind, kubelet"
                + " Allocate(load) only, " + hygon.toAllocateKey() + " \"" + podAnnotation(tenant, initPod,
                hygon.toAllocateKey()) + "\", bind-phase success, node lock released");
        return String.join("; ", evidence);
    }

    /** The stored pod went to HAMi's scheduler through tenant's own webhook; returns the memory limit it stored. */
    private static String vendorAdmitted(LabTenant tenant, Admission admission, String name, String container,
            String memoryResource) throws CheckFailed {
        Pod stored = tenant.client().pods().inNamespace(tenant.spec.namespace()).withName(name).get();
        if (stored == null) {
            throw new CheckFailed(tenant.spec.name() + ": pod " + name + " admitted but not stored");
        }
        if (!LabScheduler.SCHEDULER_NAME.equals(stored.getSpec().getSchedulerName())) {
            throw new CheckFailed(tenant.spec.name() + ": pod " + name + " stored with schedulerName "
                    + stored.getSpec().getSchedulerName() + " (expected: " + LabScheduler.SCHEDULER_NAME + "; the"
                    + " webhook on " + tenant.spec.node() + " found no HAMi device in it: "
                    + (tenant.ascendWebhook() ? "" : "it runs without --enable-ascend, ") + "patch "
                    + admission.patchOperations() + ")");
        }
        List<AdmissionRecord> seen = PartViews.webhook(tenant.agent()).orElseThrow().recentAdmissions().snapshot();
        if (seen.stream().noneMatch(r -> r.uid().equals(admission.uid()))) {
            throw new CheckFailed(tenant.spec.name() + ": admission " + admission.uid() + " was answered, but not by"
                    + " the webhook of " + tenant.spec.node());
        }
        if (memoryResource == null) {
            return "";
        }
        Quantity memory = container(stored, container).getResources().getLimits().get(memoryResource);
        return memory == null ? "none" : memory.toString();
    }

    /** Filter (must choose {@code node}) and Bind. */
    private FilterResult placeAndBind(LabTenant tenant, String pod, String node) throws CheckFailed {
        LabScheduler scheduler = schedulers.get(tenant);
        FilterResult filter = scheduler.filter(tenant.spec.namespace(), pod);
        if (!filter.fits()) {
            throw new CheckFailed(pod + " refused by Filter: " + filter.refusal());
        }
        if (!filter.node().get().equals(node)) {
            throw new CheckFailed(pod + " placed on " + filter.node().get() + " (expected: " + node + ")");
        }
        BindResult bind = scheduler.bind(tenant.spec.namespace(), pod, node);
        if (!bind.bound()) {
            throw new CheckFailed(pod + " Bind refused on " + node + ": " + bind.error());
        }
        return filter;
    }

    /** The one device a single-container pod was given of {@code vendor}. */
    private static ContainerDevice onlyDevice(String pod, FilterResult filter, NodeVendor vendor)
            throws CheckFailed {
        List<List<ContainerDevice>> entries = filter.byVendor().getOrDefault(vendor, List.of());
        if (entries.size() != 1 || entries.get(0).size() != 1) {
            throw new CheckFailed(pod + ": Filter chose " + filter.byVendor() + " (expected: one "
                    + vendor.displayName() + " device)");
        }
        return entries.get(0).get(0);
    }

    /** Kubelet's admission of a bound pod whose only device container is {@code container}. */
    private KubeletStandIn.ContainerResult allocateOnly(LabTenant tenant, String pod, String container)
            throws CheckFailed {
        KubeletStandIn.PodResult result = kubeletAdmits(tenant, pod);
        if (!result.admitted()) {
            throw new CheckFailed(pod + ": kubelet's admission failed: " + result.error().orElse("?"));
        }
        if (result.containers().size() != 1 || !result.containers().get(0).container().equals(container)) {
            throw new CheckFailed(pod + ": kubelet called Allocate for " + result.containers().stream()
                    .map(KubeletStandIn.ContainerResult::container).toList() + " (expected: [" + container + "])");
        }
        return result.containers().get(0);
    }

    /**
     * What Ascend's device plugin answers for {@code device}: its position on the node, and the template the
     * scheduler wrote for it in {@code huawei.com/<chip>} (none for a whole chip).
     */
    private static Map<String, String> ascendEnv(LabTenant tenant, LabTenant.Worker worker, String pod,
            NodeVendor ascend, ContainerDevice device) throws CheckFailed {
        String key = AscendRuntimeInfo.annotationKey(ascend.commonWord());
        String value = podAnnotation(tenant, pod, key);
        AscendRuntimeInfo info;
        try {
            info = AscendRuntimeInfo.lookup(AscendRuntimeInfo.decode(value == null ? "null" : value))
                    .get(device.uuid());
        } catch (IllegalArgumentException e) {
            throw new CheckFailed(pod + ": " + key + " does not decode: " + e.getMessage());
        }
        if (info == null || info.temp().isEmpty()) {
            throw new CheckFailed(pod + ": " + key + " is " + value + " (expected: a vNPU template for "
                    + device.uuid() + ")");
        }
        Node node = tenant.client().nodes().withName(worker.node()).get();
        long index = LabScheduler.registeredDevices(node, ascend).stream().filter(d -> d.id().equals(device.uuid()))
                .findFirst().map(RegisteredDevice::index).orElse(-1L);
        Map<String, String> env = new LinkedHashMap<>();
        env.put(AscendVendor.VISIBLE_DEVICES_ENV, Long.toString(index));
        env.put("ASCEND_VNPU_SPECS", info.temp());
        return env;
    }

    /** NodeLockReleased events of {@code node} whose message names the lock value ending in {@code suffix}. */
    private static long lockReleases(LabTenant tenant, String node, String suffix) {
        return tenant.client().v1().events().inAnyNamespace().list().getItems().stream()
                .filter(e -> LockPolicy.REASON_LOCK_RELEASED.equals(e.getReason()) && e.getInvolvedObject() != null
                        && node.equals(e.getInvolvedObject().getName()) && e.getMessage() != null
                        && e.getMessage().contains(suffix))
                .count();
    }

    private static Map<String, String> dcuLimits(NodeVendor hygon) {
        Map<String, String> limits = new LinkedHashMap<>();
        limits.put(hygon.resourceName(), "1");
        limits.put(hygon.memoryResource(), Long.toString(DCU_POD_MEMORY_MIB));
        limits.put(hygon.coreResource(), Integer.toString(DCU_POD_CORES));
        return limits;
    }

    private static String podAnnotation(LabTenant tenant, String pod, String key) {
        Pod current = tenant.client().pods().inNamespace(tenant.spec.namespace()).withName(pod).get();
        return current == null ? null : Annotations.get(current.getMetadata().getAnnotations(), key);
    }

    private static String env(Map<String, String> env) {
        return env.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue()).collect(Collectors.joining(" "));
    }

    private static Container container(Pod pod, String name) throws CheckFailed {
        return LabScheduler.containers(pod).stream().filter(c -> c.getName().equals(name)).findFirst()
                .orElseThrow(() -> new CheckFailed("pod " + pod.getMetadata().getName() + " has no container " + name));
    }

    private static Container container(String name, String image, Map<String, String> limits) {
        Map<String, Quantity> quantities = new LinkedHashMap<>();
        limits.forEach((key, value) -> quantities.put(key, new Quantity(value)));
        return new ContainerBuilder().withName(name).withImage(image).withCommand("sleep", "infinity")
                .withNewResources().withLimits(quantities).endResources().build();
    }

    private static Pod pod(String namespace, String name, List<Container> initContainers,
            List<Container> containers) {
        return new PodBuilder()
                .withNewMetadata().withName(name).withNamespace(namespace).addToLabels("app", "lab").endMetadata()
                .withNewSpec().withInitContainers(initContainers).withContainers(containers).endSpec()
                .withNewStatus().withPhase("Pending").endStatus()
                .build();
    }

    /** {@code #0 1A2B3C4D-00 (Ascend910B4)}: a device of {@code vendor} on {@code node}. */
    private static String deviceLabel(LabTenant tenant, String node, NodeVendor vendor, String id) {
        Node current = tenant.client().nodes().withName(node).get();
        return LabScheduler.registeredDevices(current, vendor).stream().filter(d -> d.id().equals(id)).findFirst()
                .map(d -> VendorFirstFitPlacement.shortId(d) + " (" + d.type() + ")").orElse(id);
    }

    /** The node's Hygon and Ascend registrations (chips of HAMi's chart), by their register annotations. */
    static List<NodeVendor> otherVendors(Node node) {
        Map<String, String> annotations = node.getMetadata().getAnnotations();
        List<NodeVendor> vendors = new ArrayList<>();
        for (NodeVendor vendor : KUBELET_VENDORS) {
            if (vendor.kind() != NodeVendor.Kind.NVIDIA && Annotations.get(annotations, vendor.registerKey()) != null) {
                vendors.add(vendor);
            }
        }
        return vendors;
    }

    /**
     * Every device the workers of {@code tenants} registered, per node and vendor, as HAMi v2.10's scheduler reads
     * the register annotations now (nothing for a node that registered nothing).
     */
    static List<LabReport.Device> devices(List<LabTenant> tenants) {
        List<LabReport.Device> out = new ArrayList<>();
        for (LabTenant tenant : tenants) {
            for (LabTenant.Worker worker : tenant.workers()) {
                Node node;
                try {
                    node = tenant.client().nodes().withName(worker.node()).get();
                } catch (KubernetesClientException e) {
                    continue;
                }
                if (node == null) {
                    continue;
                }
                for (NodeVendor vendor : KUBELET_VENDORS) {
                    for (RegisteredDevice device : LabScheduler.registeredDevices(node, vendor)) {
                        out.add(new LabReport.Device(tenant.spec.name(), worker.node(), vendor.kind().display(),
                                vendor.registerKey(), device.id(), device.index(), device.type(), device.devmem(),
                                device.devcore(), device.count(), device.health()));
                    }
                }
            }
        }
        return out;
    }

    // --- 11 ---------------------------------------------------------------------------------------------------

    /**
     * The vGPU monitor on tenant-b's worker, end to end with the HAMi-core stand-in. Two GPU pods are admitted,
     * filtered, bound and admitted by kubelet (Allocate creates each container's cache directory). Before the first
     * pod's container makes its first CUDA call, the agent's {@code /metrics} shows its limits from the allocation
     * annotation ({@code limit_source="annotation"}) and no usage. Then the stand-in writes its region where Allocate's
     * env and mounts put it: the first scan that starts after the write reads it, and the next scrape shows the usage
     * on {@code /metrics}, on the monitor's own listener and on {@code /ui}; a second write's usage follows the same
     * way. The pod is deleted: its cache directory goes once the grace has passed, never before, while the other
     * pod's, and every other live pod's on the node, stays.
     */
    private String vgpuMonitor() throws CheckFailed, InterruptedException {
        LabTenant tenant = b;
        String namespace = tenant.spec.namespace();
        String gonePod = "b-monitor";
        String livePod = "b-monitor-live";
        Map<String, String> limits = shareLimits(MONITOR_POD_MEMORY_MIB, MONITOR_POD_CORES);
        admit(tenant, gonePod, limits);
        Allocation gone = scheduleAndAdmit(tenant, gonePod);
        long allocatedAt = System.nanoTime();
        admit(tenant, livePod, limits);
        Allocation live = scheduleAndAdmit(tenant, livePod);
        if (!gone.node().equals(live.node())) {
            throw new CheckFailed(gonePod + " placed on " + gone.node() + ", " + livePod + " on " + live.node()
                    + " (expected: one node, to see one pod's directory go and the other's stay)");
        }
        String node = gone.node();
        LabTenant.Worker worker = tenant.worker(node).orElseThrow();
        Agent agent = worker.nodeAgent();
        HttpClient http = HttpClient.newBuilder().connectTimeout(Lab.CALL_TIMEOUT).build();
        int health = agent.health().orElseThrow(() -> new CheckFailed(node + ": the agent has no health port"))
                .boundPort();
        Map<String, String> goneLabels = Map.of("namespace", namespace, "pod", gonePod, "container", "cuda");
        Optional<MonitorPart> part = agent.part(MonitorPart.NAME).map(p -> (MonitorPart) p);
        if (part.isEmpty()) {
            MetricsScrape metrics = scrape(http, health);
            throw new CheckFailed(node + ": /metrics has " + metrics.find(LIMIT, goneLabels).size() + " "
                    + LIMIT + " samples for " + namespace + "/" + gonePod + " (agent " + node + " runs without the"
                    + " vGPU monitor, --monitor=false: nobody reads HAMi-core's regions or removes a deleted pod's"
                    + " cache directory)");
        }
        MonitorPart monitor = part.get();
        Path containersDir = monitor.config().containersDir();
        HamiCoreStandIn goneCore = standIn(worker, gonePod, gone);
        HamiCoreStandIn liveCore = standIn(worker, livePod, live);
        Path goneDir = goneCore.hostFile().getParent();
        String goneUid = podUid(tenant, gonePod);
        if (!goneDir.equals(containersDir.resolve(goneUid + "_cuda"))) {
            throw new CheckFailed(gonePod + ": Allocate's env and mounts put HAMi-core's region in " + goneDir
                    + " (expected: the directory the monitor reads, " + containersDir.resolve(goneUid + "_cuda") + ")");
        }

        // (a) Before the first CUDA call: the directory Allocate created, no region, limits from the annotation.
        List<String> regionFiles = regionFiles(goneDir);
        if (!Files.isDirectory(goneDir) || !regionFiles.isEmpty()) {
            throw new CheckFailed(gonePod + ": cache directory " + goneDir + (Files.isDirectory(goneDir)
                    ? " already holds " + regionFiles : " missing") + " after Allocate (expected: created, empty)");
        }
        long limitBytes = MONITOR_POD_MEMORY_MIB << 20;
        if (!waiter.until(timeout, () -> exported(monitor, gonePod, ContainerUsage.Source.ANNOTATION, -1))) {
            throw new CheckFailed(node + ": the vGPU monitor shows no limits for " + namespace + "/" + gonePod
                    + " cuda " + Lab.seconds(timeout) + " after its allocation (last scan: "
                    + describe(monitor.snapshot()) + ")");
        }
        Duration annotationAfter = Duration.ofNanos(System.nanoTime() - allocatedAt);
        MetricsScrape before = scrape(http, health);
        double annotated = single(before, node + " /metrics", LIMIT, with(goneLabels, "limit_source", "annotation"));
        if (annotated != limitBytes || !before.find(USED, goneLabels).isEmpty()) {
            throw new CheckFailed(node + " /metrics before " + gonePod + "'s first CUDA call: " + LIMIT
                    + "{limit_source=\"annotation\"} " + (long) annotated + ", " + before.find(USED, goneLabels).size()
                    + " " + USED + " samples (expected: " + limitBytes + ", none)");
        }

        // (b) The first CUDA calls: the first scan that starts after the write exports the usage.
        HamiCoreStandIn.Written liveWrite = cudaCall(liveCore, livePod);
        List<String> evidence = new ArrayList<>();
        evidence.add(node + ": " + gonePod + ", " + livePod + " (" + MONITOR_POD_MEMORY_MIB + " MiB / "
                + MONITOR_POD_CORES + " % each) allocated through kubelet; before " + gonePod + "'s first CUDA call ("
                + relative(worker, goneDir) + "/ empty) /metrics " + LIMIT + "{…,limit_source=\"annotation\"} "
                + (long) annotated + " (" + Lab.millis(annotationAfter) + " after Allocate), no usage");
        int listener = monitor.listening().orElseThrow(() -> new CheckFailed(node + ": the vGPU monitor has no"
                + " listener (the lab passes --monitor-listen=127.0.0.1:0)")).getPort();
        int admin = agent.admin().orElseThrow(() -> new CheckFailed(node + ": the agent has no admin port"))
                .boundPort();
        for (int call = 1; call <= 2; call++) {
            long start = System.nanoTime();
            HamiCoreStandIn.Written written = cudaCall(goneCore, gonePod);
            Instant writtenAt = clock.instant();
            if (!waiter.until(timeout, () -> monitor.snapshot().at().map(at -> at.isAfter(writtenAt)).orElse(false))) {
                throw new CheckFailed(node + ": no vGPU monitor scan within " + Lab.seconds(timeout) + " of the write"
                        + " (scan interval " + GoDuration.format(monitor.config().scanInterval()) + ")");
            }
            Duration scanned = Duration.ofNanos(System.nanoTime() - start);
            long used = written.devices().get(0).usedBytes();
            if (!exported(monitor, gonePod, ContainerUsage.Source.REGION, used)) {
                throw new CheckFailed(node + ": the first scan after HAMi-core's write " + call + " of "
                        + goneCore.hostFile() + " (" + written.usedMiB() + " MiB) shows " + describe(monitor.snapshot())
                        + " for " + gonePod + " (expected: its region)");
            }
            MetricsScrape metrics = scrape(http, health);
            Duration scraped = Duration.ofNanos(System.nanoTime() - start);
            double onMetrics = single(metrics, node + " /metrics", USED, goneLabels);
            double regionLimit = single(metrics, node + " /metrics", LIMIT, with(goneLabels, "limit_source",
                    "region"));
            double sm = single(metrics, node + " /metrics", UTILIZATION, goneLabels);
            double onListener = single(scrape(http, listener), "the monitor's listener", USED, goneLabels);
            if (onMetrics != used || onListener != used || regionLimit != limitBytes || sm != written.smUtil()) {
                throw new CheckFailed(node + " after HAMi-core's write " + call + " (" + used + " bytes, SM "
                        + written.smUtil() + " %): /metrics " + USED + " " + (long) onMetrics + ", " + LIMIT
                        + "{limit_source=\"region\"} " + (long) regionLimit + ", " + UTILIZATION + " " + sm
                        + "; listener " + USED + " " + (long) onListener + " (expected: " + used + ", " + limitBytes
                        + ", " + written.smUtil() + ", " + used + ")");
            }
            String who = "<tr><td data-label=\"pod\">" + namespace + "/" + gonePod + "</td>"
                    + "<td data-label=\"container\">cuda</td>";
            String row = who + "<td data-label=\"device\">0 " + uuidLabel(written) + "</td>"
                    + "<td data-label=\"used\">" + written.usedMiB() + " MiB</td><td data-label=\"limit\">"
                    + MONITOR_POD_MEMORY_MIB + " MiB</td><td data-label=\"sm\">" + written.smUtil() + " %</td>"
                    + "<td data-label=\"sm-limit\">" + MONITOR_POD_CORES + " %</td><td data-label=\"source\">"
                    + "HAMi-core</td></tr>";
            String page = httpGet(http, admin, "/ui");
            int section = page.indexOf("<section id=\"monitor\">");
            if (section < 0 || page.indexOf(row, section) < 0) {
                int shown = section < 0 ? -1 : page.indexOf(who, section);
                throw new CheckFailed(node + " /ui after HAMi-core's write " + call + ": " + (section < 0
                        ? "no section id=\"monitor\"" : shown < 0 ? "no row for " + namespace + "/" + gonePod
                        + " cuda" : "the row is " + page.substring(shown, Math.max(shown, page.indexOf("</tr>",
                        shown)))) + " (expected: " + row + ")");
            }
            if (call == 1) {
                double liveUsed = single(metrics, node + " /metrics", USED, Map.of("namespace", namespace, "pod",
                        livePod, "container", "cuda"));
                HamiCoreStandIn.Limit limit = goneCore.limits().get(0);
                evidence.add("HAMi-core stand-in wrote " + goneCore.containerFile() + " (limits from Allocate's env: "
                        + (limit.memoryBytes() >> 20) + " MiB, SM " + limit.smPercent() + " %): " + written.usedMiB()
                        + " MiB, SM " + written.smUtil() + " % → read by the first scan after it (+"
                        + Lab.millis(scanned) + "), then /metrics " + USED + " " + (long) onMetrics + ", " + LIMIT
                        + "{…,limit_source=\"region\"} " + (long) regionLimit + ", " + UTILIZATION + " " + (long) sm
                        + "; listener 127.0.0.1:" + listener + " " + USED + " " + (long) onListener + "; /ui row "
                        + namespace + "/" + gonePod + " cuda "
                        + written.usedMiB() + " MiB / " + MONITOR_POD_MEMORY_MIB + " MiB, " + written.smUtil() + " % / "
                        + MONITOR_POD_CORES + " % (+" + Lab.millis(scraped) + "; " + livePod + ": "
                        + (long) liveUsed / (1 << 20) + " MiB)");
                if (liveUsed != liveWrite.devices().get(0).usedBytes()) {
                    throw new CheckFailed(node + " /metrics: " + USED + " " + (long) liveUsed + " for " + livePod
                            + " (expected: " + liveWrite.devices().get(0).usedBytes() + ", its region)");
                }
            } else {
                evidence.add("second write " + written.usedMiB() + " MiB, SM " + written.smUtil() + " % → /metrics "
                        + (long) onMetrics + ", listener " + (long) onListener + ", /ui " + written.usedMiB()
                        + " MiB (+" + Lab.millis(scraped) + ")");
            }
        }

        // (c) The pod goes: its directory after the grace, every live pod's stays.
        Set<Path> others = new TreeSet<>(directories(containersDir));
        others.remove(goneDir);
        Path liveDir = liveCore.hostFile().getParent();
        if (!others.contains(liveDir)) {
            throw new CheckFailed(livePod + ": no cache directory " + liveDir + " before " + gonePod + " is deleted");
        }
        MetricsScrape beforeDelete = scrape(http, health);
        double removedBefore = single(beforeDelete, node + " /metrics", REMOVED, Map.of());
        Duration grace = monitor.config().cacheGrace();
        tenant.client().pods().inNamespace(namespace).withName(gonePod).delete();
        long deleted = System.nanoTime();
        if (!waiter.until(timeout.plus(grace), () -> !Files.exists(goneDir))) {
            throw new CheckFailed(node + ": " + gonePod + "'s cache directory " + goneDir + " still there "
                    + Lab.seconds(timeout.plus(grace)) + " after the pod was deleted (grace "
                    + GoDuration.format(grace) + "; last scan: " + describe(monitor.snapshot()) + ")");
        }
        Duration removedAfter = Duration.ofNanos(System.nanoTime() - deleted);
        if (removedAfter.compareTo(grace) < 0) {
            throw new CheckFailed(node + ": " + gonePod + "'s cache directory removed " + Lab.millis(removedAfter)
                    + " after the pod was deleted (expected: not before the grace, " + GoDuration.format(grace) + ")");
        }
        List<Path> missing = others.stream().filter(dir -> !Files.isDirectory(dir)).toList();
        if (!missing.isEmpty()) {
            throw new CheckFailed(node + ": cache directories of live pods removed along with " + gonePod + "'s: "
                    + missing.stream().map(dir -> relative(worker, dir)).toList());
        }
        MetricsScrape after = scrape(http, health);
        double removedAfterCount = single(after, node + " /metrics", REMOVED, Map.of());
        List<MetricsScrape.Sample> stale = after.samples().stream()
                .filter(sample -> gonePod.equals(sample.labels().get("pod"))).toList();
        if (!stale.isEmpty() || removedAfterCount != removedBefore + 1) {
            throw new CheckFailed(node + " /metrics after " + gonePod + "'s directory was removed: " + stale.size()
                    + " samples still name it, " + REMOVED + " " + (long) removedBefore + " → "
                    + (long) removedAfterCount + " (expected: none, one more)");
        }
        evidence.add("pod " + gonePod + " deleted → its directory removed "
                + Lab.millis(removedAfter) + " later (grace " + GoDuration.format(grace) + "), " + REMOVED + " "
                + (long) removedBefore + " → " + (long) removedAfterCount + ", no sample names it; " + livePod
                + "'s directory" + (others.size() > 1 ? " and the " + (others.size() - 1) + " other live containers'"
                : "") + " stayed");
        return String.join("; ", evidence);
    }

    private static final String USED = "hami_vgpu_memory_used_bytes";
    private static final String LIMIT = "hami_vgpu_memory_limit_bytes";
    private static final String UTILIZATION = "hami_container_device_utilization_ratio";
    private static final String REMOVED = "tenant_gateway_monitor_cache_directories_removed_total";

    /** The first device's UUID as HAMi's labels and the status page show it (40 characters). */
    private static String uuidLabel(HamiCoreStandIn.Written written) {
        String uuid = written.devices().get(0).uuid();
        return uuid.length() <= DeviceUsage.UUID_LABEL_CHARS ? uuid : uuid.substring(0, DeviceUsage.UUID_LABEL_CHARS);
    }

    /** HAMi-core in the {@code cuda} container of {@code pod}, from kubelet's Allocate answer. */
    private static HamiCoreStandIn standIn(LabTenant.Worker worker, String pod, Allocation allocation)
            throws CheckFailed {
        List<KubeletStandIn.ContainerResult> calls = allocation.kubelet().containers();
        if (calls.size() != 1 || !calls.get(0).container().equals("cuda")) {
            throw new CheckFailed(pod + ": kubelet called Allocate for " + calls.stream()
                    .map(KubeletStandIn.ContainerResult::container).toList() + " (expected: [cuda])");
        }
        try {
            return HamiCoreStandIn.of(calls.get(0).response().getContainerResponses(0), worker.hostRoot(),
                    (int) ProcessHandle.current().pid());
        } catch (IllegalArgumentException e) {
            throw new CheckFailed(pod + ": Allocate's answer gives HAMi-core no region: " + e.getMessage());
        }
    }

    private HamiCoreStandIn.Written cudaCall(HamiCoreStandIn core, String pod) throws CheckFailed {
        try {
            return core.cudaCall(clock);
        } catch (IOException e) {
            throw new CheckFailed(pod + ": the HAMi-core stand-in cannot write " + core.hostFile() + ": " + e);
        }
    }

    /**
     * Whether the monitor's latest scan shows {@code pod}'s {@code cuda} container from {@code source} (with
     * {@code usedBytes} on its first device, unless negative).
     */
    private static boolean exported(MonitorPart monitor, String pod, ContainerUsage.Source source, long usedBytes) {
        return monitor.snapshot().containers().stream().anyMatch(c -> c.pod().equals(pod)
                && c.container().equals("cuda") && c.source() == source && !c.devices().isEmpty()
                && (usedBytes < 0 || c.devices().get(0).usedBytes() == usedBytes));
    }

    /** The containers of a monitor scan, as {@code pod/container: source used/limit MiB}. */
    private static String describe(MonitorSnapshot snapshot) {
        if (snapshot.at().isEmpty()) {
            return "none yet";
        }
        return snapshot.containers().stream().map(c -> c.pod() + "/" + c.container() + ": " + c.source().label()
                + c.devices().stream().map(d -> " " + (d.usedBytes() >> 20) + "/" + (d.limitBytes() >> 20) + " MiB")
                .collect(Collectors.joining())).collect(Collectors.joining(", ", "[", "]"))
                + ", waiting for cleanup " + snapshot.waitingForCleanup()
                + snapshot.podsError().map(e -> ", pods not listed: " + e).orElse("");
    }

    private static String podUid(LabTenant tenant, String pod) throws CheckFailed {
        Pod current = tenant.client().pods().inNamespace(tenant.spec.namespace()).withName(pod).get();
        if (current == null || current.getMetadata().getUid() == null) {
            throw new CheckFailed(pod + ": not found in " + tenant.spec.name() + "'s API");
        }
        return current.getMetadata().getUid();
    }

    /** The names of the region files ({@code *.cache}) in {@code dir}; none when it does not exist. */
    private static List<String> regionFiles(Path dir) throws CheckFailed {
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        try (Stream<Path> files = Files.list(dir)) {
            return files.map(f -> f.getFileName().toString()).filter(name -> name.endsWith(".cache")).sorted()
                    .toList();
        } catch (IOException e) {
            throw new CheckFailed("cannot list " + dir + ": " + e);
        }
    }

    private static List<Path> directories(Path dir) throws CheckFailed {
        try (Stream<Path> entries = Files.list(dir)) {
            return entries.filter(Files::isDirectory).toList();
        } catch (IOException e) {
            throw new CheckFailed("cannot list " + dir + ": " + e);
        }
    }

    /** {@code file} as the worker's host sees it ({@code /usr/local/vgpu/containers/…}). */
    private static String relative(LabTenant.Worker worker, Path file) {
        return "/" + worker.hostRoot().relativize(file);
    }

    private static Map<String, String> with(Map<String, String> labels, String key, String value) {
        Map<String, String> out = new LinkedHashMap<>(labels);
        out.put(key, value);
        return out;
    }

    /** The value of the one sample of {@code name} with {@code labels}. */
    private static double single(MetricsScrape metrics, String where, String name, Map<String, String> labels)
            throws CheckFailed {
        List<MetricsScrape.Sample> found = metrics.find(name, labels);
        if (found.size() != 1) {
            throw new CheckFailed(where + ": " + found.size() + " samples of " + name + labels + " (expected: one)");
        }
        return found.get(0).value();
    }

    private MetricsScrape scrape(HttpClient http, int port) throws CheckFailed, InterruptedException {
        String body = httpGet(http, port, "/metrics");
        try {
            return MetricsScrape.parse(body);
        } catch (IllegalArgumentException e) {
            throw new CheckFailed("http://127.0.0.1:" + port + "/metrics is no Prometheus text: " + e.getMessage());
        }
    }

    private static String httpGet(HttpClient http, int port, String path) throws CheckFailed, InterruptedException {
        URI uri = URI.create("http://127.0.0.1:" + port + path);
        try {
            HttpResponse<String> response = http.send(HttpRequest.newBuilder(uri).timeout(Lab.CALL_TIMEOUT).build(),
                    HttpResponse.BodyHandlers.ofString());
            if (response.statusCode() != 200) {
                throw new CheckFailed("GET " + uri + ": HTTP " + response.statusCode() + " (expected: 200)");
            }
            return response.body();
        } catch (IOException e) {
            throw new CheckFailed("GET " + uri + " failed: " + e);
        }
    }

    // --- shared steps -----------------------------------------------------------------------------------------

    private Admission admit(LabTenant tenant, String name, Map<String, String> limits)
            throws CheckFailed, InterruptedException {
        return admit(tenant, name, gpuPod(tenant.spec.namespace(), name, limits));
    }

    private Admission admit(LabTenant tenant, String name, Pod pod) throws CheckFailed, InterruptedException {
        Admission admission;
        try {
            admission = tenant.admissionCaller().create(pod);
        } catch (AdmissionFailure e) {
            throw new CheckFailed(tenant.spec.name() + " pod " + name + ": " + e.getMessage()
                    + serviceHint(tenant, e));
        }
        if (!admission.allowed()) {
            throw new CheckFailed(tenant.spec.name() + " pod " + name + " denied by the webhook: HTTP "
                    + admission.code() + " " + admission.message());
        }
        return admission;
    }

    /** What kube-proxy would know: a Service without an endpoint resets every connection. */
    private static String serviceHint(LabTenant tenant, AdmissionFailure failure) {
        if ((failure.stage() == AdmissionCaller.Stage.DIAL || failure.stage() == AdmissionCaller.Stage.TLS)
                && tenant.webhookService().endpoint() == null) {
            return " (Service " + AdmissionCaller.WEBHOOK_DNS_NAME + " has no endpoint: no webhook is serving on "
                    + tenant.spec.node() + ")";
        }
        return "";
    }

    /** Filter, Bind, then waits for the agent to complete the allocation and release the node lock. */
    private List<ContainerDevice> scheduleAndAllocate(LabTenant tenant, String pod)
            throws CheckFailed, InterruptedException {
        return scheduleAndAdmit(tenant, pod).devices();
    }

    /**
     * A scheduled pod, admitted by its node's kubelet.
     *
     * @param devices the devices of its first container with any
     * @param kubelet kubelet's Allocate calls and their answers
     */
    private record Allocation(String node, List<ContainerDevice> devices, KubeletStandIn.PodResult kubelet) {
    }

    /** {@link #scheduleAndAllocate}, keeping kubelet's Allocate answers. */
    private Allocation scheduleAndAdmit(LabTenant tenant, String pod) throws CheckFailed, InterruptedException {
        LabScheduler scheduler = schedulers.get(tenant);
        FilterResult filter = scheduler.filter(tenant.spec.namespace(), pod);
        if (!filter.fits()) {
            throw new CheckFailed(pod + " refused by Filter: " + filter.refusal());
        }
        String node = filter.node().get();
        BindResult bind = scheduler.bind(tenant.spec.namespace(), pod, node);
        if (!bind.bound()) {
            throw new CheckFailed(pod + " Bind refused on " + node + ": " + bind.error());
        }
        KubeletStandIn.PodResult admitted = kubeletAdmits(tenant, pod);
        if (!admitted.admitted()) {
            throw new CheckFailed(pod + ": kubelet's admission on " + node + " failed: " + admitted.error().orElse("?"));
        }
        awaitAllocated(tenant, pod, node);
        return new Allocation(node, filter.devices().stream().filter(entry -> !entry.isEmpty()).findFirst()
                .orElseThrow(), admitted);
    }

    /**
     * What kubelet does once a pod is bound to its node: admission, with one Allocate call per container (init
     * containers first) and per device resource it asks for ({@code nvidia.com/gpu}, {@code hygon.com/dcunum},
     * {@code huawei.com/<chip>}, in that order), to the device plugin registered for it on the pod's node.
     */
    private KubeletStandIn.PodResult kubeletAdmits(LabTenant tenant, String podName) throws CheckFailed {
        Pod pod = tenant.client().pods().inNamespace(tenant.spec.namespace()).withName(podName).get();
        return kubeletAllocates(tenant, pod, LabScheduler.containers(pod));
    }

    /** Kubelet's Allocate calls for {@code containers} of {@code pod} (bound), in order; stops at the first failure. */
    private KubeletStandIn.PodResult kubeletAllocates(LabTenant tenant, Pod pod, List<Container> containers)
            throws CheckFailed {
        KubeletStandIn kubelet = kubeletOf(tenant, pod);
        List<KubeletStandIn.ContainerResult> results = new ArrayList<>();
        for (Container container : containers) {
            Map<String, Quantity> limits = container.getResources() == null
                    || container.getResources().getLimits() == null ? Map.of() : container.getResources().getLimits();
            for (NodeVendor vendor : KUBELET_VENDORS) {
                Quantity count = limits.get(vendor.resourceName());
                if (count == null) {
                    continue;
                }
                KubeletStandIn.PodResult one = kubelet.admitPod(vendor.resourceName(), pod.getMetadata().getUid(),
                        List.of(new KubeletStandIn.ContainerRequest(container.getName(),
                                count.getNumericalAmount().intValue())));
                results.addAll(one.containers());
                if (!one.admitted()) {
                    return new KubeletStandIn.PodResult(List.copyOf(results));
                }
            }
        }
        return new KubeletStandIn.PodResult(List.copyOf(results));
    }

    /** The kubelet stand-in of the node {@code pod} is bound to. */
    private static KubeletStandIn kubeletOf(LabTenant tenant, Pod pod) throws CheckFailed {
        String node = pod.getSpec().getNodeName();
        LabTenant.Worker worker = tenant.worker(node).orElseThrow(() -> new CheckFailed("pod "
                + pod.getMetadata().getName() + " is bound to " + node + ", not a worker of " + tenant.spec.name()));
        if (worker.kubelet() == null) {
            throw new CheckFailed(node + " has no kubelet stand-in: Unix sockets need Netty's native epoll (Linux)");
        }
        return worker.kubelet();
    }

    private void awaitAllocated(LabTenant tenant, String pod, String node) throws CheckFailed, InterruptedException {
        String namespace = tenant.spec.namespace();
        try {
            tenant.client().pods().inNamespace(namespace).withName(pod).waitUntilCondition(p -> p != null
                    && !Annotations.BIND_PHASE_ALLOCATING.equals(Annotations.get(p.getMetadata().getAnnotations(),
                            Annotations.POD_BIND_PHASE)), timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (KubernetesClientException e) {
            throw new CheckFailed(pod + ": bind-phase still " + Annotations.BIND_PHASE_ALLOCATING + " after "
                    + Lab.seconds(timeout) + ", node lock " + lockValue(tenant, node) + " (nobody completed the"
                    + " allocation; " + tenant.worker(node).map(w -> w.nodeAgentLabel() + " " + notReady(w.nodeAgent()))
                    .orElse("unknown") + ")");
        }
        Pod allocated = tenant.client().pods().inNamespace(namespace).withName(pod).get();
        String phase = Annotations.get(allocated.getMetadata().getAnnotations(), Annotations.POD_BIND_PHASE);
        if (!Annotations.BIND_PHASE_SUCCESS.equals(phase)) {
            throw new CheckFailed(pod + ": bind-phase " + phase + " (expected: " + Annotations.BIND_PHASE_SUCCESS
                    + ")");
        }
        if (!awaitLockReleased(tenant, node)) {
            throw new CheckFailed(pod + " allocated, but the node lock of " + node + " is still "
                    + lockValue(tenant, node));
        }
    }

    private boolean awaitLockReleased(LabTenant tenant, String node) {
        try {
            tenant.client().nodes().withName(node).waitUntilCondition(n -> n != null && Annotations.get(
                    n.getMetadata().getAnnotations(), Annotations.NODE_LOCK) == null, timeout.toMillis(),
                    TimeUnit.MILLISECONDS);
            return true;
        } catch (KubernetesClientException e) {
            return false;
        }
    }

    private static String lockValue(LabTenant tenant, String node) {
        Node current = tenant.client().nodes().withName(node).get();
        String value = current == null ? null : Annotations.get(current.getMetadata().getAnnotations(),
                Annotations.NODE_LOCK);
        return value == null ? "<none>" : value;
    }

    private static Pod gpuPod(String namespace, String name, Map<String, String> limits) {
        Map<String, Quantity> quantities = new LinkedHashMap<>();
        limits.forEach((key, value) -> quantities.put(key, new Quantity(value)));
        return new PodBuilder()
                .withNewMetadata().withName(name).withNamespace(namespace).addToLabels("app", "lab").endMetadata()
                .withNewSpec()
                    .addNewContainer().withName("cuda").withImage("nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04")
                        .withCommand("sleep", "infinity")
                        .withNewResources().withLimits(quantities).endResources()
                    .endContainer()
                .endSpec()
                .withNewStatus().withPhase("Pending").endStatus()
                .build();
    }

    private static Map<String, String> shareLimits(long memoryMiB, int cores) {
        return Map.of(ResourceNames.NVIDIA_GPU_MEMORY, Long.toString(memoryMiB),
                ResourceNames.NVIDIA_GPU_CORES, Integer.toString(cores));
    }

    private static List<String> nodeNames(LabTenant tenant) {
        return tenant.client().nodes().list().getItems().stream().map(n -> n.getMetadata().getName()).sorted()
                .toList();
    }

    private static String deviceLabel(LabTenant tenant, String uuid) {
        Node node = tenant.client().nodes().withName(tenant.spec.node()).get();
        return LabScheduler.registeredDevices(node).stream().filter(d -> d.id().equals(uuid)).findFirst()
                .map(d -> FirstFitPlacement.shortId(d) + " (" + d.type() + ")").orElse(uuid);
    }

    /** The agent's failing readiness checks, as {@code /readyz?verbose} names them. */
    static String notReady(Agent agent) {
        List<String> failing = agent.readiness().entrySet().stream().filter(e -> !e.getValue().ok())
                .map(e -> e.getValue().reason().startsWith(e.getKey()) ? e.getValue().reason()
                        : e.getKey() + " failed: " + e.getValue().reason()).toList();
        return failing.isEmpty() ? "ready" : "not ready: " + String.join(", ", failing);
    }
}
