package io.tenantgateway.tools.lab;

import static java.util.Objects.requireNonNull;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.tenantgateway.tools.hamisim.BindResult;
import io.tenantgateway.tools.hamisim.HamiSchedulerSimulator;
import io.tenantgateway.tools.lab.FirstFitPlacement.GpuRequest;
import io.tenantgateway.tools.lab.FirstFitPlacement.Usage;
import io.tenantgateway.tools.lab.VendorFirstFitPlacement.DeviceRequest;
import io.tenantgateway.agent.locks.AllocationConfig;
import io.tenantgateway.hami.Annotations;
import io.tenantgateway.hami.ContainerDevice;
import io.tenantgateway.hami.DeviceAllocationCodec;
import io.tenantgateway.hami.GpuDevice;
import io.tenantgateway.hami.HamiDeviceCodec;
import io.tenantgateway.hami.HamiRelease;
import io.tenantgateway.hami.NodeVendor;
import io.tenantgateway.hami.RegisterCodec;
import io.tenantgateway.hami.RegisteredDevice;
import io.tenantgateway.webhook.policy.AscendChip;
import io.tenantgateway.webhook.policy.DeviceConfig;
import io.tenantgateway.common.retry.Backoff;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The lab's stand-in for {@code hami-scheduler}: a SIMULATOR. Placement is {@link FirstFitPlacement} over the
 * NVIDIA devices each node registered in {@code hami.io/node-nvidia-register}, and {@link VendorFirstFitPlacement}
 * over its Hygon DCUs ({@code hami.io/node-dcu-register}) and each Ascend chip's devices
 * ({@code hami.io/node-register-<CW>}), counting what pods already placed on the node hold (every vendor's
 * {@code hami.io/…-devices-allocated}); the API writes of Filter and Bind — pod annotations, the node lock with
 * compare-and-swap (once per pod, whatever it asks for), the binding — are {@link HamiSchedulerSimulator}'s, which
 * does them exactly as HAMi does. Which resources name which vendor comes from the device configuration (HAMi's
 * chart's by default): Hygon's {@code hygon:} block, Ascend's {@code vnpus}.
 *
 * <p>Blocking (API calls on the caller's thread), like HAMi's synchronous extender; one tenant each.
 */
final class LabScheduler {
    static final String SCHEDULER_NAME = "hami-scheduler";

    /** HAMi's chart: {@code hami-vnpu-core} absent on the node means no hami-core support. */
    static final boolean DEFAULT_HAMI_VNPU_CORE = false;
    /** The node annotation Ascend's device plugin writes: whether the node runs vNPUs in hami-core mode. */
    static final String NODE_HAMI_VNPU_CORE = Annotations.NODE_HAMI_VNPU_CORE;

    private final KubernetesClient client;
    private final HamiSchedulerSimulator simulator;
    private final DeviceConfig deviceConfig;

    LabScheduler(KubernetesClient client, Clock clock) {
        this(client, clock, DeviceConfig.defaults());
    }

    LabScheduler(KubernetesClient client, Clock clock, DeviceConfig deviceConfig) {
        this.client = requireNonNull(client, "client");
        this.deviceConfig = requireNonNull(deviceConfig, "deviceConfig");
        // Against fabric8's CRUD server a Binding is stored but never updates the pod, so bind by patching
        // spec.nodeName (what the API server does with a Binding).
        this.simulator = new HamiSchedulerSimulator(client, clock, AllocationConfig.DEFAULT_NODE_LOCK_TIMEOUT,
                HamiSchedulerSimulator.BindMethod.PATCH_NODE_NAME, Backoff.HAMI_NODE_LOCK, deviceConfig.vnpus());
    }

    /**
     * Filter's outcome: the node and, per vendor the pod asks for, the devices chosen (and written to the pod), or
     * why no node fits.
     */
    record FilterResult(Optional<String> node, Map<NodeVendor, List<List<ContainerDevice>>> byVendor,
            String refusal) {
        FilterResult {
            byVendor = Collections.unmodifiableMap(new LinkedHashMap<>(byVendor));
        }

        static FilterResult refused(String reason) {
            return new FilterResult(Optional.empty(), Map.of(), reason);
        }

        boolean fits() {
            return node.isPresent();
        }

        /** The NVIDIA entries, one per container; none when the pod was not placed or asks for no NVIDIA GPU. */
        List<List<ContainerDevice>> devices() {
            return byVendor.getOrDefault(NodeVendor.NVIDIA, List.of());
        }
    }

    /** Every container's request (init containers first), per vendor; a vendor is here only if some container asks. */
    record PodRequests(List<Optional<GpuRequest>> nvidia, List<Optional<DeviceRequest>> hygon,
            Map<AscendChip, List<Optional<DeviceRequest>>> ascend) {
        /** NVIDIA's list when no container asks for any vendor: the simulator's writes as before vendors existed. */
        boolean none() {
            return nvidia.stream().allMatch(Optional::isEmpty) && hygon.isEmpty() && ascend.isEmpty();
        }
    }

    /**
     * Filter: picks the first node (by name) whose devices fit every container's request of every vendor and writes
     * HAMi's Filter annotations on the pod; writes nothing when no node fits.
     */
    FilterResult filter(String namespace, String podName) {
        Pod pod = client.pods().inNamespace(namespace).withName(podName).get();
        if (pod == null) {
            return FilterResult.refused("pod " + namespace + "/" + podName + " not found");
        }
        String schedulerName = pod.getSpec().getSchedulerName();
        if (!SCHEDULER_NAME.equals(schedulerName)) {
            return FilterResult.refused("pod " + namespace + "/" + podName + " has schedulerName " + schedulerName
                    + ", not " + SCHEDULER_NAME + " (the webhook did not mutate it)");
        }
        PodRequests requests = requests(pod);
        boolean hamiCore = HamiSchedulerSimulator.VNPU_MODE_HAMI_CORE.equals(Annotations.get(
                pod.getMetadata().getAnnotations(), HamiSchedulerSimulator.VNPU_MODE));
        List<String> refusals = new ArrayList<>();
        List<Node> nodes = new ArrayList<>(client.nodes().list().getItems());
        nodes.sort(Comparator.comparing(n -> n.getMetadata().getName()));
        for (Node node : nodes) {
            String nodeName = node.getMetadata().getName();
            Map<String, Usage> usage = usage(nodeName);
            Map<NodeVendor, List<List<ContainerDevice>>> byVendor = new LinkedHashMap<>();
            String refusal = null;
            if (requests.none() || requests.nvidia().stream().anyMatch(Optional::isPresent)) {
                refusal = add(byVendor, NodeVendor.NVIDIA,
                        FirstFitPlacement.place(registeredDevices(node), usage, requests.nvidia()));
            }
            if (refusal == null && !requests.hygon().isEmpty()) {
                refusal = add(byVendor, NodeVendor.HYGON, VendorFirstFitPlacement.place(NodeVendor.HYGON,
                        registeredDevices(node, NodeVendor.HYGON), usage, requests.hygon(), false));
            }
            for (Map.Entry<AscendChip, List<Optional<DeviceRequest>>> chip : requests.ascend().entrySet()) {
                if (refusal != null) {
                    break;
                }
                NodeVendor vendor = NodeVendor.ascend(chip.getKey().commonWord());
                boolean nodeHamiCore = Optional.ofNullable(Annotations.get(node.getMetadata().getAnnotations(),
                        NODE_HAMI_VNPU_CORE)).map("true"::equals).orElse(DEFAULT_HAMI_VNPU_CORE);
                if (hamiCore && !nodeHamiCore) {
                    refusal = "no " + vendor.displayName() + " device fits: the pod asks for hami-core mode, the node"
                            + " does not run it (" + NODE_HAMI_VNPU_CORE + ": " + Annotations.get(
                            node.getMetadata().getAnnotations(), NODE_HAMI_VNPU_CORE) + ")";
                    break;
                }
                refusal = add(byVendor, vendor, VendorFirstFitPlacement.place(vendor,
                        registeredDevices(node, vendor), usage, chip.getValue(), hamiCore));
            }
            if (refusal == null) {
                simulator.filter(namespace, podName, nodeName, byVendor);
                return new FilterResult(Optional.of(nodeName), byVendor, "");
            }
            refusals.add(nodeName + ": " + refusal);
        }
        return FilterResult.refused(refusals.isEmpty() ? "no nodes" : String.join(" | ", refusals));
    }

    /** Adds a fit's entries under {@code vendor}; returns the refusal otherwise. */
    private static String add(Map<NodeVendor, List<List<ContainerDevice>>> byVendor, NodeVendor vendor,
            FirstFitPlacement.Placement placement) {
        if (placement instanceof FirstFitPlacement.Fit fit) {
            byVendor.put(vendor, fit.devices());
            return null;
        }
        return ((FirstFitPlacement.Refused) placement).reason();
    }

    /** Bind, as HAMi does it: node lock (CAS), bind-phase {@code allocating}, binding. */
    BindResult bind(String namespace, String podName, String nodeName) {
        return simulator.bind(namespace, podName, nodeName);
    }

    /** The devices {@code node} registered with HAMi, in index order; none when it registered nothing. */
    static List<GpuDevice> registeredDevices(Node node) {
        String register = Annotations.get(node.getMetadata().getAnnotations(), Annotations.NODE_NVIDIA_REGISTER);
        if (register == null || register.isBlank()) {
            return List.of();
        }
        List<GpuDevice> devices = new ArrayList<>(HamiDeviceCodec.decode(register));
        devices.sort(Comparator.comparingInt(GpuDevice::index));
        return devices;
    }

    /**
     * The devices {@code node} registered for {@code vendor} (Hygon's legacy text, an Ascend chip's JSON), decoded as
     * HAMi v2.10's scheduler decodes them, in register order; none when the node registered nothing for it or the
     * value does not decode (HAMi skips such a node's devices of that vendor too).
     */
    static List<RegisteredDevice> registeredDevices(Node node, NodeVendor vendor) {
        String register = Annotations.get(node.getMetadata().getAnnotations(), vendor.registerKey());
        if (register == null) {
            return List.of();
        }
        RegisterCodec.Result result = RegisterCodec.decode(vendor.registerKey(), register, HamiRelease.V2_10,
                node.getMetadata().getName());
        return result.isOk() ? result.devices() : List.of();
    }

    /**
     * What the live pods placed on {@code nodeName} hold, per device id (HAMi's scheduler accounting), from every
     * vendor's {@code hami.io/<word>-devices-allocated} ({@code hami.io/vgpu-devices-allocated} for NVIDIA).
     */
    Map<String, Usage> usage(String nodeName) {
        Map<String, Usage> usage = new HashMap<>();
        for (Pod pod : client.pods().inAnyNamespace().list().getItems()) {
            Map<String, String> annotations = pod.getMetadata().getAnnotations();
            String phase = pod.getStatus() == null ? null : pod.getStatus().getPhase();
            if (annotations == null || !nodeName.equals(Annotations.get(annotations, Annotations.POD_VGPU_NODE))
                    || "Succeeded".equals(phase) || "Failed".equals(phase)
                    || pod.getMetadata().getDeletionTimestamp() != null) {
                continue;
            }
            for (Map.Entry<String, String> annotation : annotations.entrySet()) {
                if (!isAllocatedKey(annotation.getKey()) || annotation.getValue() == null) {
                    continue;
                }
                for (List<ContainerDevice> entry : DeviceAllocationCodec.decode(annotation.getValue())) {
                    for (ContainerDevice device : entry) {
                        usage.merge(device.uuid(), Usage.NONE.plus(device.memoryMiB(), device.cores()),
                                (a, b) -> new Usage(a.memoryMiB() + b.memoryMiB(), a.cores() + b.cores(),
                                        a.pods() + b.pods()));
                    }
                }
            }
        }
        return usage;
    }

    /** {@code hami.io/<word>-devices-allocated}, any vendor's. */
    static boolean isAllocatedKey(String key) {
        String prefix = "hami.io/";
        String suffix = "-devices-allocated";
        return key.startsWith(prefix) && key.endsWith(suffix) && key.length() > prefix.length() + suffix.length()
                && key.indexOf('/', prefix.length()) < 0;
    }

    /**
     * A pod's containers in the order HAMi v2.10's scheduler and kubelet's admission walk them: init containers
     * first, then the others.
     */
    static List<Container> containers(Pod pod) {
        List<Container> containers = new ArrayList<>(pod.getSpec().getInitContainers());
        containers.addAll(pod.getSpec().getContainers());
        return containers;
    }

    private PodRequests requests(Pod pod) {
        List<Container> containers = containers(pod);
        int memoryFactor = hygonMemoryFactor();
        List<Optional<GpuRequest>> nvidia = new ArrayList<>();
        List<Optional<DeviceRequest>> hygon = new ArrayList<>();
        Map<AscendChip, List<Optional<DeviceRequest>>> ascend = new LinkedHashMap<>();
        deviceConfig.vnpus().forEach(chip -> ascend.put(chip, new ArrayList<>()));
        for (Container container : containers) {
            Map<String, String> limits = new LinkedHashMap<>();
            if (container.getResources() != null && container.getResources().getLimits() != null) {
                for (Map.Entry<String, Quantity> limit : container.getResources().getLimits().entrySet()) {
                    limits.put(limit.getKey(), limit.getValue().toString());
                }
            }
            nvidia.add(GpuRequest.fromLimits(container.getName(), limits));
            hygon.add(DeviceRequest.hygon(container.getName(), limits, memoryFactor));
            ascend.forEach((chip, list) -> list.add(DeviceRequest.ascend(container.getName(), limits, chip)));
        }
        ascend.values().removeIf(list -> list.stream().allMatch(Optional::isEmpty));
        return new PodRequests(nvidia, hygon.stream().allMatch(Optional::isEmpty) ? List.of() : hygon, ascend);
    }

    /** The {@code hygon:} block's memoryFactor (HAMi's chart: 1). */
    private int hygonMemoryFactor() {
        String factor = deviceConfig.block("hygon").values().get("memoryFactor");
        try {
            return factor == null ? 1 : Math.max(1, Integer.parseInt(factor));
        } catch (NumberFormatException e) {
            return 1;
        }
    }
}
