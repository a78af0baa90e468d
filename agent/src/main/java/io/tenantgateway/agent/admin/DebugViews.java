package io.tenantgateway.agent.admin;

import io.tenantgateway.agent.devices.DeviceRegistrationSnapshot;
import io.tenantgateway.agent.locks.LockAction;
import io.tenantgateway.agent.locks.LockSnapshot;
import io.tenantgateway.agent.node.NodeRegistrations;
import io.tenantgateway.hami.GpuDevice;
import io.tenantgateway.hami.RegisteredDevice;
import io.tenantgateway.tunnel.client.AgentSnapshot;
import io.tenantgateway.tunnel.client.ServerConnectionSnapshot;
import io.tenantgateway.tunnel.client.TunnelSnapshot;
import io.tenantgateway.webhook.AdmissionRecord;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The JSON shapes of {@code /debug/*}: explicit maps rather than serialised records, so that field names and units
 * (seconds, bytes, ISO-8601 instants) are a stable contract for scripts and do not move with internal types.
 */
final class DebugViews {
    private DebugViews() {
    }

    static Map<String, Object> tunnels(AgentSnapshot snapshot, String proxyServer, String agentId) {
        Map<String, Object> root = new LinkedHashMap<>();
        root.put("takenAt", snapshot.takenAt().toString());
        root.put("agentId", agentId);
        root.put("proxyServer", proxyServer);
        root.put("serverCount", snapshot.serverCount());
        root.put("draining", snapshot.draining());
        root.put("servers", snapshot.servers().stream().map(s -> server(s, snapshot.takenAt())).toList());
        root.put("tunnels", snapshot.tunnels().stream().map(DebugViews::tunnel).toList());
        return root;
    }

    private static Map<String, Object> server(ServerConnectionSnapshot server, Instant now) {
        Map<String, Object> item = new LinkedHashMap<>();
        item.put("serverId", server.serverId());
        item.put("state", server.state());
        item.put("since", server.since().toString());
        item.put("forSeconds", seconds(Duration.between(server.since(), now)));
        item.put("flowControl", server.flowControl());
        item.put("tunnels", server.tunnels());
        return item;
    }

    private static Map<String, Object> tunnel(TunnelSnapshot tunnel) {
        Map<String, Object> item = new LinkedHashMap<>();
        item.put("connectID", tunnel.connectId());
        item.put("serverId", tunnel.serverId());
        item.put("address", tunnel.address());
        item.put("bytesToTarget", tunnel.bytesToTarget());
        item.put("bytesFromTarget", tunnel.bytesFromTarget());
        item.put("bufferedToTarget", tunnel.bufferedToTarget());
        item.put("ageSeconds", seconds(tunnel.age()));
        return item;
    }

    static Map<String, Object> devices(DeviceRegistrationSnapshot snapshot) {
        return devices(snapshot, null);
    }

    /** @param plugin the device plugin's state, {@code null} with {@code --device-plugin=false} (then left out) */
    static Map<String, Object> devices(DeviceRegistrationSnapshot snapshot,
            io.tenantgateway.deviceplugin.DevicePluginSnapshot plugin) {
        Map<String, Object> root = new LinkedHashMap<>();
        root.put("node", snapshot.nodeName());
        root.put("source", snapshot.source());
        root.put("ready", snapshot.ready());
        root.put("devices", snapshot.devices().stream().map(DebugViews::device).toList());
        root.put("registerAnnotation", snapshot.registerAnnotation());
        root.put("lastHandshake", text(snapshot.lastHandshake()));
        root.put("lastFailure", snapshot.lastFailure() == null ? null : snapshot.lastFailure().label());
        root.put("lastError", snapshot.lastError());
        root.put("lastErrorAt", text(snapshot.lastErrorAt()));
        if (plugin != null) {
            Map<String, Object> item = new LinkedHashMap<>();
            item.put("phase", plugin.phase().name());
            item.put("detail", plugin.detail());
            item.put("socket", plugin.socket().toString());
            item.put("resource", plugin.resourceName());
            item.put("devices", plugin.devices());
            item.put("healthy", plugin.healthy());
            item.put("registrations", plugin.registrations());
            item.put("lastRegistration", text(plugin.lastRegistration()));
            item.put("listAndWatchStreams", plugin.listAndWatchStreams());
            root.put("devicePlugin", item);
        }
        return root;
    }

    private static Map<String, Object> device(GpuDevice device) {
        Map<String, Object> item = new LinkedHashMap<>();
        item.put("id", device.id());
        item.put("index", device.index());
        item.put("type", device.type());
        item.put("memoryMiB", device.devmemMiB());
        item.put("cores", device.devcore());
        item.put("splitCount", device.count());
        item.put("numa", device.numa());
        item.put("mode", device.mode());
        item.put("healthy", device.healthy());
        return item;
    }

    /**
     * This node's HAMi registrations: {@code state} (off, pending, failed, read), {@code node}, {@code detail},
     * {@code readAt}, {@code source}, {@code hamiCompat} (the release whose reading it is), {@code registrations[]} ({@code key}, {@code vendor}, {@code fromCapacity},
     * {@code deviceCount}, {@code devices[]} with the register keys, or {@code error}), {@code notShown}.
     */
    static Map<String, Object> registrations(NodeRegistrations registrations) {
        Map<String, Object> root = new LinkedHashMap<>();
        root.put("state", registrations.state().name().toLowerCase(java.util.Locale.ROOT));
        root.put("node", registrations.node());
        root.put("detail", registrations.detail());
        root.put("readAt", text(registrations.readAt()));
        root.put("source", registrations.source());
        root.put("hamiCompat", registrations.release().label());
        root.put("registrations", registrations.registrations().stream().map(DebugViews::registration).toList());
        root.put("notShown", registrations.notShown());
        return root;
    }

    private static Map<String, Object> registration(NodeRegistrations.Registration registration) {
        Map<String, Object> item = new LinkedHashMap<>();
        item.put("key", registration.key());
        item.put("vendor", registration.vendor());
        item.put("fromCapacity", registration.fromCapacity());
        item.put("deviceCount", registration.deviceCount());
        if (!registration.ok()) {
            item.put("error", registration.error());
            return item;
        }
        item.put("devices", registration.devices().stream().map(DebugViews::registered).toList());
        return item;
    }

    private static Map<String, Object> registered(RegisteredDevice device) {
        Map<String, Object> item = new LinkedHashMap<>();
        item.put("id", device.id());
        item.put("index", device.index());
        item.put("count", device.count());
        item.put("devmem", device.devmem());
        item.put("devcore", device.devcore());
        item.put("type", device.type());
        item.put("numa", device.numa());
        item.put("mode", device.mode());
        item.put("health", device.health());
        item.put("devicevendor", device.devicevendor());
        item.put("custominfo", device.custominfo());
        return item;
    }

    static Map<String, Object> locks(LockSnapshot snapshot) {
        Map<String, Object> root = new LinkedHashMap<>();
        root.put("node", snapshot.node());
        root.put("mode", snapshot.mode().toString());
        root.put("synced", snapshot.synced());
        root.put("lock", snapshot.lockValue());
        root.put("verdict", snapshot.lockVerdict());
        root.put("reapPasses", snapshot.reapPasses());
        root.put("recentActions", snapshot.recentActions().stream().map(DebugViews::action).toList());
        return root;
    }

    private static Map<String, Object> action(LockAction action) {
        Map<String, Object> item = new LinkedHashMap<>();
        item.put("at", action.at().toString());
        item.put("kind", action.kind());
        item.put("subject", action.subject());
        item.put("detail", action.detail());
        return item;
    }

    /** The newest {@code limit} admissions, newest first: who, what was decided, no pod specs. */
    static Map<String, Object> admissions(List<AdmissionRecord> newestFirst, long total, int capacity, int limit) {
        Map<String, Object> root = new LinkedHashMap<>();
        root.put("capacity", capacity);
        root.put("total", total);
        root.put("admissions", newestFirst.stream().limit(limit).map(DebugViews::admission).toList());
        return root;
    }

    private static Map<String, Object> admission(AdmissionRecord record) {
        Map<String, Object> item = new LinkedHashMap<>();
        item.put("time", record.time().toString());
        item.put("uid", record.uid());
        item.put("namespace", record.namespace());
        item.put("name", record.name());
        item.put("operation", record.operation());
        item.put("route", record.route().label());
        item.put("decision", record.decision());
        item.put("code", record.code());
        item.put("message", record.message());
        item.put("patchOperations", record.patchOperations());
        item.put("warnings", record.warnings());
        item.put("durationMillis", record.duration().toNanos() / 1_000_000.0);
        return item;
    }

    private static double seconds(Duration duration) {
        return Math.round(duration.toMillis() / 100.0) / 10.0;
    }

    private static String text(Instant instant) {
        return instant == null ? null : instant.toString();
    }
}
