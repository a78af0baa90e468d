package io.tenantgateway.agent.ops;

import java.util.OptionalInt;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The ports a {@code run} started with {@code --health-server-port=0} or {@code --admin-server-port=0} got, read from
 * its log lines: klog text ({@code "health server listening" address="127.0.0.1:8134"}) or JSON
 * ({@code "address":"…"}); the port is what follows the address's last colon, so {@code [::1]:8134} reads too.
 *
 * <p>For whoever starts the agent as a child process (cds-training, the footprint bench, the integration tests) and
 * must not pick a free port first: another process can take it before the agent binds it.
 */
public final class ListeningLog {
    private static final Pattern HEALTH =
            Pattern.compile("\"health server listening\".*?\"?address\"?[=:]\"[^\"]*:(\\d+)\"");
    private static final Pattern ADMIN =
            Pattern.compile("\"admin server listening\".*?\"?address\"?[=:]\"[^\"]*:(\\d+)\"");

    private ListeningLog() {
    }

    /** The health port, if this is the health server's "listening" line. */
    public static OptionalInt healthPort(String line) {
        return port(HEALTH, line);
    }

    /** The admin port, if this is the admin server's "listening" line. */
    public static OptionalInt adminPort(String line) {
        return port(ADMIN, line);
    }

    private static OptionalInt port(Pattern pattern, String line) {
        Matcher matcher = pattern.matcher(line);
        return matcher.find() ? OptionalInt.of(Integer.parseInt(matcher.group(1))) : OptionalInt.empty();
    }
}
