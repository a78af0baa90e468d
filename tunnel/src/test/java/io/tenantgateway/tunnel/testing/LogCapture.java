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

    /** Formatted messages containing {@code text}. */
    public List<String> lines(String text) {
        return events.stream().map(ILoggingEvent::getFormattedMessage).filter(m -> m.contains(text)).toList();
    }

    @Override
    public void close() {
        logger.detachAppender(this);
        stop();
    }
}
