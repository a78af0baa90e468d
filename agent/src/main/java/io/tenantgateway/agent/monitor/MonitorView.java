package io.tenantgateway.agent.monitor;

import io.tenantgateway.agent.part.PartView;
import io.tenantgateway.hami.region.DeviceUsage;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The monitor's view of a scan: the status page's "GPU containers" (each container's devices, usage against limits,
 * and where the figures come from) and the JSON at {@code /debug/monitor}.
 */
final class MonitorView {
    static final String TITLE = "GPU containers";
    private static final List<PartView.Column> COLUMNS = List.of(new PartView.Column("pod", "pod"),
            new PartView.Column("container", "container"), new PartView.Column("device", "device"),
            new PartView.Column("used", "memory used"), new PartView.Column("limit", "memory limit"),
            new PartView.Column("sm", "SM use"), new PartView.Column("sm-limit", "SM limit"),
            new PartView.Column("source", "from"));

    private MonitorView() {
    }

    static PartView of(MonitorSnapshot snapshot) {
        List<String> notes = snapshot.podsError().map(error -> List.of("pods not listed: " + error
                + " (no cache directory is removed meanwhile)")).orElse(List.of());
        List<List<String>> rows = new ArrayList<>();
        for (ContainerUsage container : snapshot.containers()) {
            boolean region = container.source() == ContainerUsage.Source.REGION;
            for (DeviceUsage device : container.devices()) {
                rows.add(List.of(container.namespace() + "/" + container.pod(), container.container(),
                        device.index() + " " + device.uuidLabel(),
                        region ? (device.usedBytes() >> 20) + " MiB" : "-",
                        (device.limitBytes() >> 20) + " MiB",
                        region ? device.smUtilSum() + " %" : "-",
                        device.smLimitPercent() == 0 ? "-" : device.smLimitPercent() + " %",
                        region ? "HAMi-core" : "annotation (no CUDA call yet)"));
            }
        }
        String empty = snapshot.at().isEmpty() ? "first scan not done yet" : "no GPU container on this node";
        return new PartView(notes, new PartView.Table(COLUMNS, rows, empty), debug(snapshot));
    }

    /** {@code /debug/monitor}: each container's devices with usage and limits. */
    private static Map<String, Object> debug(MonitorSnapshot snapshot) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("scannedAt", snapshot.at().map(Object::toString).orElse(null));
        out.put("directories", snapshot.directories());
        out.put("waitingForCleanup", snapshot.waitingForCleanup());
        out.put("podsError", snapshot.podsError().orElse(null));
        List<Map<String, Object>> containers = new ArrayList<>();
        for (ContainerUsage container : snapshot.containers()) {
            Map<String, Object> entry = new LinkedHashMap<>();
            entry.put("namespace", container.namespace());
            entry.put("pod", container.pod());
            entry.put("container", container.container());
            entry.put("source", container.source().label());
            entry.put("lastKernelTime", container.lastKernelTime());
            List<Map<String, Object>> devices = new ArrayList<>();
            for (DeviceUsage device : container.devices()) {
                Map<String, Object> d = new LinkedHashMap<>();
                d.put("index", device.index());
                d.put("uuid", device.uuid());
                d.put("memoryUsedBytes", device.usedBytes());
                d.put("memoryLimitBytes", device.limitBytes());
                d.put("smUtilization", device.smUtilSum());
                d.put("smLimitPercent", device.smLimitPercent());
                devices.add(d);
            }
            entry.put("devices", devices);
            containers.add(entry);
        }
        out.put("containers", containers);
        return out;
    }
}
