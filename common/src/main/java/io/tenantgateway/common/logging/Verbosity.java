package io.tenantgateway.common.logging;

import org.slf4j.Logger;
import org.slf4j.Marker;
import org.slf4j.MarkerFactory;
import org.slf4j.spi.LoggingEventBuilder;
import org.slf4j.spi.NOPLoggingEventBuilder;

/**
 * klog's {@code V(n)} on SLF4J: an info event carrying a marker named {@code V<n>}. The agent's log setup filters it
 * against {@code -v} / {@code --vmodule} and prints it in klog's format; without that setup it is a plain INFO.
 *
 * <pre>{@code Verbosity.v(log, 2).addKeyValue("serverID", id).log("Connect to server");}</pre>
 *
 * <p>Events without a marker keep their level's meaning: INFO is V0, DEBUG is V5, TRACE is V9 (see
 * {@link #of(org.slf4j.event.Level)}). Warnings and errors are never V-gated, as in klog.
 */
public final class Verbosity {
    /** The highest level with its own marker; higher ones are clamped. */
    public static final int MAX = 10;
    /** The verbosity of a DEBUG event without a marker: shown from {@code -v=5}, so upstream's default 4 hides it. */
    public static final int DEBUG = 5;
    /** The verbosity of a TRACE event without a marker (per packet). */
    public static final int TRACE = 9;

    private static final String PREFIX = "V";
    private static final Marker[] MARKERS = new Marker[MAX + 1];

    static {
        for (int i = 0; i <= MAX; i++) {
            MARKERS[i] = MarkerFactory.getMarker(PREFIX + i);
        }
    }

    private Verbosity() {
    }

    /** The marker for {@code V(level)}. */
    public static Marker marker(int level) {
        if (level < 0) {
            throw new IllegalArgumentException("level: " + level + " (expected: >= 0)");
        }
        return MARKERS[Math.min(level, MAX)];
    }

    /** An INFO event builder at {@code V(level)}, or a no-op one when that level is filtered out. */
    public static LoggingEventBuilder v(Logger log, int level) {
        Marker marker = marker(level);
        return log.isInfoEnabled(marker) ? log.atInfo().addMarker(marker) : NOPLoggingEventBuilder.singleton();
    }

    /** The V level a marker names, or -1 when it is not one of ours. */
    public static int levelOf(Marker marker) {
        if (marker == null) {
            return -1;
        }
        String name = marker.getName();
        if (name.length() < 2 || name.length() > 3 || !name.startsWith(PREFIX)) {
            return -1;
        }
        int level = 0;
        for (int i = 1; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c < '0' || c > '9') {
                return -1;
            }
            level = level * 10 + (c - '0');
        }
        return level;
    }

    /** The V level of an event at {@code level} without a marker (INFO and above: 0). */
    public static int of(org.slf4j.event.Level level) {
        return switch (level) {
            case TRACE -> TRACE;
            case DEBUG -> DEBUG;
            default -> 0;
        };
    }
}
