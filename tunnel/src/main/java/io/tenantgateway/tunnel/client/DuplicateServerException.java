package io.tenantgateway.tunnel.client;

/** A new connection reached a server this agent is already connected to (the load balancer picked it again). */
public final class DuplicateServerException extends Exception {
    private static final long serialVersionUID = 1L;
    private final String serverId;

    public DuplicateServerException(String serverId) {
        super("already connected to server " + serverId, null, false, false);
        this.serverId = serverId;
    }

    public String serverId() {
        return serverId;
    }
}
