package io.tenantgateway.agent.logging;

import static java.util.Objects.requireNonNull;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.encoder.Encoder;
import ch.qos.logback.core.rolling.FixedWindowRollingPolicy;
import ch.qos.logback.core.rolling.RollingFileAppender;
import ch.qos.logback.core.rolling.SizeBasedTriggeringPolicy;
import ch.qos.logback.core.util.FileSize;
import io.tenantgateway.common.config.ConfigException;
import java.util.Locale;
import java.util.Map;
import org.slf4j.LoggerFactory;

/**
 * Configures logback once at startup from klog's flags ({@code -v}, {@code --vmodule}, {@code --log-file},
 * {@code --log-file-max-size}, {@code --logtostderr}, {@code --alsologtostderr}, {@code --stderrthreshold},
 * {@code --skip-headers}) and {@code --log-format}: klog's text format ({@link KlogTextEncoder}) or component-base's
 * JSON ({@link KlogJsonEncoder}).
 *
 * <p>Verbosity (agent/DESIGN.md, "Logging"): upstream's messages carry upstream's V level
 * ({@link io.tenantgateway.common.logging.Verbosity}); our own INFO lines are V0, DEBUG V5 (per connection, per dial,
 * per admission), TRACE V9 (per packet). So upstream's default {@code -v=4} shows what upstream shows, and Kamaji's
 * {@code -v=8} adds our per-connection detail without per-packet lines. Libraries stay at WARN until 9, where gRPC
 * and Netty join at DEBUG.
 */
public final class LogSetup {
    /** Output format of the log. */
    public enum Format {
        TEXT, JSON;

        public static Format parse(String value) {
            return switch (value.toLowerCase(Locale.ROOT)) {
                case "text" -> TEXT;
                case "json" -> JSON;
                default -> throw new ConfigException("--log-format", value, "text or json");
            };
        }
    }

