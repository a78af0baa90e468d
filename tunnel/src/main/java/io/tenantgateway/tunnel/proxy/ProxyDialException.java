package io.tenantgateway.tunnel.proxy;

/** A dial through the tunnel failed; the message is the server's or agent's DIAL_RSP error or our timeout. */
public final class ProxyDialException extends Exception {
    private static final long serialVersionUID = 1L;

    public ProxyDialException(String message) {
        super(message, null, false, false);
    }

    public ProxyDialException(String message, Throwable cause) {
        super(message, cause);
    }
}
