package io.tenantgateway.agent.devices;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeStatus;
import io.fabric8.kubernetes.api.model.Quantity;
import io.tenantgateway.agent.k8s.MergePatch;
import io.tenantgateway.hami.Annotations;
import io.tenantgateway.hami.GpuDevice;
import io.tenantgateway.hami.HamiDeviceCodec;
import io.tenantgateway.hami.NodeVendor;
import io.tenantgateway.hami.ResourceNames;
import java.time.Instant;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * What the registration looks like on the Node, computed without the API: the annotations a round writes (the
 * register annotations only when they differ from what the node carries, the handshakes always), the capacity it
 * advertises, and what deregistering removes. Stateless.
 */
final class RegisterEncoding {
    private static final DateTimeFormatter HANDSHAKE_TIME =
            DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss", Locale.ROOT);

    private RegisterEncoding() {
    }

    /**
     * One round's annotation patch and whose register annotation it changes.
     *
     * @param values         the keys to write, in order
     * @param nvidiaChanged  NVIDIA's register annotation is among them
     * @param vendorsChanged the simulated vendors whose register annotation is among them
     */
    record AnnotationPatch(Map<String, String> values, boolean nvidiaChanged, List<SimulatedVendor> vendorsChanged) {
    }

    /** NVIDIA's register annotation for {@code devices}, in HAMi's JSON. */
    static String register(List<GpuDevice> devices) {
        return HamiDeviceCodec.encode(devices);
    }

    /**
     * The round's merge patch against the node's {@code current} annotations: NVIDIA's register annotation when it
     * differs and its handshake (when {@code nvidiaRegister} is not {@code null}), then each active vendor's register
     * annotation and other annotations when they differ, and its handshake.
     *
     * @param nvidiaRegister NVIDIA's register annotation, {@code null} when NVIDIA's GPUs are not ours to register
     * @param startedAt      when registration started (a vendor's handshake may carry it)
     * @param zone           the zone the handshakes are written in (the scheduler stamps its local time too)
     */
    static AnnotationPatch annotations(Map<String, String> current, String nvidiaRegister,
            List<SimulatedVendor> active, Instant now, Instant startedAt, ZoneId zone) {
        Map<String, String> patch = new LinkedHashMap<>();
        boolean registerChanged = false;
        if (nvidiaRegister != null) {
            registerChanged = !nvidiaRegister.equals(Annotations.get(current, Annotations.NODE_NVIDIA_REGISTER));
            if (registerChanged) {
                patch.put(Annotations.NODE_NVIDIA_REGISTER, nvidiaRegister);
            }
            patch.put(Annotations.NODE_HANDSHAKE, handshakeValue(now, zone));
        }
        List<SimulatedVendor> changed = new ArrayList<>();
        for (SimulatedVendor v : active) {
            NodeVendor vendor = v.vendor();
            if (!v.register().equals(Annotations.get(current, vendor.registerKey()))) {
                patch.put(vendor.registerKey(), v.register());
                changed.add(v);
            }
            v.annotations().forEach((key, value) -> {
                if (!value.equals(Annotations.get(current, key))) {
                    patch.put(key, value);
                }
            });
            patch.put(vendor.handshakeKey(), vendor.handshake(now, startedAt, zone));
        }
        return new AnnotationPatch(patch, registerChanged, List.copyOf(changed));
    }

    /** {@code Reported <YYYY-MM-DD hh:mm:ss>}, local time in {@code zone} (the scheduler stamps its local time too). */
    static String handshakeValue(Instant at, ZoneId zone) {
        return Annotations.HANDSHAKE_REPORTED_PREFIX + HANDSHAKE_TIME.format(at.atZone(zone));
    }

    /**
     * What the node advertises for healthy devices: {@code nvidia.com/gpu} = the sum of split counts
     * (GPUs × split count), memory and cores as the mock device plugin sums them, 100 % per GPU.
     */
    static Map<String, String> capacity(List<GpuDevice> devices) {
        HealthyTotals healthy = HealthyTotals.ofGpus(devices);
        Map<String, String> quantities = new LinkedHashMap<>();
        quantities.put(ResourceNames.NVIDIA_GPU, Long.toString(healthy.count()));
        quantities.put(ResourceNames.NVIDIA_GPU_MEMORY, Long.toString(healthy.memoryMiB()));
        quantities.put(ResourceNames.NVIDIA_GPU_CORES, Long.toString(healthy.cores()));
        quantities.put(ResourceNames.NVIDIA_GPU_MEMORY_PERCENTAGE, Long.toString(100 * healthy.devices()));
        return quantities;
    }

