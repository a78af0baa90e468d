package io.tenantgateway.tunnel.endpoint;

import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The connections of one server stream, by connectID and by dial random (for DIAL_CLS). Mutated only on the
 * stream's event loop; {@link #connections()} may be read from any thread (snapshots, leak checks).
 */
public final class ConnectionTable {
    private final Map<Long, EndpointConnection> byConnectId = new ConcurrentHashMap<>();
    private final Map<Long, EndpointConnection> byRandom = new HashMap<>();

    public void add(EndpointConnection connection) {
        byConnectId.put(connection.connectId(), connection);
        byRandom.put(connection.random(), connection);
    }

    public EndpointConnection get(long connectId) {
        return byConnectId.get(connectId);
    }

    public EndpointConnection byRandom(long random) {
        return byRandom.get(random);
    }

    public void remove(EndpointConnection connection) {
        byConnectId.remove(connection.connectId(), connection);
        byRandom.remove(connection.random(), connection);
    }

    public Collection<EndpointConnection> connections() {
        return byConnectId.values();
    }

    public int size() {
        return byConnectId.size();
    }
}
