package io.tenantgateway.agent.doctor;

import static java.util.Objects.requireNonNull;

import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
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

    public static DoctorCheck pass(String name, String detail) {
        return new DoctorCheck(name, Outcome.PASS, detail, "", List.of());
    }

    public static DoctorCheck warn(String name, String detail, String fix) {
        return new DoctorCheck(name, Outcome.WARN, detail, fix, List.of());
    }

    public static DoctorCheck fail(String name, String detail, String fix) {
        return new DoctorCheck(name, Outcome.FAIL, detail, fix, List.of());
    }

    public static DoctorCheck skip(String name, String why) {
        return new DoctorCheck(name, Outcome.SKIP, why, "", List.of());
    }

    public DoctorCheck withDetails(List<String> lines) {
        return new DoctorCheck(name, outcome, detail, fix, lines);
    }

    /**
     * A certificate file's validity at {@code now}: expired, not valid yet, or in the last tenth of its life (a
     * renewal that is stuck) is said so with {@code renewFix}; its names and validity are the details.
     */
    public static DoctorCheck certificateValidity(String name, Path file, X509Certificate leaf, String renewFix,
            Instant now) {
        Instant notAfter = leaf.getNotAfter().toInstant();
        String subject = leaf.getSubjectX500Principal().getName();
        List<String> lines = List.of("names: " + io.tenantgateway.certs.SubjectNames.of(leaf), "valid "
                + leaf.getNotBefore().toInstant() + " .. " + notAfter);
        if (!now.isBefore(notAfter)) {
            return DoctorCheck.fail(name, file + ": certificate '" + subject + "' expired at " + notAfter, renewFix)
                    .withDetails(lines);
        }
        if (now.isBefore(leaf.getNotBefore().toInstant())) {
            return DoctorCheck.fail(name, file + ": certificate '" + subject + "' is not valid before "
                    + leaf.getNotBefore().toInstant(), "check this node's clock (NTP)").withDetails(lines);
        }
        // Automation renews long before the last tenth of a certificate's life: reaching it means renewal is stuck.
        Duration lifetime = Duration.between(leaf.getNotBefore().toInstant(), notAfter);
        if (Duration.between(now, notAfter).compareTo(lifetime.dividedBy(10)) < 0) {
            return DoctorCheck.warn(name, file + ": certificate '" + subject + "' expires at " + notAfter
                    + " (in " + human(Duration.between(now, notAfter)) + ")", renewFix).withDetails(lines);
        }
        return DoctorCheck.pass(name, file + ": '" + subject + "', key matches, valid until " + notAfter)
                .withDetails(lines);
    }

    /** A duration as a person reads it: {@code 90s}, {@code 15m}, {@code 3h20m}, {@code 12d}. */
    public static String human(Duration duration) {
        long seconds = Math.abs(duration.getSeconds());
        if (seconds < 120) {
            return seconds + "s";
        }
        if (seconds < 2 * 3600) {
            return seconds / 60 + "m";
        }
        if (seconds < 2 * 86400) {
            return seconds / 3600 + "h" + (seconds % 3600) / 60 + "m";
        }
        return seconds / 86400 + "d";
    }
}
