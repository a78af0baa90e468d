package io.tenantgateway.agent.logging;

import ch.qos.logback.classic.spi.ILoggingEvent;
import java.io.StringWriter;
import java.time.Instant;
import org.slf4j.event.KeyValuePair;
import tools.jackson.core.JsonGenerator;
import tools.jackson.core.ObjectWriteContext;
import tools.jackson.core.json.JsonFactory;

/**
 * component-base's JSON log format ({@code --logging-format=json}), one object per line:
 * {@code {"ts":1700000000000.123,"caller":"TunnelClientSet.java:370","msg":"Connect to server","v":2,
 * "serverID":"srv-1"}}. {@code ts} is milliseconds since the epoch with microseconds as the fraction; info lines
 * carry {@code v}; warnings and errors carry {@code level} ({@code "warn"}, {@code "error"}) instead, and {@code err}
 * when an exception came with them; then every key/value pair as a field (numbers and booleans as JSON numbers and
 * booleans, anything else as its text). Strings are escaped for a terminal ({@link TerminalSafeJson}) and cut at
 * {@link KlogRecord#FIELD_LIMIT} bytes.
 */
public final class KlogJsonEncoder extends LineEncoder {
    private final JsonFactory factory = TerminalSafeJson.factory();

    @Override
    String format(ILoggingEvent event) {
        KlogRecord record = KlogRecord.of(event);
        StringWriter out = new StringWriter(200);
        try (JsonGenerator json = factory.createGenerator(ObjectWriteContext.empty(), out)) {
            json.writeStartObject();
            json.writeName("ts");
            json.writeNumber(timestamp(event.getInstant()));
            json.writeStringProperty("caller", record.caller());
            json.writeStringProperty("msg", KlogRecord.bounded(record.message()));
            switch (record.severity()) {
                case 'E' -> json.writeStringProperty("level", "error");
                case 'W' -> json.writeStringProperty("level", "warn");
                default -> json.writeNumberProperty("v", record.verbosity());
            }
            if (record.error() != null) {
                json.writeStringProperty("err", KlogRecord.bounded(KlogRecord.errorText(record.error())));
            }
            for (KeyValuePair pair : record.pairs()) {
                json.writeName(pair.key);
                Object value = pair.value;
                if (value == null) {
                    json.writeNull();
                } else if (value instanceof Boolean b) {
                    json.writeBoolean(b);
                } else if (value instanceof Integer || value instanceof Long || value instanceof Short
                        || value instanceof Byte) {
                    json.writeNumber(((Number) value).longValue());
                } else if (value instanceof Double || value instanceof Float) {
                    double d = ((Number) value).doubleValue();
                    if (Double.isFinite(d)) {
                        json.writeNumber(d);
                    } else {
                        json.writeString(Double.toString(d));
                    }
                } else if (value instanceof Throwable t) {
                    json.writeString(KlogRecord.bounded(String.valueOf(t.getMessage() == null ? t : t.getMessage())));
                } else {
                    json.writeString(KlogRecord.bounded(String.valueOf(value)));
                }
            }
            json.writeEndObject();
        }
        return out.append('\n').toString();
    }

    /** Milliseconds since the epoch, microseconds as three decimals ({@code 1700000000000.123}). */
    static String timestamp(Instant instant) {
        long micros = instant.getNano() / 1000 % 1000;
        String fraction = Long.toString(micros);
        return instant.toEpochMilli() + "." + "000".substring(fraction.length()) + fraction;
    }
}
