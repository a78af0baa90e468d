package io.tenantgateway.tools.lab;

import java.util.Locale;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/** Renders a {@link LabReport}: the table for people, JSON for machines. Pure. */
final class LabReportFormat {
    private static final JsonMapper JSON = JsonMapper.builder().build();

    private LabReportFormat() {
    }

    /**
     * A header, one row per check ({@code #, check, result, time, evidence}), the registered devices (node, vendor,
     * device, type, memory, cores, split) and a summary line.
     */
    static String table(LabReport report) {
        int titleWidth = "check".length();
        for (CheckResult check : report.checks()) {
            titleWidth = Math.max(titleWidth, check.title().length());
        }
        String row = "%2s  %-" + titleWidth + "s  %-6s  %8s  %s%n";
        StringBuilder out = new StringBuilder();
        out.append("tenant-gateway lab: two Kamaji tenants sharing GPUs with HAMi, in one JVM\n");
        out.append(Lab.SCHEDULER).append("\n\n");
        out.append(String.format(Locale.ROOT, row, "#", "check", "result", "time", "evidence"));
        for (CheckResult check : report.checks()) {
            out.append(String.format(Locale.ROOT, row, check.number(), check.title(), check.passed() ? "PASS" : "FAIL",
                    Lab.millis(check.duration()), check.evidence()));
        }
        if (!report.devices().isEmpty()) {
            out.append('\n').append(devices(report));
        }
        out.append('\n').append(summary(report)).append('\n');
        return out.toString();
    }

    /** The devices the workers registered, one row each, with its vendor. */
    static String devices(LabReport report) {
        int nodeWidth = "node".length();
        int typeWidth = "type".length();
        int vendorWidth = "vendor".length();
        for (LabReport.Device device : report.devices()) {
            nodeWidth = Math.max(nodeWidth, device.node().length());
            typeWidth = Math.max(typeWidth, device.type().length());
            vendorWidth = Math.max(vendorWidth, device.vendor().length());
        }
        String row = "  %-" + nodeWidth + "s  %-" + vendorWidth + "s  %-15s  %-" + typeWidth + "s  %10s  %5s  %5s%s%n";
        StringBuilder out = new StringBuilder("devices registered (as HAMi's scheduler reads each node's register"
                + " annotations)\n");
        out.append(String.format(Locale.ROOT, row, "node", "vendor", "device", "type", "memory", "cores", "split",
                ""));
        for (LabReport.Device device : report.devices()) {
            String id = device.id().length() > 12 ? device.id().substring(0, 12) : device.id();
            out.append(String.format(Locale.ROOT, row, device.node(), device.vendor(), "#" + device.index() + " " + id,
                    device.type(), device.memoryMiB() + " MiB", device.cores(), device.split(),
                    device.healthy() ? "" : "  unhealthy"));
        }
        return out.toString();
    }

    static String summary(LabReport report) {
        return report.passedCount() + " of " + report.checks().size() + " checks passed in "
                + Lab.seconds(report.wall()) + (report.breakages().isEmpty() ? ""
                : " (broken on purpose: " + String.join(", ", report.breakages().stream().map(Breakage::flagValue)
                        .sorted().toList()) + ")");
    }

    /** Where the parts of a running lab listen. */
    static String endpoints(LabReport report) {
        StringBuilder out = new StringBuilder();
        for (LabReport.Endpoints tenant : report.tenants()) {
            out.append(tenant.tenant()).append('\n');
            line(out, "API server", tenant.apiServer() + "  (kubectl --kubeconfig " + tenant.kubeconfig()
                    + " get nodes,pods -A)");
            line(out, "konnectivity", tenant.konnectivityServer() + " for agents (" + tenant.agentAuth()
                    + "); ProxyService " + tenant.proxyService());
            line(out, "webhook Service", tenant.webhookService());
            for (LabReport.AgentEndpoints agent : tenant.agents()) {
                line(out, "status page", agent.statusPage() + "  (agent " + agent.node()
                        + (agent.role().isEmpty() ? "" : ", " + agent.role()) + ")");
                line(out, "metrics", agent.metrics());
                line(out, "readiness", agent.readyz());
                line(out, "doctor", agent.doctor());
            }
        }
        return out.toString();
    }

    private static void line(StringBuilder out, String label, String value) {
        out.append(String.format(Locale.ROOT, "  %-16s %s%n", label, value));
    }

    static String json(LabReport report) {
        ObjectNode root = JSON.createObjectNode();
        root.put("passed", report.passed());
        root.put("passedCount", report.passedCount());
        root.put("checkCount", report.checks().size());
        root.put("wallMillis", report.wall().toMillis());
        root.put("scheduler", Lab.SCHEDULER);
        ArrayNode broken = root.putArray("brokenOnPurpose");
        report.breakages().stream().map(Breakage::flagValue).sorted().forEach(broken::add);
        ArrayNode checks = root.putArray("checks");
        for (CheckResult check : report.checks()) {
            ObjectNode node = checks.addObject();
            node.put("number", check.number());
            node.put("title", check.title());
            node.put("result", check.passed() ? "PASS" : "FAIL");
            node.put("millis", check.duration().toMillis());
            node.put("evidence", check.evidence());
        }
        ArrayNode tenants = root.putArray("tenants");
        for (LabReport.Endpoints tenant : report.tenants()) {
            ObjectNode node = tenants.addObject();
            node.put("tenant", tenant.tenant());
            node.put("apiServer", tenant.apiServer());
            node.put("kubeconfig", tenant.kubeconfig());
            node.put("konnectivityServer", tenant.konnectivityServer());
            node.put("agentAuth", tenant.agentAuth());
            node.put("proxyService", tenant.proxyService());
            node.put("webhookService", tenant.webhookService());
            // The first worker's agent at the top, as before tenants had more than one worker; then every one.
            node.put("agent", tenant.agent());
            putPages(node, tenant.agents().get(0));
            ArrayNode agents = node.putArray("agents");
            for (LabReport.AgentEndpoints agent : tenant.agents()) {
                ObjectNode entry = agents.addObject();
                entry.put("node", agent.node());
                if (!agent.role().isEmpty()) {
                    entry.put("role", agent.role());
                }
                putPages(entry, agent);
            }
        }
        ArrayNode devices = root.putArray("devices");
        for (LabReport.Device device : report.devices()) {
            ObjectNode node = devices.addObject();
            node.put("tenant", device.tenant());
            node.put("node", device.node());
            node.put("vendor", device.vendor());
            node.put("registerKey", device.registerKey());
            node.put("id", device.id());
            node.put("index", device.index());
            node.put("type", device.type());
            node.put("memoryMiB", device.memoryMiB());
            node.put("cores", device.cores());
            node.put("split", device.split());
            node.put("healthy", device.healthy());
        }
        return JSON.writerWithDefaultPrettyPrinter().writeValueAsString(root) + "\n";
    }

    /** An agent's status page, metrics and readiness URLs, and its doctor command. */
    private static void putPages(ObjectNode node, LabReport.AgentEndpoints agent) {
        node.put("statusPage", agent.statusPage());
        node.put("metrics", agent.metrics());
        node.put("readyz", agent.readyz());
        node.put("doctor", agent.doctor());
    }
}
