package io.tenantgateway.agent.cli;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Parses Go-style durations as the upstream flags use them: {@code 1h}, {@code 30s}, {@code 1m30s}, {@code 500ms}, {@code 90d}. */
public final class Durations {
    private static final Pattern PART = Pattern.compile("(\\d+)(ms|d|h|m|s)");

    private Durations() {
    }

    /**
     * @param name the flag or key, for the error message
     * @param value the text to parse
     */
    public static Duration parse(String name, String value) {
        String text = value == null ? "" : value.trim();
        if (text.equals("0")) {
            return Duration.ZERO;
        }
        Matcher matcher = PART.matcher(text);
        Duration total = Duration.ZERO;
        int position = 0;
        while (matcher.find() && matcher.start() == position) {
            long amount = Long.parseLong(matcher.group(1));
            total = total.plus(switch (matcher.group(2)) {
                case "ms" -> Duration.ofMillis(amount);
                case "s" -> Duration.ofSeconds(amount);
                case "m" -> Duration.ofMinutes(amount);
                case "h" -> Duration.ofHours(amount);
                case "d" -> Duration.ofDays(amount);
                default -> throw new IllegalStateException(matcher.group(2));
            });
            position = matcher.end();
        }
        if (text.isEmpty() || position != text.length()) {
            throw new UserException(name + ": '" + value + "' (expected: a duration such as 30s, 5m, 1h, 1m30s, 90d)");
        }
        return total;
    }

    /** Formats like Go's {@code time.Duration.String()} for whole units: {@code 5m0s}, {@code 1h0m0s}, {@code 30s}. */
    public static String format(Duration duration) {
        long seconds = duration.getSeconds();
        long millis = duration.toMillisPart();
        if (seconds == 0 && millis > 0) {
            return millis + "ms";
        }
        long hours = seconds / 3600;
        long minutes = seconds % 3600 / 60;
        long secs = seconds % 60;
        if (hours > 0) {
            return hours + "h" + minutes + "m" + secs + "s";
        }
        if (minutes > 0) {
            return minutes + "m" + secs + "s";
        }
        return secs + "s";
    }
}
