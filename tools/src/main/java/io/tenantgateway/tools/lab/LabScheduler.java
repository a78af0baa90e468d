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
import io.tenantgateway.agent.locks.AllocationConfig;
import io.tenantgateway.hami.Annotations;
import io.tenantgateway.hami.ContainerDevice;
import io.tenantgateway.hami.DeviceAllocationCodec;
import io.tenantgateway.hami.GpuDevice;
import io.tenantgateway.hami.HamiDeviceCodec;
import io.tenantgateway.common.retry.Backoff;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The lab's stand-in for {@code hami-scheduler}: a SIMULATOR. Placement is {@link FirstFitPlacement} over the
 * devices each node registered in {@code hami.io/node-nvidia-register}, counting what pods already placed on the
 * node hold ({@code hami.io/vgpu-devices-allocated}); the API writes of Filter and Bind — pod annotations, the
 * node lock with compare-and-swap, the binding — are {@link HamiSchedulerSimulator}'s, which does them exactly as
 * HAMi does.
 *
 * <p>Blocking (API calls on the caller's thread), like HAMi's synchronous extender; one tenant each.
 */
final class LabScheduler {
    static final String SCHEDULER_NAME = "hami-scheduler";

    private final KubernetesClient client;
    private final HamiSchedulerSimulator simulator;

    LabScheduler(KubernetesClient client, Clock clock) {
        this.client = requireNonNull(client, "client");
        // Against fabric8's CRUD server a Binding is stored but never updates the pod, so bind by patching
        // spec.nodeName (what the API server does with a Binding).
        this.simulator = new HamiSchedulerSimulator(client, clock, AllocationConfig.DEFAULT_NODE_LOCK_TIMEOUT,
                HamiSchedulerSimulator.BindMethod.PATCH_NODE_NAME, Backoff.HAMI_NODE_LOCK);
    }

    /** Filter's outcome: the node and devices chosen (and written to the pod), or why no node fits. */
    record FilterResult(Optional<String> node, List<List<ContainerDevice>> devices, String refusal) {
        static FilterResult refused(String reason) {
            return new FilterResult(Optional.empty(), List.of(), reason);
        }

        boolean fits() {
            return node.isPresent();
        }
    }

    /**
     * Filter: picks the first node (by name) whose GPUs fit every container and writes HAMi's Filter annotations
     * on the pod; writes nothing when no node fits.
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
        List<Optional<GpuRequest>> requests = requests(pod);
        List<String> refusals = new ArrayList<>();
        List<Node> nodes = new ArrayList<>(client.nodes().list().getItems());
        nodes.sort(Comparator.comparing(n -> n.getMetadata().getName()));
        for (Node node : nodes) {
            String nodeName = node.getMetadata().getName();
            List<GpuDevice> devices = registeredDevices(node);
            FirstFitPlacement.Placement placement = FirstFitPlacement.place(devices, usage(nodeName), requests);
            if (placement instanceof FirstFitPlacement.Fit fit) {
                simulator.filter(namespace, podName, nodeName, fit.devices());
                return new FilterResult(Optional.of(nodeName), fit.devices(), "");
            }
            refusals.add(nodeName + ": " + ((FirstFitPlacement.Refused) placement).reason());
        }
        return FilterResult.refused(refusals.isEmpty() ? "no nodes" : String.join(" | ", refusals));
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

    /** What the live pods placed on {@code nodeName} hold, per device UUID (HAMi's scheduler accounting). */
    Map<String, Usage> usage(String nodeName) {
        Map<String, Usage> usage = new HashMap<>();
        for (Pod pod : client.pods().inAnyNamespace().list().getItems()) {
            Map<String, String> annotations = pod.getMetadata().getAnnotations();
            String phase = pod.getStatus() == null ? null : pod.getStatus().getPhase();
            String allocated = Annotations.get(annotations, Annotations.POD_DEVICES_ALLOCATED);
            if (!nodeName.equals(Annotations.get(annotations, Annotations.POD_VGPU_NODE)) || allocated == null
                    || "Succeeded".equals(phase) || "Failed".equals(phase)
                    || pod.getMetadata().getDeletionTimestamp() != null) {
                continue;
            }
            for (List<ContainerDevice> entry : DeviceAllocationCodec.decode(allocated)) {
                for (ContainerDevice device : entry) {
                    usage.merge(device.uuid(), Usage.NONE.plus(device.memoryMiB(), device.cores()),
                            (a, b) -> new Usage(a.memoryMiB() + b.memoryMiB(), a.cores() + b.cores(),
                                    a.pods() + b.pods()));
                }
            }
        }
        return usage;
    }

    private static List<Optional<GpuRequest>> requests(Pod pod) {
        List<Container> containers = new ArrayList<>(pod.getSpec().getInitContainers());
        containers.addAll(pod.getSpec().getContainers());
        List<Optional<GpuRequest>> requests = new ArrayList<>();
        for (Container container : containers) {
            Map<String, String> limits = new LinkedHashMap<>();
            if (container.getResources() != null && container.getResources().getLimits() != null) {
                for (Map.Entry<String, Quantity> limit : container.getResources().getLimits().entrySet()) {
                    limits.put(limit.getKey(), limit.getValue().toString());
                }
            }
            requests.add(GpuRequest.fromLimits(container.getName(), limits));
        }
        return requests;
    }
}
