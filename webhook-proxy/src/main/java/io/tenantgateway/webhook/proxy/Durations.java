package io.tenantgateway.webhook.proxy;

import java.time.Duration;

/** Go-style duration text ({@code 9s}, {@code 500ms}, {@code 1m30s}) for messages users compare with flags. */
public final class Durations {
    private Durations() {
    }

    public static String format(Duration duration) {
        if (duration.isNegative()) {
            return "-" + format(duration.negated());
        }
        long millis = duration.toMillis();
        if (millis < 1000) {
            return millis + "ms";
        }
        long minutes = duration.toMinutes();
        long seconds = duration.toSecondsPart();
        long restMillis = duration.toMillisPart();
        String secondsText = restMillis == 0 ? seconds + "s"
                : String.format(java.util.Locale.ROOT, "%d.%03ds", seconds, restMillis).replaceAll("0+s$", "s");
        return minutes > 0 ? minutes + "m" + secondsText : secondsText;
    }
}