    /**
     * The logging flags, with klog's meaning.
     *
     * @param format text (klog) or JSON (component-base)
     * @param verbosity {@code -v}
     * @param vmodule {@code --vmodule}: {@code pattern=N,…}, empty for none
     * @param logFile {@code --log-file}, empty for none; written only with {@code --logtostderr=false}, as klog
     * @param logFileMaxBytes {@code --log-file-max-size} in bytes; 0 for no limit
     * @param logToStderr {@code --logtostderr}: everything to stderr, nothing to the file
     * @param alsoLogToStderr {@code --alsologtostderr}: with {@code --logtostderr=false}, everything to stderr too
     * @param stderrThreshold {@code --stderrthreshold} (0 INFO … 3 FATAL): with {@code --logtostderr=false}, lines at
     *     or above it go to stderr too
     * @param skipHeaders {@code --skip-headers}: text lines without the klog header
     */
    public record Options(Format format, int verbosity, String vmodule, String logFile, long logFileMaxBytes,
            boolean logToStderr, boolean alsoLogToStderr, int stderrThreshold, boolean skipHeaders) {
        /** klog's {@code --log-file-max-size} unit: 1 MB = 1024 × 1024 bytes. */
        public static final long MB = 1024L * 1024L;

        public Options {
            requireNonNull(format, "format");
            if (verbosity < 0) {
                throw new ConfigException("-v", verbosity, ">= 0");
            }
            vmodule = vmodule == null ? "" : vmodule;
            VerbosityFilter.parseVmodule(vmodule);
            logFile = logFile == null ? "" : logFile;
            if (logFileMaxBytes < 0) {
                throw new ConfigException("--log-file-max-size", logFileMaxBytes / MB, ">= 0");
            }
        }

        /** Everything to stderr, klog's defaults otherwise. */
        public static Options stderr(Format format, int verbosity) {
            return new Options(format, verbosity, "", "", 1800 * MB, true, false, 2, false);
        }

        /** Whether the file gets the log: {@code --log-file} set and {@code --logtostderr=false}. */
        public boolean writesFile() {
            return !logFile.isEmpty() && !logToStderr;
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

    /** {@link #configure(Options)} with everything on stderr. */
    public static void configure(Format format, int verbosity) {
        configure(Options.stderr(format, verbosity));
    }

    /** The klog encoder for a format, started in the current logback context. */
    public static Encoder<ILoggingEvent> encoder(Format format, boolean skipHeaders) {
        LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
        Encoder<ILoggingEvent> encoder;
        if (format == Format.JSON) {
            encoder = new KlogJsonEncoder();
        } else {
            KlogTextEncoder text = new KlogTextEncoder();
            text.setSkipHeaders(skipHeaders);
            encoder = text;
        }
        encoder.setContext(context);
        encoder.start();
        return encoder;
    }

    /** Replaces the logback configuration: stderr and/or the log file in the given format, levels from -v. */
    public static void configure(Options options) {
        requireNonNull(options, "options");
        int verbosity = options.verbosity();
        LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
        context.reset();

        Logger root = context.getLogger(Logger.ROOT_LOGGER_NAME);
        boolean file = options.writesFile();
        if (!file || options.alsoLogToStderr() || options.stderrThreshold() <= 3) {
            ConsoleAppender<ILoggingEvent> stderr = new ConsoleAppender<>();
            stderr.setContext(context);
            stderr.setName("stderr");
            stderr.setTarget("System.err");
            stderr.setEncoder(encoder(options.format(), options.skipHeaders()));
            if (file && !options.alsoLogToStderr()) {
                SeverityThreshold threshold = new SeverityThreshold(options.stderrThreshold());
                threshold.setContext(context);
                threshold.start();
                stderr.addFilter(threshold);
            }
            stderr.start();
            root.addAppender(stderr);
        }
        if (file) {
            root.addAppender(fileAppender(context, options));
        }
        root.setLevel(Level.INFO);
        // Every project event reaches the VerbosityFilter, which accepts or denies it by V level.
        context.getLogger("io.tenantgateway").setLevel(Level.TRACE);
        quietLibraries(context, verbosity);
        VerbosityFilter verbosityFilter = new VerbosityFilter(verbosity,
                VerbosityFilter.parseVmodule(options.vmodule()));
        verbosityFilter.setContext(context);
        verbosityFilter.start();
        context.addTurboFilter(verbosityFilter);
        if (verbosity < 9) {
            FirstListFailureFilter filter = new FirstListFailureFilter();
            filter.setContext(context);
            filter.start();
            context.addTurboFilter(filter);
        }
    }

    /** The libraries' levels: quiet below {@code -v=9}, DEBUG from there. */
    static void quietLibraries(LoggerContext context, int verbosity) {
        QUIET_LIBRARIES.forEach((name, quiet) -> context.getLogger(name)
                .setLevel(verbosity >= 9 ? Level.DEBUG : quiet));
    }

    /**
     * {@code --log-file}, appended to. With {@code --log-file-max-size} above 0, a file that reached the size is
     * renamed to {@code FILE.1} (replacing the previous one) and a new file started, so the log takes at most twice
     * the size. klog truncates the file instead; keeping one previous file loses less.
     */
    private static ch.qos.logback.core.FileAppender<ILoggingEvent> fileAppender(LoggerContext context,
            Options options) {
        ch.qos.logback.core.FileAppender<ILoggingEvent> appender;
        if (options.logFileMaxBytes() > 0) {
            RollingFileAppender<ILoggingEvent> rolling = new RollingFileAppender<>();
            rolling.setContext(context);
            rolling.setFile(options.logFile());
            FixedWindowRollingPolicy rolled = new FixedWindowRollingPolicy();
            rolled.setContext(context);
            rolled.setParent(rolling);
            rolled.setFileNamePattern(options.logFile().replace("%", "%%") + ".%i");
            rolled.setMinIndex(1);
            rolled.setMaxIndex(1);
            SizeBasedTriggeringPolicy<ILoggingEvent> trigger = new SizeBasedTriggeringPolicy<>();
            trigger.setContext(context);
            trigger.setMaxFileSize(new FileSize(options.logFileMaxBytes()));
            // Logback checks the size at most this often (default 60 s); the overshoot is what arrives meanwhile.
            trigger.setCheckIncrement(ch.qos.logback.core.util.Duration.buildByMilliseconds(250));
            rolling.setRollingPolicy(rolled);
            rolling.setTriggeringPolicy(trigger);
            rolled.start();
            trigger.start();
            appender = rolling;
        } else {
            appender = new ch.qos.logback.core.FileAppender<>();
        }
        appender.setContext(context);
        appender.setName("log-file");
        appender.setFile(options.logFile());
        appender.setAppend(true);
        appender.setEncoder(encoder(options.format(), options.skipHeaders()));
        appender.start();
        return appender;
    }

    /** klog's {@code --stderrthreshold}: passes events whose severity (INFO 0, WARNING 1, ERROR 2) reaches it. */
    static final class SeverityThreshold extends ch.qos.logback.core.filter.Filter<ILoggingEvent> {
        private final int threshold;

        SeverityThreshold(int threshold) {
            this.threshold = threshold;
        }

        @Override
        public ch.qos.logback.core.spi.FilterReply decide(ILoggingEvent event) {
            int severity = event.getLevel().isGreaterOrEqual(Level.ERROR) ? 2
                    : event.getLevel().isGreaterOrEqual(Level.WARN) ? 1 : 0;
            return severity >= threshold ? ch.qos.logback.core.spi.FilterReply.NEUTRAL
                    : ch.qos.logback.core.spi.FilterReply.DENY;
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
