package io.tenantgateway.agent.logging;

import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.encoder.EncoderBase;
import java.nio.charset.StandardCharsets;

/** An encoder that writes one UTF-8 line per event and nothing before or after: what klog's formats are. */
abstract class LineEncoder extends EncoderBase<ILoggingEvent> {
    private static final byte[] NO_BYTES = new byte[0];

    @Override
    public byte[] headerBytes() {
        return NO_BYTES;
    }

    @Override
    public byte[] footerBytes() {
        return NO_BYTES;
    }

    @Override
    public byte[] encode(ILoggingEvent event) {
        return format(event).getBytes(StandardCharsets.UTF_8);
    }

    /** The event's line, with its line feed. */
    abstract String format(ILoggingEvent event);
}
