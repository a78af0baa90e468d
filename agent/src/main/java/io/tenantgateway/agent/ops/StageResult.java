package io.tenantgateway.agent.ops;

import io.tenantgateway.agent.doctor.Outcome;

import static java.util.Objects.requireNonNull;

import java.util.List;

/**
 * How one probe stage went.
 *
 * @param stage which stage
 * @param outcome pass, fail or skip
 * @param millis how long it took (0 when skipped)
 * @param summary one line: what happened, or the error as reported
 * @param details further lines (certificate chain, patch operations)
 * @param explanation why it failed and what to do; {@code null} unless failed
 * @param exitCode the exit code this stage's failure gives (0 unless failed)
 */
public record StageResult(ProbeStage stage, Outcome outcome, double millis, String summary, List<String> details,
        ProbeExplanations.Explanation explanation, int exitCode) {
    public StageResult {
        requireNonNull(stage, "stage");
        requireNonNull(outcome, "outcome");
        requireNonNull(summary, "summary");
        details = List.copyOf(details);
    }

    static StageResult pass(ProbeStage stage, double millis, String summary, List<String> details) {
        return new StageResult(stage, Outcome.PASS, millis, summary, details, null, 0);
    }

    static StageResult fail(ProbeStage stage, double millis, String error, ProbeExplanations.Explanation explanation,
            int exitCode, List<String> details) {
        return new StageResult(stage, Outcome.FAIL, millis, error, details, explanation, exitCode);
    }

    static StageResult skip(ProbeStage stage, String reason) {
        return new StageResult(stage, Outcome.SKIP, 0, reason, List.of(), null, 0);
    }
}
