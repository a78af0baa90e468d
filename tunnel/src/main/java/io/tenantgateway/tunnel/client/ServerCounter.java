package io.tenantgateway.tunnel.client;

/**
 * How many server replicas the agent should hold connections to. Called on the sync thread (never an event
 * loop) before each connection attempt; may read caches but should not block for long.
 */
@FunctionalInterface
public interface ServerCounter {
    /**
     * @param fromHeaders the {@code servercount} of the most recent successful connection (0 before the first)
     */
    int serverCount(int fromHeaders);

    /** Upstream's default: trust the servers' {@code servercount} response header. */
    ServerCounter FROM_HEADERS = fromHeaders -> fromHeaders;
}
