package io.tenantgateway.agent.ops;

import static java.util.Objects.requireNonNull;

import java.util.List;

/**
 * One line of the doctor's checklist.
 *
 * @param name short id ({@code ca-cert}, {@code tls}, …)
 * @param outcome pass, warn, fail or skip
 * @param detail what was found
 * @param fix what to do about it; {@code ""} when nothing needs doing
 * @param details further lines (e.g. each missing permission)
 */
public record DoctorCheck(String name, Outcome outcome, String detail, String fix, List<String> details) {
    public DoctorCheck {
        requireNonNull(name, "name");
        requireNonNull(outcome, "outcome");
        requireNonNull(detail, "detail");
        requireNonNull(fix, "fix");
        details = List.copyOf(details);
    }

    static DoctorCheck pass(String name, String detail) {
        return new DoctorCheck(name, Outcome.PASS, detail, "", List.of());
    }

    static DoctorCheck warn(String name, String detail, String fix) {
        return new DoctorCheck(name, Outcome.WARN, detail, fix, List.of());
    }

    static DoctorCheck fail(String name, String detail, String fix) {
        return new DoctorCheck(name, Outcome.FAIL, detail, fix, List.of());
    }

    static DoctorCheck skip(String name, String why) {
        return new DoctorCheck(name, Outcome.SKIP, why, "", List.of());
    }

    DoctorCheck withDetails(List<String> lines) {
        return new DoctorCheck(name, outcome, detail, fix, lines);
    }
}
