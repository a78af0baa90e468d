package io.tenantgateway.agent.logging;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.turbo.TurboFilter;
import ch.qos.logback.core.spi.FilterReply;
import io.tenantgateway.common.config.ConfigException;
import io.tenantgateway.common.logging.Verbosity;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;
import org.slf4j.Marker;

/**
 * klog's {@code -v} and {@code --vmodule} for this project's loggers: an info event at V level n (its
 * {@link Verbosity} marker, else DEBUG = V5, TRACE = V9, INFO = V0) passes when n is at most the logger's verbosity.
 * Warnings and errors always pass. Library loggers are left to their logback levels.
 *
 * <p>It runs before logback builds the event, so a filtered-out line costs a map look-up and no stack walk; the
 * caller's {@code File.java:line} is computed only for events that are written.
 */
final class VerbosityFilter extends TurboFilter {
    static final String PROJECT = "io.tenantgateway.";

    private final int verbosity;
    private final List<Module> modules;
    private final Map<String, Integer> byLogger = new ConcurrentHashMap<>();

    /** One {@code pattern=N} of {@code --vmodule}. */
    record Module(String pattern, Pattern glob, boolean qualified, int verbosity) {
    }

    VerbosityFilter(int verbosity, List<Module> modules) {
        this.verbosity = verbosity;
        this.modules = List.copyOf(modules);
    }

    /**
     * Parses {@code --vmodule}: {@code pattern=N,…}. A pattern without {@code .} or {@code /} is matched against the
     * file name without {@code .java} (the top-level class's simple name), as klog matches Go file names without
     * {@code .go}; one with {@code .} against the class name, one with {@code /} against the source path
     * ({@code io/tenantgateway/tunnel/client/TunnelClient}). {@code *} and {@code ?} are globs; the first match wins.
     */
    static List<Module> parseVmodule(String value) {
        List<Module> out = new ArrayList<>();
        if (value == null || value.isBlank()) {
            return out;
        }
        for (String part : value.split(",")) {
            String item = part.trim();
            if (item.isEmpty()) {
                continue;
            }
            int eq = item.lastIndexOf('=');
            if (eq <= 0) {
                throw new ConfigException("--vmodule", item, "pattern=N");
            }
            String pattern = item.substring(0, eq);
            int level;
            try {
                level = Integer.parseInt(item.substring(eq + 1).trim());
            } catch (NumberFormatException e) {
                throw new ConfigException("--vmodule", item, "pattern=N with N >= 0");
            }
            if (level < 0) {
                throw new ConfigException("--vmodule", item, "pattern=N with N >= 0");
            }
            if (pattern.endsWith(".java")) {
                pattern = pattern.substring(0, pattern.length() - ".java".length());
            }
            out.add(new Module(item, glob(pattern), pattern.contains(".") || pattern.contains("/"), level));
        }
        return out;
    }

    private static Pattern glob(String pattern) {
        StringBuilder regex = new StringBuilder();
        for (char c : pattern.toCharArray()) {
            switch (c) {
                case '*' -> regex.append(".*");
                case '?' -> regex.append('.');
                default -> regex.append(Pattern.quote(String.valueOf(c)));
            }
        }
        return Pattern.compile(regex.toString());
    }

    /** The verbosity for a logger name (a class name): the first matching {@code --vmodule} entry, else {@code -v}. */
    int verbosityFor(String loggerName) {
        if (modules.isEmpty()) {
            return verbosity;
        }
        return byLogger.computeIfAbsent(loggerName, name -> {
            String outer = name.indexOf('$') >= 0 ? name.substring(0, name.indexOf('$')) : name;
            String file = outer.substring(outer.lastIndexOf('.') + 1);
            for (Module module : modules) {
                String subject = !module.qualified() ? file
                        : module.pattern().contains("/") ? outer.replace('.', '/') : outer;
                if (module.glob().matcher(subject).matches()) {
                    return module.verbosity();
                }
            }
            return verbosity;
        });
    }

    @Override
    public FilterReply decide(Marker marker, Logger logger, Level level, String format, Object[] params,
            Throwable t) {
        String name = logger.getName();
        if (!name.startsWith(PROJECT)) {
            return FilterReply.NEUTRAL;
        }
        if (level.isGreaterOrEqual(Level.WARN)) {
            return FilterReply.ACCEPT;
        }
        int v = Verbosity.levelOf(marker);
        if (v < 0) {
            v = KlogRecord.verbosityOf(level);
        }
        return v <= verbosityFor(name) ? FilterReply.ACCEPT : FilterReply.DENY;
    }
}
