package io.tenantgateway.tunnel.testing;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.slf4j.LoggerFactory;

/** Collects the formatted log lines of one logger (logback) while open. */
public final class LogCapture extends AppenderBase<ILoggingEvent> implements AutoCloseable {
    private final Logger logger;
    private final List<ILoggingEvent> events = new CopyOnWriteArrayList<>();

    private LogCapture(Class<?> source) {
        this.logger = (Logger) LoggerFactory.getLogger(source);
        setContext(logger.getLoggerContext());
        start();
        logger.addAppender(this);
    }

    public static LogCapture of(Class<?> source) {
        return new LogCapture(source);
    }

    @Override
    protected void append(ILoggingEvent event) {
        events.add(event);
    }

    /**
     * Messages containing {@code text}, each followed by its SLF4J key/value pairs the way the agent's klog format
     * writes them ({@code key="text"}, numbers and booleans bare).
     */
    public List<String> lines(String text) {
        return events.stream().map(LogCapture::render).filter(m -> m.contains(text)).toList();
    }

    private static String render(ILoggingEvent event) {
        StringBuilder out = new StringBuilder(event.getFormattedMessage());
        if (event.getKeyValuePairs() != null) {
            for (org.slf4j.event.KeyValuePair pair : event.getKeyValuePairs()) {
                out.append(' ').append(pair.key).append('=');
                if (pair.value instanceof Number || pair.value instanceof Boolean) {
                    out.append(pair.value);
                } else {
                    out.append('"').append(pair.value).append('"');
                }
            }
        }
        return out.toString();
    }

    @Override
    public void close() {
        logger.detachAppender(this);
        stop();
    }
}
