package io.tenantgateway.agent.ops;

import io.tenantgateway.agent.doctor.Outcome;

import static java.util.Objects.requireNonNull;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import tools.jackson.databind.SerializationFeature;
import tools.jackson.databind.json.JsonMapper;

/**
 * What {@code probe} found: every stage with its timing, and (when reached) the target's certificate chain and the
 * webhook's answer. Renders as text for people or JSON for machines.
 */
record ProbeReport(ProbeConfig config, List<StageResult> stages, Optional<TlsHandshakes.PeerSession> session,
        Optional<ChainCheck.Result> chain, Optional<AdmissionProbe.Answer> admission) {
    private static final JsonMapper JSON = JsonMapper.builder().enable(SerializationFeature.INDENT_OUTPUT).build();

    public ProbeReport {
        requireNonNull(config, "config");
        stages = List.copyOf(stages);
        requireNonNull(session, "session");
        requireNonNull(chain, "chain");
        requireNonNull(admission, "admission");
    }

    public Optional<StageResult> failed() {
        return stages.stream().filter(s -> s.outcome() == Outcome.FAIL).findFirst();
    }

    /** 0, or the exit code of the stage that failed (see {@link ProbeStage}). */
    public int exitCode() {
        return failed().map(StageResult::exitCode).orElse(0);
    }

    public double totalMillis() {
        return Math.round(stages.stream().mapToDouble(StageResult::millis).sum() * 10) / 10.0;
    }

    public void printText(PrintWriter out) {
        out.println("probe " + config.modeFlag() + " " + config.serverDescription() + " -> " + config.target()
                + config.tlsServerName().map(name -> ", TLS name " + name).orElse("")
                + config.webhookPath().map(path -> ", POST " + path).orElse(""));
        for (StageResult stage : stages) {
            String time = stage.outcome() == Outcome.SKIP ? "" : String.format(Locale.ROOT, "%.1f ms", stage.millis());
            out.println(String.format(Locale.ROOT, "%-4s  %-7s  %9s  %s", stage.outcome().name(),
                    stage.stage().label(), time, stage.summary()));
            String indent = " ".repeat(27);
            for (String line : stage.details()) {
                out.println(indent + line);
            }
            if (stage.explanation() != null) {
                out.println(indent + "why:  " + stage.explanation().why());
                out.println(indent + "next: " + stage.explanation().next());
            }
        }
        Optional<StageResult> failed = failed();
        if (failed.isPresent()) {
            out.println("FAILED at " + failed.get().stage().label() + " (exit " + exitCode() + ")");
        } else {
            out.println(String.format(Locale.ROOT, "OK: every stage asked for passed in %.1f ms", totalMillis()));
        }
        out.flush();
    }

    public void printJson(PrintWriter out) {
        out.println(JSON.writeValueAsString(toJson()));
        out.flush();
    }

    /** The JSON document (also what tests read). */
    public Map<String, Object> toJson() {
        Map<String, Object> root = new LinkedHashMap<>();
        root.put("ok", failed().isEmpty());
        root.put("exitCode", exitCode());
        root.put("failedStage", failed().map(s -> s.stage().label()).orElse(null));
        root.put("mode", config.modeFlag());
        root.put("server", config.serverDescription());
        root.put("target", config.target().toString());
        root.put("tlsServerName", config.tlsServerName().orElse(null));
        root.put("totalMillis", totalMillis());
        List<Map<String, Object>> stageList = new ArrayList<>();
        for (StageResult stage : stages) {
            Map<String, Object> item = new LinkedHashMap<>();
            item.put("stage", stage.stage().label());
            item.put("outcome", stage.outcome().json());
            item.put("millis", stage.millis());
            item.put("summary", stage.summary());
            item.put("details", stage.details());
            if (stage.explanation() != null) {
                item.put("why", stage.explanation().why());
                item.put("next", stage.explanation().next());
                item.put("exitCode", stage.exitCode());
            }
            stageList.add(item);
        }
        root.put("stages", stageList);
        chain.ifPresent(result -> {
            Map<String, Object> tls = new LinkedHashMap<>();
            session.ifPresent(s -> {
                tls.put("protocol", s.protocol());
                tls.put("cipherSuite", s.cipherSuite());
            });
            tls.put("name", result.name());
            tls.put("nameMatches", result.nameMatches());
            tls.put("trustChecked", result.trustChecked());
            tls.put("chain", result.chain().stream().map(c -> {
                Map<String, Object> certificate = new LinkedHashMap<>();
                certificate.put("subject", c.subject());
                certificate.put("issuer", c.issuer());
                certificate.put("notBefore", c.notBefore().toString());
                certificate.put("notAfter", c.notAfter().toString());
                certificate.put("names", c.names());
                return certificate;
            }).toList());
            tls.put("problems", result.findings().stream().map(f -> Map.of("problem",
                    f.problem().name().toLowerCase(Locale.ROOT), "message", f.message())).toList());
            root.put("tls", tls);
        });
        admission.ifPresent(answer -> {
            Map<String, Object> review = new LinkedHashMap<>();
            review.put("uid", answer.uid());
            review.put("allowed", answer.allowed());
            review.put("code", answer.code());
            review.put("message", answer.message());
            review.put("patchType", answer.patchType());
            review.put("patch", answer.patch().stream().map(op -> JSON.readTree(op)).toList());
            review.put("warnings", answer.warnings());
            root.put("admission", review);
        });
        return root;
    }
}
