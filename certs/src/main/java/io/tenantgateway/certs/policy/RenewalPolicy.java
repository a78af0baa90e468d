package io.tenantgateway.certs.policy;

import static java.util.Objects.requireNonNull;

import java.security.cert.X509Certificate;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;

/**
 * When a certificate should be replaced. Pure: the decision depends only on the certificate, the renewal window
 * and the injected clock.
 *
 * @param renewBefore renew once less than this much validity is left
 * @param clock the time source
 */
public record RenewalPolicy(Duration renewBefore, Clock clock) {
    public static final Duration DEFAULT_RENEW_BEFORE = Duration.ofDays(30);

    public RenewalPolicy {
        requireNonNull(renewBefore, "renewBefore");
        requireNonNull(clock, "clock");
        if (renewBefore.isNegative()) {
            throw new IllegalArgumentException("renewBefore: " + renewBefore + " (expected: >= 0)");
        }
    }

    /** Where a certificate stands. */
    public record Status(Instant notAfter, Duration remaining, boolean expired, boolean needsRenewal,
            Duration renewBefore) {
        /** One line for humans, e.g. {@code needs renewal before 30d: 12d 4h left (until 2026-12-12T10:00:00Z)}. */
        public String describe() {
            if (expired) {
                return "expired at " + notAfter + " (" + format(remaining.negated()) + " ago)";
            }
            if (needsRenewal) {
                return "needs renewal before " + format(renewBefore) + ": " + format(remaining) + " left (until "
                        + notAfter + ")";
            }
            return "valid until " + notAfter + " (" + format(remaining) + " left)";
        }
    }

    public Status evaluate(X509Certificate certificate) {
        requireNonNull(certificate, "certificate");
        Instant notAfter = certificate.getNotAfter().toInstant();
        Duration remaining = Duration.between(clock.instant(), notAfter);
        boolean expired = remaining.isNegative() || remaining.isZero();
        boolean needsRenewal = expired || remaining.compareTo(renewBefore) < 0;
        return new Status(notAfter, remaining, expired, needsRenewal, renewBefore);
    }

    /** Formats a duration as {@code 12d 4h}, {@code 3h 10m}, {@code 45s}. */
    public static String format(Duration duration) {
        long seconds = Math.abs(duration.getSeconds());
        long days = seconds / 86_400;
        long hours = seconds % 86_400 / 3_600;
        long minutes = seconds % 3_600 / 60;
        if (days > 0) {
            return hours > 0 ? days + "d " + hours + "h" : days + "d";
        }
        if (hours > 0) {
            return minutes > 0 ? hours + "h " + minutes + "m" : hours + "h";
        }
        if (minutes > 0) {
            return minutes + "m";
        }
        return seconds + "s";
    }
}
