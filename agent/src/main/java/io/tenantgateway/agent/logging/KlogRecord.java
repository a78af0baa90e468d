package io.tenantgateway.agent.logging;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import io.tenantgateway.common.logging.Verbosity;
import io.tenantgateway.common.text.PeerText;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Marker;
import org.slf4j.event.KeyValuePair;

/**
 * One logback event as klog sees it: severity, V level, message, key/value pairs, {@code File.java:line}.
 *
 * <p>Events logged with SLF4J's key/value API keep their pairs as they are. Older {@code log.info("text key={}
 * key2=\"{}\"", a, b)} events are split when the format is exactly a message followed by {@code key={}} (or
 * {@code key="{}"}) placeholders, so they also come out as {@code "text" key=a key2=b} and as JSON fields; any other
 * format stays one formatted message without pairs.
 */
record KlogRecord(char severity, int verbosity, String message, List<KeyValuePair> pairs, String caller,
        IThrowableProxy error) {
    private static final Pattern TAIL = Pattern.compile("(?:\\s+([A-Za-z_][A-Za-z0-9_.-]*)=(\"?)\\{}\\2)+[.;,]?$");
    private static final Pattern PAIR = Pattern.compile("([A-Za-z_][A-Za-z0-9_.-]*)=(\"?)\\{}\\2");
    private static final Map<String, List<String>> SPLITS = new java.util.concurrent.ConcurrentHashMap<>();
    private static final List<String> NO_SPLIT = List.of();
    /**
     * The most UTF-8 bytes of one field of a line (the message, {@code err}, each value, each stack line) before it
     * is cut with a note naming its size: a safety net under the bounds the callers apply to what peers supply.
     */
    static final int FIELD_LIMIT = 16 * 1024;

    static KlogRecord of(ILoggingEvent event) {
        Level level = event.getLevel();
        char severity = level.isGreaterOrEqual(Level.ERROR) ? 'E' : level.isGreaterOrEqual(Level.WARN) ? 'W' : 'I';
        int verbosity = verbosityOf(event);
        String message;
        List<KeyValuePair> pairs = new ArrayList<>();
        List<String> split = split(event.getMessage());
        Object[] args = event.getArgumentArray();
        if (split != NO_SPLIT && args != null && args.length == split.size() - 1) {
            message = split.get(0);
            for (int i = 1; i < split.size(); i++) {
                pairs.add(new KeyValuePair(split.get(i), args[i - 1]));
            }
        } else {
            message = event.getFormattedMessage();
        }
        if (event.getKeyValuePairs() != null) {
            pairs.addAll(event.getKeyValuePairs());
        }
        return new KlogRecord(severity, verbosity, message == null ? "" : message, pairs, caller(event),
                event.getThrowableProxy());
    }

    static int verbosityOf(ILoggingEvent event) {
        List<Marker> markers = event.getMarkerList();
        if (markers != null) {
            for (Marker marker : markers) {
                int v = Verbosity.levelOf(marker);
                if (v >= 0) {
                    return v;
                }
            }
        }
        return verbosityOf(event.getLevel());
    }

    /** The V level of an event without a V marker: DEBUG V5, TRACE V9, INFO and above V0. */
    static int verbosityOf(Level level) {
        return switch (level.toInt()) {
            case Level.TRACE_INT -> Verbosity.TRACE;
            case Level.DEBUG_INT -> Verbosity.DEBUG;
            default -> 0;
        };
    }

    /** [message, key1, key2, …] when the format is a message plus trailing key placeholders; else NO_SPLIT. */
    static List<String> split(String format) {
        if (format == null || format.indexOf('{') < 0) {
            return NO_SPLIT;
        }
        return SPLITS.computeIfAbsent(format, KlogRecord::parse);
    }

    private static List<String> parse(String format) {
        Matcher tail = TAIL.matcher(format);
        if (!tail.find()) {
            return NO_SPLIT;
        }
        String head = format.substring(0, tail.start());
        if (head.contains("{}") || head.isBlank()) {
            return NO_SPLIT;
        }
        List<String> out = new ArrayList<>();
        out.add(head.endsWith(":") ? head.substring(0, head.length() - 1) : head);
        Matcher pair = PAIR.matcher(format.substring(tail.start()));
        while (pair.find()) {
            out.add(pair.group(1));
        }
        return List.copyOf(out);
    }

    private static String caller(ILoggingEvent event) {
        StackTraceElement[] data = event.getCallerData();
        if (data == null || data.length == 0 || data[0].getFileName() == null) {
            return "???:1";
        }
        return data[0].getFileName() + ":" + Math.max(data[0].getLineNumber(), 0);
    }

    /** {@code text}, cut at {@link #FIELD_LIMIT} bytes ({@link PeerText#truncate}). */
    static String bounded(String text) {
        return PeerText.truncate(text, FIELD_LIMIT);
    }

    /** The error text klog prints as {@code err="…"}: the exception's class and message, and its causes'. */
    static String errorText(IThrowableProxy error) {
        StringBuilder out = new StringBuilder();
        for (IThrowableProxy t = error; t != null; t = t.getCause()) {
            if (!out.isEmpty()) {
                out.append(": ");
            }
            out.append(t.getClassName());
            if (t.getMessage() != null) {
                out.append(": ").append(t.getMessage());
            }
            if (t.getCause() == t) {
                break;
            }
        }
        return out.toString();
    }
}
