package io.tenantgateway.agent.logging;

import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.ThrowableProxyUtil;
import io.tenantgateway.common.text.PeerText;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneId;
import org.slf4j.event.KeyValuePair;

/**
 * klog's text format: {@code I1201 07:09:36.824702   29502 TunnelClientSet.java:370] "Connect to server"
 * serverID="srv-1"}. Header: severity letter, {@code MMDD hh:mm:ss.uuuuuu} in local time, pid right-aligned in 7,
 * {@code File.java:line]} of the call site (logback caller data). Then the quoted message and {@code key=value} pairs
 * with klog's quoting (see {@link #appendValue}). {@code --skip-headers} leaves the header out. Nothing in a line can
 * start another: the message and values are quoted, a multi-line value's lines and a stack's are escaped and
 * indented by a tab.
 */
public final class KlogTextEncoder extends LineEncoder {
    private static final long PID = ProcessHandle.current().pid();
    private final ZoneId zone = ZoneId.systemDefault();
    private boolean skipHeaders;

    public void setSkipHeaders(boolean skipHeaders) {
        this.skipHeaders = skipHeaders;
    }

    @Override
    String format(ILoggingEvent event) {
        KlogRecord record = KlogRecord.of(event);
        StringBuilder out = new StringBuilder(160);
        if (!skipHeaders) {
            header(out, record.severity(), event.getInstant(), record.caller());
        }
        appendQuoted(out, record.message());
        if (record.error() != null) {
            out.append(" err=");
            appendQuoted(out, KlogRecord.errorText(record.error()));
        }
        for (KeyValuePair pair : record.pairs()) {
            out.append(' ').append(pair.key).append('=');
            appendValue(out, pair.value);
        }
        out.append('\n');
        if (record.error() != null) {
            // Not klog's (Go errors carry no stack); kept because a Java stack is what finds the bug. Indented by a
            // tab, so a line-oriented reader tells it from log lines (none start with a tab).
            String stack = ThrowableProxyUtil.asString(record.error());
            // A message in the stack is the exception's, which may quote a peer's value: escaped like the rest.
            for (String line : stack.split("\n")) {
                if (!line.isEmpty()) {
                    int tabs = 0;
                    while (tabs < line.length() && line.charAt(tabs) == '\t') {
                        tabs++;
                    }
                    out.append("\t".repeat(Math.max(tabs, 1)));
                    PeerText.appendEscaped(out, KlogRecord.bounded(line.substring(tabs)));
                    out.append('\n');
                }
            }
        }
        return out.toString();
    }

    private void header(StringBuilder out, char severity, Instant instant, String caller) {
        LocalDateTime t = LocalDateTime.ofInstant(instant, zone);
        out.append(severity);
        two(out, t.getMonthValue());
        two(out, t.getDayOfMonth());
        out.append(' ');
        two(out, t.getHour());
        out.append(':');
        two(out, t.getMinute());
        out.append(':');
        two(out, t.getSecond());
        out.append('.');
        String micros = Integer.toString(t.getNano() / 1000);
        out.append("000000", 0, 6 - micros.length()).append(micros);
        out.append(' ');
        String pid = Long.toString(PID);
        for (int i = pid.length(); i < 7; i++) {
            out.append(' ');
        }
        out.append(pid).append(' ').append(caller).append("] ");
    }

    private static void two(StringBuilder out, int value) {
        out.append((char) ('0' + value / 10)).append((char) ('0' + value % 10));
    }

    /**
     * klog's value rules: numbers and booleans bare; strings, errors and everything else as {@code strconv.Quote}
     * of their text; a text with a line break as klog's multi-line {@code <…>} block, each line escaped and indented
     * by a tab; null as {@code <nil>}. A text longer than {@link KlogRecord#FIELD_LIMIT} bytes is cut there.
     */
    static void appendValue(StringBuilder out, Object value) {
        if (value == null) {
            out.append("<nil>");
        } else if (value instanceof Number || value instanceof Boolean) {
            out.append(value);
        } else {
            String text = value instanceof Throwable t ? String.valueOf(t.getMessage() == null ? t : t.getMessage())
                    : String.valueOf(value);
            if (text.indexOf('\n') >= 0) {
                // Each line escaped (a carriage return or a terminal escape in it cannot redraw or forge a line)
                // and indented by a tab, which no log line starts with.
                out.append("<\n");
                for (String line : KlogRecord.bounded(text).split("\n", -1)) {
                    out.append('\t');
                    PeerText.appendEscaped(out, line);
                    out.append('\n');
                }
                out.append(" >");
            } else {
                appendQuoted(out, text);
            }
        }
    }

    /** Go's {@code strconv.Quote} ({@link PeerText#appendQuoted}), at most {@link KlogRecord#FIELD_LIMIT} bytes. */
    static void appendQuoted(StringBuilder out, String text) {
        PeerText.appendQuoted(out, KlogRecord.bounded(text));
    }
}
