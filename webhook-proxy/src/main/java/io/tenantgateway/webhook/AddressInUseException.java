package io.tenantgateway.webhook;

import static java.util.Objects.requireNonNull;

/**
 * {@link WebhookServer#start()} could not bind because the address is in use. Typed so that the command that chose
 * the address ({@code run --webhook-listen}, {@code webhook --listen}) can name its flag in a one-line error.
 */
public final class AddressInUseException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    private final String host;
    private final int port;

    public AddressInUseException(String host, int port, Throwable cause) {
        super("webhook: cannot listen on " + format(requireNonNull(host, "host"), port) + ": address in use", cause);
        this.host = host;
        this.port = port;
    }

    public String host() {
        return host;
    }

    public int port() {
        return port;
    }

    /** Whether {@code failure} (or one of its causes) reports EADDRINUSE (NIO's BindException or Netty's native). */
    static boolean isAddressInUse(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            String message = t.getMessage();
            if (message != null && message.contains("Address already in use")) {
                return true;
            }
        }
        return false;
    }

    private static String format(String host, int port) {
        return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
    }
}
