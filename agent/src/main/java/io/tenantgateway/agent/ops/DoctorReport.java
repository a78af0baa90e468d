package io.tenantgateway.agent.ops;

import io.tenantgateway.agent.doctor.DoctorCheck;
import io.tenantgateway.agent.doctor.Outcome;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.agent.cli.ExitCodes;
import io.tenantgateway.agent.logging.TerminalSafeJson;
import io.tenantgateway.common.text.PeerText;
import java.io.PrintWriter;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import tools.jackson.databind.SerializationFeature;
import tools.jackson.databind.json.JsonMapper;

/**
 * The doctor's checklist, as text or JSON. Details quote what the API and the node hold (a register annotation's
 * device ids and types, API errors): the text escapes control characters ({@link PeerText#escape}), the JSON writes
 * them as {@code \\u} escapes ({@link TerminalSafeJson}).
 *
 * @param heading what was checked (node, agent id, server)
 * @param checks the checks in order
 */
record DoctorReport(String heading, List<DoctorCheck> checks) {
    private static final JsonMapper JSON = JsonMapper.builder(TerminalSafeJson.factory())
            .enable(SerializationFeature.INDENT_OUTPUT).build();

    DoctorReport {
        requireNonNull(heading, "heading");
        checks = List.copyOf(checks);
    }

    long count(Outcome outcome) {
        return checks.stream().filter(c -> c.outcome() == outcome).count();
    }

    /** 0 when nothing failed (warnings allowed), 1 otherwise. */
    int exitCode() {
        return count(Outcome.FAIL) > 0 ? ExitCodes.FAILED : ExitCodes.OK;
    }

    void printText(PrintWriter out) {
        out.println(heading);
        int width = checks.stream().mapToInt(c -> c.name().length()).max().orElse(8);
        String indent = " ".repeat(6 + width + 2);
        for (DoctorCheck check : checks) {
            out.println(String.format(Locale.ROOT, "%-4s  %-" + width + "s  %s", check.outcome().name(), check.name(),
                    PeerText.escape(check.detail())));
            for (String line : check.details()) {
                out.println(indent + PeerText.escape(line));
            }
            if (!check.fix().isEmpty()) {
                out.println(indent + "fix: " + PeerText.escape(check.fix()));
            }
        }
        out.println(String.format(Locale.ROOT, "%d checks: %d passed, %d warnings, %d failed, %d skipped -> %s",
                checks.size(), count(Outcome.PASS), count(Outcome.WARN), count(Outcome.FAIL), count(Outcome.SKIP),
                exitCode() == 0 ? "OK" : "FAILED (exit " + exitCode() + ")"));
        out.flush();
    }

    void printJson(PrintWriter out) {
        Map<String, Object> root = new LinkedHashMap<>();
        root.put("ok", exitCode() == 0);
        root.put("exitCode", exitCode());
        root.put("heading", heading);
        root.put("checks", checks.stream().map(c -> {
            Map<String, Object> item = new LinkedHashMap<>();
            item.put("name", c.name());
            item.put("outcome", c.outcome().json());
            item.put("detail", c.detail());
            item.put("details", c.details());
            item.put("fix", c.fix());
            return item;
        }).toList());
        out.println(JSON.writeValueAsString(root));
        out.flush();
    }
}
