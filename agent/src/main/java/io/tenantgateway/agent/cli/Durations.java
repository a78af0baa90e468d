package io.tenantgateway.agent.cli;

import io.tenantgateway.common.config.ConfigException;
import io.tenantgateway.common.time.GoDuration;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Durations in CLI flags: Go's syntax ({@link GoDuration}: {@code 30s}, {@code 1m30s}, {@code 500ms}) plus whole days
 * ({@code 90d}), which certificate lifetimes need and Go lacks.
 */
public final class Durations {
    private static final Pattern DAYS = Pattern.compile("(\\d+)d");

    private Durations() {
    }

    /**
     * @param name the flag, for the error message
     * @param value the text to parse
     * @throws ConfigException when {@code value} is not a duration
     */
    public static Duration parse(String name, String value) {
        Matcher days = DAYS.matcher(value == null ? "" : value.strip());
        try {
            if (days.matches()) {
                return Duration.ofDays(Long.parseLong(days.group(1)));
            }
            return GoDuration.parse(name, value);
        } catch (IllegalArgumentException | ArithmeticException e) { // too many days is a typo too
            throw new ConfigException(name, "'" + value + "'", "a duration such as 30s, 5m, 1h, 1m30s, 90d", e);
        }
    }

    /** Go's {@code Duration.String()} form: {@code 5m0s}, {@code 9s}, {@code 1h0m0s}. */
    public static String format(Duration duration) {
        return GoDuration.format(duration);
    }
}
