package io.tenantgateway.agent.admin;

import static io.tenantgateway.agent.admin.Html.text;
import static java.util.Objects.requireNonNull;

import io.tenantgateway.agent.devices.DeviceRegistrationSnapshot;
import io.tenantgateway.agent.health.HealthCheck;
import io.tenantgateway.agent.part.PartView;
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
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The {@code /ui} status page: one self-contained HTML document (inline CSS, no scripts, no external assets) that
 * reloads itself, built from snapshots. Pure: {@link #render} turns a {@link Model} into text, so it is tested
 * without a server. Every value goes through {@link Html#text}.
 *
 * <p>On narrow screens (phones) each table row turns into a card whose cells carry their column name, so nothing
 * needs horizontal scrolling.
 */
final class StatusPage {
    private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("HH:mm:ss", Locale.ROOT)
            .withZone(ZoneOffset.UTC);
    private static final int MAX_ADMISSIONS = 20;
    private static final int MAX_LOCK_ACTIONS = 10;

    private static final String STYLE = """
            :root{--ok:#1a7f37;--bad:#cf222e;--warn:#9a6700;--muted:#57606a;--line:#d0d7de;--bg:#f6f8fa}
            *{box-sizing:border-box}
            body{margin:0;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1f2328;
              background:#fff}
            header{padding:12px 16px;background:var(--bg);border-bottom:1px solid var(--line)}
            h1{font-size:1.2rem;margin:0 0 4px}
            h2{font-size:1.05rem;margin:20px 0 8px}
            h3{font-size:.95rem;margin:14px 0 6px}
            main{padding:0 16px 24px;max-width:1100px}
            .meta{color:var(--muted);font-size:.85rem;margin:0;overflow-wrap:anywhere}
            .badge{display:inline-block;padding:1px 8px;border-radius:10px;font-size:.8rem;font-weight:600;color:#fff}
            .ok{background:var(--ok)}.bad{background:var(--bad)}.warn{background:var(--warn)}
            .off{color:var(--muted);font-style:italic;margin:4px 0}
            table{border-collapse:collapse;width:100%;font-size:.9rem}
            th,td{text-align:left;padding:5px 8px;border-bottom:1px solid var(--line);vertical-align:top;
              overflow-wrap:anywhere}
            th{background:var(--bg);font-weight:600}
            td.num{text-align:right;font-variant-numeric:tabular-nums}
            code{font-size:.85rem;overflow-wrap:anywhere}
            code.error{color:var(--bad)}
            dl{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;margin:4px 0 8px;font-size:.9rem}
            dt{color:var(--muted)}dd{margin:0;overflow-wrap:anywhere}
            .tiles{display:grid;grid-template-columns:repeat(auto-fit,minmax(150px,1fr));gap:8px;margin:12px 0 0}
            .tile{border:1px solid var(--line);border-radius:6px;padding:8px 10px}
            .tile .value{display:block;font-size:1.4rem;font-weight:600}
            .tile .caption{color:var(--muted);font-size:.8rem}
            .checks{list-style:none;padding:0;margin:0;display:flex;flex-wrap:wrap;gap:6px 14px;font-size:.9rem}
            footer{padding:12px 16px;color:var(--muted);font-size:.8rem;border-top:1px solid var(--line)}
            footer a{color:inherit}
            @media (max-width:640px){
              thead{display:none}
              table,tbody,tr,td{display:block;width:100%}
              tr{border:1px solid var(--line);border-radius:6px;margin:0 0 8px;padding:4px 0}
              td{border:0;padding:2px 10px;text-align:left}
              td.num{text-align:left}
              td::before{content:attr(data-label);display:inline-block;min-width:7.5em;color:var(--muted);
                font-weight:600}
              .tiles{grid-template-columns:1fr 1fr}
            }
            """;

    /**
     * Everything the page shows, read from the agent at one moment.
     *
     * @param now when the page is rendered
     * @param version tenant-gateway's version
     * @param agentId {@code --agent-id}
     * @param nodeName the node, or {@code ""}
     * @param proxyServer {@code --proxy-server-host:port}; {@code ""}: the tunnel is off ({@code --tunnel=false})
     * @param readiness every readiness check, by name
     * @param tunnel the tunnel snapshot (empty before the tunnel started)
     * @param devices device registration, when enabled
     * @param locks the lock controller, when enabled
     * @param registrations this node's HAMi registrations, every vendor
     * @param admissions recent admissions, newest first, when the webhook is enabled
     * @param admissionsTotal admissions since start
     * @param parts the sections of the parts that show one, in the order of the list of parts
     */
    record Model(Instant now, String version, String agentId, String nodeName, String proxyServer,
            Map<String, HealthCheck.Result> readiness, Optional<AgentSnapshot> tunnel,
            Optional<DeviceRegistrationSnapshot> devices, Optional<LockSnapshot> locks,
            NodeRegistrations registrations, Optional<List<AdmissionRecord>> admissions, long admissionsTotal,
            List<PartView.Section> parts) {
        /** Without sections of parts. */
        Model(Instant now, String version, String agentId, String nodeName, String proxyServer,
                Map<String, HealthCheck.Result> readiness, Optional<AgentSnapshot> tunnel,
                Optional<DeviceRegistrationSnapshot> devices, Optional<LockSnapshot> locks,
                NodeRegistrations registrations, Optional<List<AdmissionRecord>> admissions, long admissionsTotal) {
            this(now, version, agentId, nodeName, proxyServer, readiness, tunnel, devices, locks, registrations,
                    admissions, admissionsTotal, List.of());
        }

        Model {
            parts = List.copyOf(parts);
            requireNonNull(now, "now");
            requireNonNull(readiness, "readiness");
            requireNonNull(tunnel, "tunnel");
            requireNonNull(devices, "devices");
            requireNonNull(locks, "locks");
            requireNonNull(registrations, "registrations");
            requireNonNull(admissions, "admissions");
        }
    }

    private StatusPage() {
    }

    /** @param refreshSeconds how often the browser reloads the page; 0 turns reloading off */
    static String render(Model model, int refreshSeconds) {
        StringBuilder html = new StringBuilder(16 * 1024);
        boolean ready = model.readiness().values().stream().allMatch(HealthCheck.Result::ok);
        html.append("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">")
                .append("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">");
        if (refreshSeconds > 0) {
            html.append("<meta http-equiv=\"refresh\" content=\"").append(refreshSeconds).append("\">");
        }
        html.append("<title>tenant-gateway · ").append(text(model.nodeName().isEmpty() ? model.agentId()
                : model.nodeName())).append("</title><style>").append(STYLE).append("</style></head><body>");

        html.append("<header><h1>tenant-gateway agent <span class=\"badge ")
                .append(ready ? "ok\">READY" : "bad\">NOT READY").append("</span></h1><p class=\"meta\">")
                .append("agent <b id=\"agent-id\">").append(text(model.agentId())).append("</b>")
                .append(model.nodeName().isEmpty() ? "" : " · node <b id=\"node\">" + text(model.nodeName()) + "</b>")
                .append(model.proxyServer().isEmpty() ? " · tunnel off" : " · server " + text(model.proxyServer()))
                .append(" · version ").append(text(model.version()))
                .append(" · ").append(text(TIME.format(model.now()))).append(" UTC")
                .append(refreshSeconds > 0 ? " · refreshes every " + refreshSeconds + " s" : "")
                .append("</p></header><main>");

        summary(html, model);
        readiness(html, model.readiness());
        servers(html, model);
        tunnels(html, model);
        devices(html, model);
        registrations(html, model.registrations());
        locks(html, model);
        for (PartView.Section section : model.parts()) {
            part(html, section);
        }
        admissions(html, model);

        html.append("</main><footer>JSON: <a href=\"/debug/tunnels\">tunnels</a> · <a href=\"/debug/devices\">devices")
                .append("</a> · <a href=\"/debug/locks\">locks</a> · ");
        for (PartView.Section section : model.parts()) {
            html.append("<a href=\"/debug/").append(text(section.name())).append("\">").append(text(section.name()))
                    .append("</a> · ");
        }
        html.append("<a href=\"/debug/admissions\">admissions</a> · ")
                .append("<a href=\"/debug/readiness\">readiness</a> · <a href=\"/debug/config\">config</a></footer>")
                .append("</body></html>\n");
        return html.toString();
    }

    private static void readiness(StringBuilder html, Map<String, HealthCheck.Result> checks) {
        html.append("<section id=\"readiness\"><h2>Readiness</h2>");
        if (checks.isEmpty()) {
            html.append("<p class=\"off\">no checks registered yet</p></section>");
            return;
        }
        html.append("<ul class=\"checks\">");
        checks.forEach((name, result) -> html.append("<li><span class=\"badge ")
                .append(result.ok() ? "ok\">ok" : "bad\">failed").append("</span> ").append(text(name))
                .append(result.ok() ? "" : ": " + text(result.reason())).append("</li>"));
        html.append("</ul></section>");
    }

    /** Counts at a glance, so a phone shows the state before any table. */
    private static void summary(StringBuilder html, Model model) {
        List<ServerConnectionSnapshot> servers = model.tunnel().map(AgentSnapshot::servers).orElse(List.of());
        long ready = servers.stream().filter(s -> s.state().equals("READY")).count();
        html.append("<div class=\"tiles\">")
                .append(tile("servers", ready + " / " + model.tunnel().map(AgentSnapshot::serverCount).orElse(0),
                        "ready / servercount"))
                .append(tile("tunnels", Integer.toString(model.tunnel().map(t -> t.tunnels().size()).orElse(0)),
                        "open"))
                .append(tile("gpus", model.devices().map(d -> Integer.toString(d.devices().size())).orElse("off"),
                        model.devices().map(d -> d.ready() ? "registered" : "NOT registered").orElse("devices")))
                .append(registrationsTile(model.registrations()))
                .append(tile("admissions", model.admissions().isPresent() ? Long.toString(model.admissionsTotal())
                        : "off", "since start"))
                .append("</div>");
    }

    private static String registrationsTile(NodeRegistrations registrations) {
        return switch (registrations.state()) {
            case OFF -> tile("registrations", "off", "HAMi");
            case PENDING -> tile("registrations", "-", "not read yet");
            case FAILED -> tile("registrations", "?", "node NOT read");
            case READ -> tile("registrations", Integer.toString(registrations.registrations().size()
                    + registrations.notShown()), registrations.failing() == 0 ? "HAMi, all decode"
                    : registrations.failing() + " do NOT decode");
        };
    }

    private static String tile(String name, String value, String caption) {
        return "<div class=\"tile\" id=\"tile-" + text(name) + "\"><span class=\"value\">" + text(value)
                + "</span><span class=\"caption\">" + text(name) + " · " + text(caption) + "</span></div>";
    }

    private static void servers(StringBuilder html, Model model) {
        html.append("<section id=\"servers\"><h2>Servers</h2>");
        if (model.tunnel().isEmpty()) {
            html.append("<p class=\"off\">").append(model.proxyServer().isEmpty() ? "tunnel off (--tunnel=false)"
                    : "tunnel not started").append("</p></section>");
            return;
        }
        AgentSnapshot snapshot = model.tunnel().get();
        html.append("<p class=\"meta\">").append(snapshot.servers().size()).append(" connection(s), server count ")
                .append(snapshot.serverCount()).append(snapshot.draining() ? " · <b>draining</b>" : "").append("</p>");
        if (snapshot.servers().isEmpty()) {
            html.append("<p class=\"off\">no server connected</p></section>");
            return;
        }
        head(html, "server id", "state", "for", "flow control", "tunnels");
        for (ServerConnectionSnapshot server : snapshot.servers()) {
            html.append("<tr>").append(cell("server id", server.serverId().isEmpty() ? "(connecting)"
                    : server.serverId()))
                    .append(cell("state", server.state()))
                    .append(cell("for", age(Duration.between(server.since(), snapshot.takenAt()))))
                    .append(cell("flow control", server.flowControl() ? "yes" : "no"))
                    .append(numeric("tunnels", Integer.toString(server.tunnels()))).append("</tr>");
        }
        html.append("</tbody></table></section>");
    }

    private static void tunnels(StringBuilder html, Model model) {
        html.append("<section id=\"tunnels\"><h2>Tunnels</h2>");
        List<TunnelSnapshot> tunnels = model.tunnel().map(AgentSnapshot::tunnels).orElse(List.of());
        if (tunnels.isEmpty()) {
            html.append("<p class=\"off\">no open tunnels</p></section>");
            return;
        }
        head(html, "connectID", "server", "address", "to target", "from target", "buffered", "age");
        for (TunnelSnapshot tunnel : tunnels) {
            html.append("<tr>").append(numeric("connectID", Long.toString(tunnel.connectId())))
                    .append(cell("server", tunnel.serverId()))
                    .append("<td data-label=\"address\"><code>").append(text(tunnel.address())).append("</code></td>")
                    .append(numeric("to target", bytes(tunnel.bytesToTarget())))
                    .append(numeric("from target", bytes(tunnel.bytesFromTarget())))
                    .append(numeric("buffered", bytes(tunnel.bufferedToTarget())))
                    .append(cell("age", age(tunnel.age()))).append("</tr>");
        }
        html.append("</tbody></table></section>");
    }

    private static void devices(StringBuilder html, Model model) {
        html.append("<section id=\"devices\"><h2>Devices</h2>");
        if (model.devices().isEmpty()) {
            html.append("<p class=\"off\">device registration off (--device-source=none)</p></section>");
            return;
        }
        DeviceRegistrationSnapshot devices = model.devices().get();
        html.append("<dl><dt>node</dt><dd>").append(text(devices.nodeName())).append("</dd><dt>source</dt><dd>")
                .append(text(devices.source())).append("</dd><dt>registered</dt><dd>")
                .append(devices.ready() ? "<span class=\"badge ok\">yes</span>" : "<span class=\"badge bad\">no</span>")
                .append("</dd><dt>last handshake</dt><dd>")
                .append(devices.lastHandshake() == null ? "never" : text(devices.lastHandshake()) + " ("
                        + text(age(Duration.between(devices.lastHandshake(), model.now()))) + " ago)")
                .append("</dd>");
        if (devices.lastError() != null) {
            html.append("<dt>last error</dt><dd>").append(text(devices.lastError())).append("</dd>");
        }
        html.append("</dl>");
        if (devices.devices().isEmpty()) {
            html.append("<p class=\"off\">nothing registered yet</p></section>");
            return;
        }
        head(html, "#", "type", "memory", "cores", "split", "health", "id");
        for (GpuDevice device : devices.devices()) {
            html.append("<tr>").append(numeric("#", Integer.toString(device.index())))
                    .append(cell("type", device.type()))
                    .append(numeric("memory", device.devmemMiB() + " MiB"))
                    .append(numeric("cores", Integer.toString(device.devcore())))
                    .append(numeric("split", Integer.toString(device.count())))
                    .append(cell("health", device.healthy() ? "healthy" : "UNHEALTHY"))
                    .append("<td data-label=\"id\"><code>").append(text(device.id())).append("</code></td></tr>");
        }
        html.append("</tbody></table></section>");
    }

    /** Every vendor's registration of this node, decoded as HAMi's scheduler reads it, or the reader's error. */
    private static void registrations(StringBuilder html, NodeRegistrations registrations) {
        html.append("<section id=\"registrations\"><h2>HAMi registrations</h2>");
        switch (registrations.state()) {
            case OFF, PENDING -> {
                html.append("<p class=\"off\">").append(text(registrations.detail())).append("</p></section>");
                return;
            }
            case FAILED -> {
                html.append("<p class=\"meta\">from the ").append(text(registrations.source())).append(" at ")
                        .append(text(TIME.format(registrations.readAt()))).append(" UTC</p><p><span class=\"badge"
                                + " bad\">not read</span> ").append(text(registrations.detail())).append("</p></section>");
                return;
            }
            default -> {
            }
        }
        html.append("<p class=\"meta\">node ").append(text(registrations.node()))
                .append(" as HAMi ").append(registrations.release().label()).append("'s scheduler reads it, from the ").append(text(registrations.source()))
                .append(" at ").append(text(TIME.format(registrations.readAt()))).append(" UTC</p>");
        if (registrations.registrations().isEmpty()) {
            html.append("<p class=\"off\">no HAMi registration on this node</p></section>");
            return;
        }
        for (NodeRegistrations.Registration registration : registrations.registrations()) {
            html.append("<div class=\"registration\" id=\"registration-").append(text(registration.key()))
                    .append("\"><h3>").append(text(registration.vendor().isEmpty() ? "?" : registration.vendor()))
                    .append(" <code>").append(text(registration.key())).append("</code>")
                    .append(registration.fromCapacity() ? " (from capacity)" : "").append(" <span class=\"badge ")
                    .append(registration.ok() ? "ok\">" + registration.deviceCount() + " device(s)" : "bad\">error")
                    .append("</span></h3>");
            if (!registration.ok()) {
                html.append("<p><code class=\"error\">").append(text(registration.error())).append("</code></p></div>");
                continue;
            }
            head(html, "id", "index", "count", "devmem", "devcore", "type", "numa", "devicevendor", "health");
            for (RegisteredDevice device : registration.devices()) {
                html.append("<tr><td data-label=\"id\"><code>").append(text(device.id())).append("</code></td>")
                        .append(numeric("index", Long.toString(device.index())))
                        .append(numeric("count", Integer.toString(device.count())))
                        .append(numeric("devmem", device.devmem() + " MiB"))
                        .append(numeric("devcore", Integer.toString(device.devcore())))
                        .append(cell("type", device.type()))
                        .append(numeric("numa", Integer.toString(device.numa())))
                        .append(cell("devicevendor", device.devicevendor()))
                        .append(cell("health", device.health() ? "healthy" : "UNHEALTHY")).append("</tr>");
            }
            html.append("</tbody></table>");
            if (registration.deviceCount() > registration.devices().size()) {
                html.append("<p class=\"meta\">the first ").append(registration.devices().size()).append(" of ")
                        .append(registration.deviceCount()).append(" devices</p>");
            }
            html.append("</div>");
        }
        if (registrations.notShown() > 0) {
            html.append("<p class=\"meta\">").append(registrations.notShown()).append(" more registration(s) not"
                    + " shown (tenant-gateway annotations decode reads them all)</p>");
        }
        html.append("</section>");
    }

    private static void locks(StringBuilder html, Model model) {
        html.append("<section id=\"locks\"><h2>Node lock</h2>");
        if (model.locks().isEmpty()) {
            html.append("<p class=\"off\">lock controller off</p></section>");
            return;
        }
        LockSnapshot locks = model.locks().get();
        html.append("<dl><dt>lock</dt><dd>").append(locks.lockValue() == null ? "free"
                : "<code>" + text(locks.lockValue()) + "</code>")
                .append("</dd><dt>verdict</dt><dd>").append(text(locks.lockVerdict().isEmpty() ? "-"
                        : locks.lockVerdict()))
                .append("</dd><dt>mode</dt><dd>").append(text(locks.mode()))
                .append("</dd><dt>synced</dt><dd>").append(locks.synced() ? "yes" : "no").append("</dd></dl>");
        List<LockAction> actions = locks.recentActions();
        if (actions.isEmpty()) {
            html.append("<p class=\"off\">no actions yet</p></section>");
            return;
        }
        head(html, "time", "action", "subject", "detail");
        for (int i = actions.size() - 1; i >= Math.max(0, actions.size() - MAX_LOCK_ACTIONS); i--) {
            LockAction action = actions.get(i); // newest first
            html.append("<tr>").append(cell("time", TIME.format(action.at()))).append(cell("action", action.kind()))
                    .append(cell("subject", action.subject())).append(cell("detail", action.detail())).append("</tr>");
        }
        html.append("</tbody></table></section>");
    }

    /** A part's own section: its notes and its table, as the part's view gives them. */
    private static void part(StringBuilder html, PartView.Section section) {
        html.append("<section id=\"").append(text(section.name())).append("\"><h2>").append(text(section.title()))
                .append("</h2>");
        if (section.view().isEmpty()) {
            html.append("<p class=\"off\">").append(text(section.name())).append(" off</p></section>");
            return;
        }
        PartView view = section.view().get();
        for (String note : view.notes()) {
            html.append("<p class=\"meta\">").append(text(note)).append("</p>");
        }
        PartView.Table table = view.table();
        if (table.rows().isEmpty()) {
            html.append("<p class=\"off\">").append(text(table.empty())).append("</p></section>");
            return;
        }
        head(html, table.columns().stream().map(PartView.Column::heading).toArray(String[]::new));
        for (List<String> row : table.rows()) {
            html.append("<tr>");
            for (int i = 0; i < row.size(); i++) {
                html.append(cell(table.columns().get(i).label(), row.get(i)));
            }
            html.append("</tr>");
        }
        html.append("</tbody></table></section>");
    }

    private static void admissions(StringBuilder html, Model model) {
        html.append("<section id=\"admissions\"><h2>Recent admissions</h2>");
        if (model.admissions().isEmpty()) {
            html.append("<p class=\"off\">webhook off</p></section>");
            return;
        }
        List<AdmissionRecord> records = model.admissions().get();
        html.append("<p class=\"meta\">").append(model.admissionsTotal()).append(" since start</p>");
        if (records.isEmpty()) {
            html.append("<p class=\"off\">none yet</p></section>");
            return;
        }
        head(html, "time", "pod", "decision", "code", "message", "patch ops", "route", "ms");
        for (AdmissionRecord record : records.subList(0, Math.min(records.size(), MAX_ADMISSIONS))) {
            String badge = switch (record.decision()) {
                case "allowed" -> "ok";
                case "denied" -> "warn";
                default -> "bad";
            };
            html.append("<tr>").append(cell("time", TIME.format(record.time())))
                    .append(cell("pod", record.namespace() + "/" + record.name()))
                    .append("<td data-label=\"decision\"><span class=\"badge ").append(badge).append("\">")
                    .append(text(record.decision())).append("</span></td>")
                    .append(numeric("code", Integer.toString(record.code())))
                    .append(cell("message", record.message()))
                    .append(numeric("patch ops", Integer.toString(record.patchOperations())))
                    .append(cell("route", record.route().label()))
                    .append(numeric("ms", String.format(Locale.ROOT, "%.1f",
                            record.duration().toNanos() / 1_000_000.0))).append("</tr>");
        }
        html.append("</tbody></table></section>");
    }

    private static void head(StringBuilder html, String... columns) {
        html.append("<table><thead><tr>");
        for (String column : columns) {
            html.append("<th>").append(text(column)).append("</th>");
        }
        html.append("</tr></thead><tbody>");
    }

    private static String cell(String label, Object value) {
        return "<td data-label=\"" + text(label) + "\">" + text(value) + "</td>";
    }

    private static String numeric(String label, String value) {
        return "<td class=\"num\" data-label=\"" + text(label) + "\">" + text(value) + "</td>";
    }

    static String bytes(long count) {
        if (count < 1024) {
            return count + " B";
        }
        if (count < 1024 * 1024) {
            return String.format(Locale.ROOT, "%.1f KiB", count / 1024.0);
        }
        if (count < 1024L * 1024 * 1024) {
            return String.format(Locale.ROOT, "%.1f MiB", count / (1024.0 * 1024));
        }
        return String.format(Locale.ROOT, "%.2f GiB", count / (1024.0 * 1024 * 1024));
    }

    static String age(Duration duration) {
        long seconds = Math.max(0, duration.getSeconds());
        if (seconds < 60) {
            return seconds + "s";
        }
        if (seconds < 3600) {
            return seconds / 60 + "m" + seconds % 60 + "s";
        }
        if (seconds < 86400) {
            return seconds / 3600 + "h" + (seconds % 3600) / 60 + "m";
        }
        return seconds / 86400 + "d" + (seconds % 86400) / 3600 + "h";
    }
}
