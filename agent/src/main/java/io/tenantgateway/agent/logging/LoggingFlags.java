package io.tenantgateway.agent.logging;

import io.tenantgateway.common.config.ConfigException;
import io.tenantgateway.common.time.GoDuration;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import picocli.CommandLine.Option;

/**
 * {@code run}'s logging flags: klog's ({@code -v}, {@code --vmodule}, {@code --logtostderr}, {@code --log-file}, ...,
 * with klog's meaning and defaults) and {@code --log-format}, as {@link LogSetup.Options}. The klog flags this agent
 * does not implement yet are accepted, checked with klog's syntax, and warn ({@link #warnings()}). A picocli mixin.
 */
public final class LoggingFlags {
    @Option(names = {"-v", "--v"}, defaultValue = "4", order = 1, paramLabel = "N",
            description = "klog verbosity: upstream's messages at upstream's levels (2 connect, 3 dial, 4 close);"
                    + " 5-8 add per-connection detail, 9+ per-packet lines and library debug. Default: ${DEFAULT-VALUE}.")
    int verbosity;

    @Option(names = "--logtostderr", arity = "0..1", defaultValue = "true", fallbackValue = "true", order = 1,
            paramLabel = "true|false",
            description = "klog: log to stderr only (true) or to --log-file (false). Default: ${DEFAULT-VALUE}.")
    boolean logToStderr;

    @Option(names = "--alsologtostderr", arity = "0..1", defaultValue = "false", fallbackValue = "true", order = 1,
            paramLabel = "true|false", description = "klog: with --logtostderr=false, log to stderr as well as to the"
                    + " file. Default: ${DEFAULT-VALUE}.")
    boolean alsoLogToStderr;

    @Option(names = "--log-file", defaultValue = "", order = 1, paramLabel = "FILE",
            description = "klog: log to this file (no effect when --logtostderr=true). Default: none.")
    String logFile;

    @Option(names = "--log-file-max-size", defaultValue = "1800", order = 1, paramLabel = "MB",
            description = "klog: start a new --log-file at this size, keeping the old one as FILE.1; 0: no limit."
                    + " Default: ${DEFAULT-VALUE}.")
    long logFileMaxSize;

    @Option(names = "--stderrthreshold", defaultValue = "2", order = 1, paramLabel = "SEVERITY",
            description = "klog (INFO, WARNING, ERROR, FATAL or 0-3): with --logtostderr=false, lines at or above"
                    + " this also go to stderr. Default: ${DEFAULT-VALUE} (ERROR).")
    String stderrThreshold;

    @Option(names = "--skip-headers", arity = "0..1", defaultValue = "false", fallbackValue = "true", order = 1,
            paramLabel = "true|false", description = "klog: leave the header (severity, time, pid, file:line) out of"
                    + " text lines. Default: ${DEFAULT-VALUE}.")
    boolean skipHeaders;

    @Option(names = "--vmodule", defaultValue = "", order = 1, paramLabel = "PATTERN=N,…",
            description = "klog: per-file verbosity, e.g. TunnelClient=9,Endpoint*=6 (class file names without"
                    + " .java; a pattern with '.' matches the class name). Default: none.")
    String vmodule;

    // --- klog flags accepted but not implemented yet (order 6: their own section of run's --help): a value other than
    // the default logs one WARN naming the flag (see warnings()); the default is what this agent does anyway. --------

    @Option(names = "--log-dir", defaultValue = "", order = 6, paramLabel = "DIR",
            description = "klog: log files per severity in this directory (use --log-file). Default: none.")
    String logDir;

    @Option(names = "--skip-log-headers", arity = "0..1", defaultValue = "false", fallbackValue = "true", order = 6,
            paramLabel = "true|false",
            description = "klog: no header when opening a log file. Default: ${DEFAULT-VALUE}.")
    boolean skipLogHeaders;

    @Option(names = "--add-dir-header", arity = "0..1", defaultValue = "false", fallbackValue = "true", order = 6,
            paramLabel = "true|false",
            description = "klog: the file's directory in the header. Default: ${DEFAULT-VALUE}.")
    boolean addDirHeader;

    @Option(names = "--one-output", arity = "0..1", defaultValue = "false", fallbackValue = "true", order = 6,
            paramLabel = "true|false",
            description = "klog: each line to its severity's file only. Default: ${DEFAULT-VALUE}.")
    boolean oneOutput;

