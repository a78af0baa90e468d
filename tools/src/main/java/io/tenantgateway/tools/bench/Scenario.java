package io.tenantgateway.tools.bench;

import io.tenantgateway.common.config.ConfigException;
import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/** The bench scenarios, in the order they run. */
public enum Scenario {
    /** One tunnel, a large transfer each direction; baseline: one direct loopback TCP connection. */
    BULK,
    /** Many tunnels at once, both directions; baseline: as many direct connections. */
    PARALLEL,
    /** Sequential dial + 1-byte echo + close; baseline: direct connect + echo + close. */
    DIAL,
    /** Idle open tunnels: agent heap and RSS per tunnel; baseline: bare Netty sockets in the same JVM. */
    SCALE,
    /** Tunnel B's throughput while tunnel A's target is stalled; baseline: B alone. */
    ISOLATION,
    /** AdmissionReview round trips at a fixed rate and at the maximum rate; baseline: straight to the webhook. */
    ADMISSION,
    /**
     * The agent as the image starts it (launcher, image JVM options), pure tunnel and all parts on: start time, RSS
     * idle and after two loads, CPU per GiB, NMT; baseline: a bare JVM running only a Netty server.
     */
    FOOTPRINT;

    public String cliName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** Parses the CLI spelling ({@code bulk}, {@code parallel}, ...). */
    public static Scenario parse(String value) {
        for (Scenario scenario : values()) {
            if (scenario.cliName().equals(value.strip().toLowerCase(Locale.ROOT))) {
                return scenario;
            }
        }
        throw new ConfigException("--scenario", value, "one of "
                + Arrays.stream(values()).map(Scenario::cliName).collect(Collectors.joining(", ")));
    }
}
