package io.tenantgateway.tunnel.client;

import io.grpc.Status;

/** A server connection attempt (or the connection) ended; carries the gRPC status for logs and metrics. */
public final class ConnectAttemptException extends Exception {
    private static final long serialVersionUID = 1L;
    private final transient Status status;

    public ConnectAttemptException(Status status, String message) {
        super(message, status.getCause(), false, false);
        this.status = status;
    }

    public Status status() {
        return status;
    }
}