    @Option(names = "--log-backtrace-at", defaultValue = ":0", order = 6, paramLabel = "FILE:LINE",
            description = "klog: a stack trace when logging at this line. Default: ${DEFAULT-VALUE}.")
    String logBacktraceAt;

    @Option(names = "--log-flush-frequency", defaultValue = "5s", order = 6, paramLabel = "DURATION",
            description = "klog: flush interval (this agent's logs are not buffered). Default: ${DEFAULT-VALUE}.")
    String logFlushFrequency;

    // --- tenant-gateway's (order 2) -------------------------------------------------------------------------------

    @Option(names = "--log-format", defaultValue = "text", order = 2, paramLabel = "text|json",
            description = "text (klog's lines) or json (component-base's shape). Default: ${DEFAULT-VALUE}.")
    String logFormat;

    /**
     * The logging flags, checked: also the klog flags accepted but not implemented, with klog's syntax, so that a
     * value the upstream agent would refuse is refused here too.
     */
    public LogSetup.Options options() {
        if (logFileMaxSize < 0) {
            throw new ConfigException("--log-file-max-size", logFileMaxSize, ">= 0, in MB");
        }
        int threshold = severity(stderrThreshold);
        if (!logBacktraceAt.isEmpty() && !logBacktraceAt.matches("[^:]*:[0-9]+")) {
            throw new ConfigException("--log-backtrace-at", logBacktraceAt, "FILE:LINE, e.g. client.go:210");
        }
        if (!vmodule.isEmpty() && !vmodule.matches("[^,=]+=[0-9]+(,[^,=]+=[0-9]+)*")) {
            throw new ConfigException("--vmodule", vmodule, "comma-separated PATTERN=N, e.g. client*=5,server=3");
        }
        if (logFlushFrequency().isNegative()) {
            throw new ConfigException("--log-flush-frequency", logFlushFrequency, ">= 0");
        }
        return new LogSetup.Options(LogSetup.Format.parse(logFormat), verbosity, vmodule, logFile,
                Math.multiplyExact(logFileMaxSize, LogSetup.Options.MB), logToStderr, alsoLogToStderr, threshold,
                skipHeaders);
    }

    /**
     * What {@code run} warns about at start for these flags, one line each: a klog flag not implemented yet set to
     * something other than klog's default, and a {@code --log-file} or {@code --logtostderr} that has no effect as
     * given.
     */
    public List<String> warnings() {
        List<String> out = new ArrayList<>();
        notImplemented(out, "--log-dir", logDir, logDir.isEmpty());
        notImplemented(out, "--skip-log-headers", skipLogHeaders, !skipLogHeaders);
        notImplemented(out, "--add-dir-header", addDirHeader, !addDirHeader);
        notImplemented(out, "--one-output", oneOutput, !oneOutput);
        notImplemented(out, "--log-backtrace-at", logBacktraceAt,
                logBacktraceAt.isEmpty() || logBacktraceAt.equals(":0"));
        notImplemented(out, "--log-flush-frequency", logFlushFrequency,
                logFlushFrequency().equals(Duration.ofSeconds(5)));
        if (!logFile.isEmpty() && logToStderr) {
            out.add("--log-file=" + logFile + ": no effect while --logtostderr=true (as klog); add"
                    + " --logtostderr=false to write it");
        }
        if (!logToStderr && logFile.isEmpty()) {
            out.add("--logtostderr=false without --log-file: logging to stderr (klog would write files in the"
                    + " temporary directory)");
        }
        return out;
    }

    private Duration logFlushFrequency() {
        return GoDuration.parse("--log-flush-frequency", logFlushFrequency);
    }

    private static void notImplemented(List<String> out, String flag, Object value, boolean klogDefault) {
        if (!klogDefault) {
            out.add(flag + "=" + value + ": accepted, not implemented yet (no effect)");
        }
    }

    /** klog's {@code --stderrthreshold}: a severity name or its number, as a number (INFO 0 .. FATAL 3). */
    static int severity(String value) {
        List<String> names = List.of("INFO", "WARNING", "ERROR", "FATAL");
        String text = value.strip().toUpperCase(Locale.ROOT);
        int index = names.indexOf(text);
        if (index >= 0) {
            return index;
        }
        if (text.matches("[0-3]")) {
            return Integer.parseInt(text);
        }
        throw new ConfigException("--stderrthreshold", value, "INFO, WARNING, ERROR, FATAL or 0-3");
    }
}
