package io.tenantgateway.agent.logging;

import static java.util.Objects.requireNonNull;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.JsonEncoder;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.encoder.Encoder;
import java.util.Locale;
import java.util.Map;
import org.slf4j.LoggerFactory;

/**
 * Configures logback once at startup from the klog-style flags Kamaji passes ({@code -v=8 --logtostderr=true}) and
 * our {@code --log-format}. Logs go to stderr, as klog's do.
 *
 * <p>Verbosity mapping, chosen so Kamaji's fixed {@code -v=8} gives per-connection detail without per-packet
 * lines: 0–3 INFO (lifecycle, one line per state change), 4–8 DEBUG (per connection, per dial, per admission),
 * 9+ TRACE (per packet). Libraries stay at WARN until 9, where gRPC and Netty join at DEBUG.
 */
public final class LogSetup {
    /** Output format of the log. */
    public enum Format {
        TEXT, JSON;

        public static Format parse(String value) {
            return switch (value.toLowerCase(Locale.ROOT)) {
                case "text" -> TEXT;
                case "json" -> JSON;
                default -> throw new IllegalArgumentException("--log-format: " + value + " (expected: text or json)");
            };
        }
    }

    private static final Map<String, Level> QUIET_LIBRARIES = Map.of(
            "io.netty", Level.WARN, "io.grpc", Level.WARN, "io.vertx", Level.WARN, "io.fabric8", Level.WARN,
            "okhttp3", Level.WARN,
            // grpc-netty sets SO_KEEPALIVE on Unix-socket channels too (lab, probe); Netty's bootstrap warns about
            // the unsupported option on every connection. It logs nothing else we act on.
            "io.netty.bootstrap", Level.ERROR);

    private LogSetup() {
    }

    /** The level of this project's loggers for a klog {@code -v} value. */
    public static Level levelFor(int verbosity) {
        if (verbosity < 0) {
            throw new IllegalArgumentException("-v: " + verbosity + " (expected: >= 0)");
        }
        if (verbosity >= 9) {
            return Level.TRACE;
        }
        return verbosity >= 4 ? Level.DEBUG : Level.INFO;
    }

    /** Replaces the logback configuration: one stderr appender in the given format, levels from {@code -v}. */
    public static void configure(Format format, int verbosity) {
        requireNonNull(format, "format");
        Level level = levelFor(verbosity);
        LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
        context.reset();

        Encoder<ILoggingEvent> encoder;
        if (format == Format.JSON) {
            JsonEncoder json = new JsonEncoder();
            json.setWithSequenceNumber(false);
            json.setWithNanoseconds(false);
            json.setWithContext(false);
            json.setWithArguments(false);
            encoder = json;
        } else {
            PatternLayoutEncoder text = new PatternLayoutEncoder();
            text.setPattern("%d{yyyy-MM-dd'T'HH:mm:ss.SSSXXX} %-5level [%thread] %logger{36} - %msg%n");
            text.setCharset(java.nio.charset.StandardCharsets.UTF_8);
            encoder = text;
        }
        encoder.setContext(context);
        encoder.start();

        ConsoleAppender<ILoggingEvent> stderr = new ConsoleAppender<>();
        stderr.setContext(context);
        stderr.setName("stderr");
        stderr.setTarget("System.err");
        stderr.setEncoder(encoder);
        stderr.start();

        Logger root = context.getLogger(Logger.ROOT_LOGGER_NAME);
        root.addAppender(stderr);
        root.setLevel(Level.INFO);
        context.getLogger("io.tenantgateway").setLevel(level);
        QUIET_LIBRARIES.forEach((name, quiet) -> context.getLogger(name)
                .setLevel(verbosity >= 9 ? Level.DEBUG : quiet));
        if (verbosity < 9) {
            FirstListFailureFilter filter = new FirstListFailureFilter();
            filter.setContext(context);
            filter.start();
            context.addTurboFilter(filter);
        }
    }

    /**
     * Drops fabric8's ERROR with a stack trace for an informer whose first list failed ({@code listSyncAndWatch
     * failed for …, will stop}): the agent's background start already says it in one line (and in readiness), and
     * retries. Everything else the informers log stays.
     */
    static final class FirstListFailureFilter extends ch.qos.logback.classic.turbo.TurboFilter {
        static final String REFLECTOR = "io.fabric8.kubernetes.client.informers.impl.cache.Reflector";

        @Override
        public ch.qos.logback.core.spi.FilterReply decide(org.slf4j.Marker marker, Logger logger, Level level,
                String format, Object[] params, Throwable t) {
            // fabric8 8.0: "{} failed for {}, will stop" with "listSyncAndWatch" as the first argument.
            return REFLECTOR.equals(logger.getName()) && format != null && format.endsWith("will stop")
                    && params != null && params.length > 0 && "listSyncAndWatch".equals(String.valueOf(params[0]))
                    ? ch.qos.logback.core.spi.FilterReply.DENY : ch.qos.logback.core.spi.FilterReply.NEUTRAL;
        }
    }
}
