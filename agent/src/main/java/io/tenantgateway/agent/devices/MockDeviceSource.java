package io.tenantgateway.agent.devices;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.common.config.ConfigException;
import io.tenantgateway.hami.GpuDevice;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * Simulated GPUs from a {@link MockInventory}. Each GPU gets a UUID that depends only on the node
 * name and its index ({@code GPU-} + a name-based UUID of {@code "<node>/<index>"}), so restarts
 * and re-registrations keep the IDs that pods' device annotations refer to.
 */
public final class MockDeviceSource implements DeviceSource {

    private final List<GpuDevice> devices;

    /**
     * @param nodeName          the Node this agent registers; part of every UUID
     * @param inventory         the simulated GPUs
     * @param defaultSplitCount HAMi split count for entries that do not set one
     */
    public MockDeviceSource(String nodeName, MockInventory inventory, int defaultSplitCount) {
        requireNonNull(nodeName, "nodeName");
        requireNonNull(inventory, "inventory");
        if (defaultSplitCount <= 0) {
            throw new ConfigException("--device-split-count", defaultSplitCount, "> 0");
        }
        List<GpuDevice> list = new ArrayList<>(inventory.gpuCount());
        for (MockInventory.Entry entry : inventory.entries()) {
            int split = entry.splitCount() != null ? entry.splitCount() : defaultSplitCount;
            for (int i = 0; i < entry.count(); i++) {
                int index = list.size();
                list.add(new GpuDevice(mockUuid(nodeName, index), index, split, entry.memoryMiB(), entry.cores(),
                        GpuDevice.typeForModel(entry.modelName()), entry.numa(), entry.mode(), entry.healthy()));
            }
        }
        this.devices = List.copyOf(list);
    }

    /** {@code GPU-} + the name-based (MD5, version 3) UUID of {@code "<node>/<index>"}. */
    public static String mockUuid(String nodeName, int index) {
        return "GPU-" + UUID.nameUUIDFromBytes((nodeName + "/" + index).getBytes(StandardCharsets.UTF_8));
    }

    @Override
    public String kind() {
        return "mock";
    }

    @Override
    public List<GpuDevice> discover() {
        return devices;
    }
}
