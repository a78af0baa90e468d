package io.tenantgateway.common.time;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.common.config.ConfigException;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.time.Duration;

/**
 * The one implementation of Go's {@code time.Duration} text (parse and {@code String()}), which HAMi and Kubernetes flags use ({@code 5m}, {@code 1h30m},
 * {@code 250ms}) and which appears in scheduler messages ({@code "locked within 5m0s"}).
 */
public final class GoDuration {
    private static final long NANOS_PER_MICRO = 1_000L;
    private static final long NANOS_PER_MILLI = 1_000_000L;
    private static final long NANOS_PER_SECOND = 1_000_000_000L;

    private GoDuration() {
    }

    /** Formats like Go's {@code Duration.String()}: {@code 5m0s}, {@code 1h0m0s}, {@code 1.5s}, {@code 100ms}, {@code 0s}. */
    public static String format(Duration duration) {
        requireNonNull(duration, "duration");
        if (duration.isZero()) {
            return "0s";
        }
        BigDecimal nanos = BigDecimal.valueOf(duration.getSeconds()).multiply(BigDecimal.valueOf(NANOS_PER_SECOND))
                .add(BigDecimal.valueOf(duration.getNano()));
        String sign = nanos.signum() < 0 ? "-" : "";
        nanos = nanos.abs();
        if (nanos.compareTo(BigDecimal.valueOf(NANOS_PER_SECOND)) < 0) {
            if (nanos.compareTo(BigDecimal.valueOf(NANOS_PER_MICRO)) < 0) {
                return sign + nanos.toPlainString() + "ns";
            }
            if (nanos.compareTo(BigDecimal.valueOf(NANOS_PER_MILLI)) < 0) {
                return sign + trim(nanos.divide(BigDecimal.valueOf(NANOS_PER_MICRO))) + "µs";
            }
            return sign + trim(nanos.divide(BigDecimal.valueOf(NANOS_PER_MILLI))) + "ms";
        }
        BigDecimal[] minutesAndRest = nanos.divideAndRemainder(BigDecimal.valueOf(60 * NANOS_PER_SECOND));
        long totalMinutes = minutesAndRest[0].longValueExact();
        String seconds = trim(minutesAndRest[1].divide(BigDecimal.valueOf(NANOS_PER_SECOND))) + "s";
        if (totalMinutes == 0) {
            return sign + seconds;
        }
        long hours = totalMinutes / 60;
        long minutes = totalMinutes % 60;
        return sign + (hours > 0 ? hours + "h" : "") + minutes + "m" + seconds;
    }

    private static String trim(BigDecimal value) {
        BigDecimal stripped = value.stripTrailingZeros();
        return stripped.scale() < 0 ? stripped.setScale(0, RoundingMode.UNNECESSARY).toPlainString() : stripped.toPlainString();
    }

    /**
     * Parses Go duration text: an optional sign, then one or more decimal numbers each followed by a
     * unit ({@code ns}, {@code us}, {@code µs}, {@code ms}, {@code s}, {@code m}, {@code h}); {@code 0}
     * alone is allowed.
     *
     * @param flag the flag name for the error message, e.g. {@code --node-lock-timeout}
     * @throws ConfigException when {@code text} is not a duration (or one too long for {@link Duration})
     */
    public static Duration parse(String flag, String text) {
        requireNonNull(flag, "flag");
        if (text == null || text.isBlank()) {
            throw invalid(flag, text);
        }
        String s = text.trim();
        boolean negative = false;
        if (s.charAt(0) == '-' || s.charAt(0) == '+') {
            negative = s.charAt(0) == '-';
            s = s.substring(1);
        }
        if (s.equals("0")) {
            return Duration.ZERO;
        }
        if (s.isEmpty()) {
            throw invalid(flag, text);
        }
        BigDecimal totalNanos = BigDecimal.ZERO;
        int i = 0;
        while (i < s.length()) {
            int numberStart = i;
            while (i < s.length() && (Character.isDigit(s.charAt(i)) || s.charAt(i) == '.')) {
                i++;
            }
            int unitStart = i;
            while (i < s.length() && !Character.isDigit(s.charAt(i)) && s.charAt(i) != '.') {
                i++;
            }
            String number = s.substring(numberStart, unitStart);
            long unitNanos = unitNanos(s.substring(unitStart, i));
            if (number.isEmpty() || number.equals(".") || unitNanos < 0) {
                throw invalid(flag, text);
            }
            try {
                totalNanos = totalNanos.add(new BigDecimal(number).multiply(BigDecimal.valueOf(unitNanos)));
            } catch (NumberFormatException e) {
                throw invalid(flag, text);
            }
        }
        BigDecimal[] secondsAndNanos = totalNanos.setScale(0, RoundingMode.DOWN)
                .divideAndRemainder(BigDecimal.valueOf(NANOS_PER_SECOND));
        try {
            Duration duration = Duration.ofSeconds(secondsAndNanos[0].longValueExact(),
                    secondsAndNanos[1].longValueExact());
            return negative ? duration.negated() : duration;
        } catch (ArithmeticException e) { // beyond Duration's range: a typo, not a bug
            throw invalid(flag, text);
        }
    }

    private static long unitNanos(String unit) {
        switch (unit) {
            case "ns":
                return 1;
            case "us":
            case "µs":
            case "μs":
                return NANOS_PER_MICRO;
            case "ms":
                return NANOS_PER_MILLI;
            case "s":
                return NANOS_PER_SECOND;
            case "m":
                return 60 * NANOS_PER_SECOND;
            case "h":
                return 3600 * NANOS_PER_SECOND;
            default:
                return -1;
        }
    }

    private static ConfigException invalid(String flag, String text) {
        return new ConfigException(flag, text, "a duration such as 5m, 90s, 1h30m, 250ms");
    }
}
