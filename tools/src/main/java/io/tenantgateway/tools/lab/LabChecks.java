package io.tenantgateway.tools.lab;

import static java.util.Objects.requireNonNull;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoopGroup;
import io.tenantgateway.agent.Agent;
import io.tenantgateway.tools.hamisim.BindResult;
import io.tenantgateway.tools.lab.AdmissionCaller.Admission;
import io.tenantgateway.tools.lab.AdmissionCaller.AdmissionFailure;
import io.tenantgateway.tools.lab.LabScheduler.FilterResult;
import io.tenantgateway.agent.locks.AllocationConfig;
import io.tenantgateway.hami.Annotations;
import io.tenantgateway.hami.ContainerDevice;
import io.tenantgateway.hami.GpuDevice;
import io.tenantgateway.hami.HamiCore;
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
import java.net.InetSocketAddress;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;

/**
 * The checks of the lab: the reference lab's eight, and the kubelet path of the device plugin. Each returns its evidence line or throws
 * {@link CheckFailed} with the reason. Checks run one after another on the lab's thread and may be run alone: each
 * creates the pods it needs.
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
            "kubelet device plugin: Allocate answer");

    /** Check 4: four of these fill an A100 80 GB by memory and by cores. */
    static final long SHARE_MEMORY_MIB = 20480;
    static final int SHARE_CORES = 25;
    /** Check 4: one of these fits an L4 24 GB, two do not, so tenant-b's pods spread over its two L4s. */
    static final long L4_SHARE_MEMORY_MIB = 16384;
    static final int L4_SHARE_CORES = 50;
    /** Check 9: fits next to checks 4 and 5's pods on an L4. */
    static final long KUBELET_POD_MEMORY_MIB = 2048;
    static final int KUBELET_POD_CORES = 20;
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
                    .toList();
            if (!agents.equals(List.of(tenant.spec.node()))) {
                throw new CheckFailed(tenant.spec.name() + ": " + serverId + " has agents " + agents + " (expected: ["
                        + tenant.spec.node() + "]); agent " + notReady(tenant.agent()));
            }
            Optional<ServerConnectionSnapshot> connection = tenant.agent().tunnel().orElseThrow().snapshot().servers()
                    .stream().filter(s -> s.serverId().equals(serverId)).findFirst();
            if (connection.isEmpty() || !"READY".equals(connection.get().state())) {
                throw new CheckFailed(tenant.spec.name() + ": agent " + tenant.spec.node() + " has no READY connection"
                        + " to " + serverId + " (" + connection.map(ServerConnectionSnapshot::state).orElse("none")
                        + ")");
            }
            evidence.add(tenant.spec.name() + ": API " + tenant.apiUrl() + " nodes " + nodes + ", " + serverId
                    + " (" + tenant.spec.auth().label + ") ← agent " + tenant.spec.node() + " READY");
        }
        return String.join("; ", evidence);
    }

    // --- 2 ----------------------------------------------------------------------------------------------------

    private String devicesRegistered() throws CheckFailed {
        List<String> evidence = new ArrayList<>();
        for (LabTenant tenant : List.of(a, b)) {
            String nodeName = tenant.spec.node();
            Node node = tenant.client().nodes().withName(nodeName).get();
            if (node == null) {
                throw new CheckFailed(tenant.spec.name() + ": node " + nodeName + " not found");
            }
            Map<String, String> annotations = node.getMetadata().getAnnotations();
            String register = Annotations.get(annotations, Annotations.NODE_NVIDIA_REGISTER);
            if (register == null) {
                throw new CheckFailed(nodeName + ": no " + Annotations.NODE_NVIDIA_REGISTER + " annotation ("
                        + (tenant.agent().devices().isEmpty() ? "agent " + tenant.spec.node() + " runs without device"
                        + " registration: --device-source=none" : "agent " + notReady(tenant.agent())) + ")");
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
            if (devices.size() != tenant.spec.gpus()) {
                throw new CheckFailed(nodeName + ": " + devices.size() + " devices registered (expected: "
                        + tenant.spec.gpus() + " from --mock-gpus=" + tenant.spec.mockGpus() + ")");
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
            Quantity capacity = node.getStatus() == null || node.getStatus().getCapacity() == null ? null
                    : node.getStatus().getCapacity().get(ResourceNames.NVIDIA_GPU);
            GpuDevice first = devices.get(0);
            evidence.add(nodeName + ": " + devices.size() + " × " + first.type() + " " + first.devmemMiB()
                    + " MiB split " + first.count() + " ("
                    + devices.stream().map(FirstFitPlacement::shortId).collect(Collectors.joining(", "))
                    + "), handshake \"" + handshake + "\", capacity " + ResourceNames.NVIDIA_GPU + "="
                    + (capacity == null ? "none" : capacity.toString()));
        }
        return String.join("; ", evidence);
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
        List<AdmissionRecord> seen = tenant.agent().webhook().orElseThrow().recentAdmissions().snapshot();
        if (seen.stream().noneMatch(r -> r.uid().equals(admission.uid()))) {
            throw new CheckFailed(tenant.spec.name() + ": admission " + admission.uid() + " was answered, but not by"
                    + " the webhook of " + tenant.spec.node());
        }
        return tenant.spec.name() + " " + name + ": " + AdmissionCaller.WEBHOOK_DNS_NAME + " → "
                + LabTenant.hostPort(tenant.webhookService().address()) + " via " + tenant.spec.serverId()
                + " → webhook on " + tenant.spec.node() + ": allowed, " + admission.patchOperations().size()
                + " patch ops → schedulerName=" + schedulerName + " gpu=" + gpu + " gpucores=" + cores + " ("
                + admission.timings() + ")";
    }

    // --- 4 ----------------------------------------------------------------------------------------------------

    private String fractionalSharing() throws CheckFailed, InterruptedException {
        // tenant-a: four 20 GiB / 25 % pods fill the A100; the fifth does not fit.
        String deviceA = null;
        for (int i = 1; i <= 4; i++) {
            String pod = "a-share-" + i;
            admit(a, pod, shareLimits(SHARE_MEMORY_MIB, SHARE_CORES));
            List<ContainerDevice> devices = scheduleAndAllocate(a, pod);
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
                + " " + deviceLabel(a, deviceA) + "; a-share-5 refused by Filter: " + fifth.refusal() + "; "
                + String.join(", ", placedB) + " on " + b.spec.node() + " (" + L4_SHARE_MEMORY_MIB + " MiB / "
                + L4_SHARE_CORES + " % each)";
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
            if (!nodes.equals(List.of(tenant.spec.node()))) {
                throw new CheckFailed(tenant.spec.name() + "'s API lists nodes " + nodes + " (expected: only "
                        + tenant.spec.node() + ")");
            }
            List<Pod> pods = tenant.client().pods().inAnyNamespace().list().getItems();
            List<String> foreign = pods.stream().map(p -> p.getMetadata().getNamespace() + "/"
                    + p.getMetadata().getName()).filter(p -> !p.startsWith(tenant.spec.namespace() + "/")).toList();
            if (!foreign.isEmpty()) {
                throw new CheckFailed(tenant.spec.name() + "'s API shows pods outside " + tenant.spec.namespace() + ": "
                        + foreign);
            }
            Node node = tenant.client().nodes().withName(tenant.spec.node()).get();
            List<GpuDevice> devices = LabScheduler.registeredDevices(node);
            evidence.add(tenant.spec.name() + " API: node " + tenant.spec.node() + " (" + (devices.isEmpty()
                    ? "no GPUs registered" : devices.size() + " × " + devices.stream().map(GpuDevice::type).distinct()
                    .collect(Collectors.joining("/"))) + "), " + pods.size() + " pods, all in "
                    + tenant.spec.namespace());
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
                    + ", the agent dials 127.0.0.1:" + a.agent().config().tunnel().proxyServerPort() + "; agent "
                    + notReady(a.agent()));
        }
        Admission admission = admit(a, "after-restart", Map.of(ResourceNames.NVIDIA_GPU, "1"));
        String schedulerName = admission.stored().getSpec().getSchedulerName();
        if (!LabScheduler.SCHEDULER_NAME.equals(schedulerName)) {
            throw new CheckFailed("after-restart admitted but not mutated: schedulerName " + schedulerName);
        }
        return a.spec.serverId() + " stopped and started again on " + LabTenant.hostPort(listening) + " in "
                + Lab.millis(restarted) + "; agent " + agentId + " reconnected " + Lab.millis(reconnect)
                + " after the stop; pod after-restart admitted through the new server: schedulerName="
                + schedulerName + " (" + admission.timings() + ")";
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
                    + tenant.agent().devicePlugin().map(p -> p.snapshot().phase() + " at " + p.config().socket()
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
        return filter.devices().stream().filter(entry -> !entry.isEmpty()).findFirst().orElseThrow();
    }

    /**
     * What kubelet does once a pod is bound to its node: admission, with one Allocate call per container (init
     * containers first) that asks for {@code nvidia.com/gpu}, to the device plugin registered for it.
     */
    private KubeletStandIn.PodResult kubeletAdmits(LabTenant tenant, String podName) throws CheckFailed {
        if (tenant.kubelet() == null) {
            throw new CheckFailed(tenant.spec.node() + " has no kubelet stand-in: Unix sockets need Netty's native"
                    + " epoll (Linux)");
        }
        Pod pod = tenant.client().pods().inNamespace(tenant.spec.namespace()).withName(podName).get();
        List<Container> containers = new ArrayList<>(pod.getSpec().getInitContainers());
        containers.addAll(pod.getSpec().getContainers());
        List<KubeletStandIn.ContainerRequest> requests = new ArrayList<>();
        for (Container container : containers) {
            Quantity gpus = container.getResources() == null || container.getResources().getLimits() == null ? null
                    : container.getResources().getLimits().get(ResourceNames.NVIDIA_GPU);
            requests.add(new KubeletStandIn.ContainerRequest(container.getName(),
                    gpus == null ? 0 : gpus.getNumericalAmount().intValue()));
        }
        return tenant.kubelet().admitPod(ResourceNames.NVIDIA_GPU, pod.getMetadata().getUid(), requests);
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
                    + " allocation; agent " + notReady(tenant.agent()) + ")");
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