    /**
     * The capacity a round advertises (mock mode): NVIDIA's when its GPUs are ours, then each active vendor's.
     *
     * @param devices NVIDIA's GPUs, {@code null} when NVIDIA's are not ours to advertise
     */
    static Map<String, String> advertised(List<GpuDevice> devices, List<SimulatedVendor> active) {
        Map<String, String> desired = devices == null ? new LinkedHashMap<>() : capacity(devices);
        active.forEach(v -> desired.putAll(v.capacity()));
        return desired;
    }

    /**
     * {@code {"status":{"capacity":{…},"allocatable":{…}}}} with the same quantities in both (a
     * {@code null} quantity deletes the resource), for the {@code status} subresource.
     */
    static String capacityPatch(Map<String, String> quantities) {
        Map<String, Object> status = new LinkedHashMap<>();
        status.put("capacity", quantities);
        status.put("allocatable", quantities);
        return MergePatch.json(Map.of("status", status));
    }

    /** Whether {@code node}'s status capacity and allocatable both carry {@code quantities}. */
    static boolean carries(Node node, Map<String, String> quantities) {
        NodeStatus status = node.getStatus();
        return status != null && hasQuantities(status.getCapacity(), quantities)
                && hasQuantities(status.getAllocatable(), quantities);
    }

    private static boolean hasQuantities(Map<String, Quantity> actual, Map<String, String> desired) {
        if (actual == null) {
            return false;
        }
        for (Map.Entry<String, String> e : desired.entrySet()) {
            Quantity q = actual.get(e.getKey());
            if (q == null || q.getAmount() == null
                    || q.getNumericalAmount().compareTo(new Quantity(e.getValue()).getNumericalAmount()) != 0) {
                return false;
            }
        }
        return true;
    }

    /**
     * What deregistering removes: annotation keys and capacity resources, each mapped to {@code null}.
     *
     * @param annotations the keys to remove from the node's annotations
     * @param capacity    the resources to remove from its capacity and allocatable (empty: no status patch)
     */
    record Removal(Map<String, String> annotations, Map<String, String> capacity) {
    }

    /**
     * What this agent wrote for the vendors not standing aside; keys a vendor standing aside writes too (Ascend's
     * {@code hami-vnpu-core}) are its plugin's now and stay.
     *
     * @param withNvidia        NVIDIA's GPUs are ours
     * @param active            the simulated vendors ours to remove
     * @param all               every simulated vendor of the node
     * @param advertiseCapacity capacity was advertised (mock mode)
     * @param nodeCapacity      {@code --report-node-capacity}, {@code null} when off
     */
    static Removal removal(boolean withNvidia, List<SimulatedVendor> active, List<SimulatedVendor> all,
            boolean advertiseCapacity, NodeCapacityReport nodeCapacity) {
        Set<String> kept = new LinkedHashSet<>();
        all.stream().filter(v -> !active.contains(v)).forEach(v -> kept.addAll(v.annotations().keySet()));
        Map<String, String> remove = new LinkedHashMap<>();
        Map<String, String> zero = new LinkedHashMap<>();
        if (withNvidia) {
            remove.put(Annotations.NODE_NVIDIA_REGISTER, null);
            remove.put(Annotations.NODE_HANDSHAKE, null);
            if (advertiseCapacity) {
                capacity(List.of()).keySet().forEach(k -> zero.put(k, null));
            }
            if (nodeCapacity != null) {
                nodeCapacity.resources().forEach(k -> zero.put(k, null));
            }
        }
        for (SimulatedVendor v : active) {
            remove.put(v.vendor().registerKey(), null);
            v.annotations().keySet().stream().filter(k -> !kept.contains(k)).forEach(k -> remove.put(k, null));
            remove.put(v.vendor().handshakeKey(), null);
            if (advertiseCapacity) {
                v.capacity().keySet().forEach(k -> zero.put(k, null));
            }
        }
        return new Removal(remove, zero);
    }
}
