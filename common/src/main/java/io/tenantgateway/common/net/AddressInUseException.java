package io.tenantgateway.common.net;

import static java.util.Objects.requireNonNull;

/**
 * {@link WebhookServer#start()} could not bind because the address is in use. Typed so that the command that chose
 * the address ({@code run --webhook-listen}, {@code webhook --listen}) can name its flag in a one-line error.
 */
public final class AddressInUseException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    private final String address;

    /** @param what the listener, for the message ({@code webhook}) */
    public AddressInUseException(String what, String host, int port, Throwable cause) {
        super(requireNonNull(what, "what") + ": cannot listen on " + format(requireNonNull(host, "host"), port)
                + ": address in use", cause);
        this.address = format(host, port);
    }

    /** {@code host:port} as the listener used it. */
    public String address() {
        return address;
    }

    /**
     * Whether {@code failure} (or one of its causes) reports EADDRINUSE: NIO's BindException and Netty's native
     * IOException both carry the OS text. Not every BindException: "Cannot assign requested address" is a wrong
     * host, not a busy port.
     */
    public static boolean isAddressInUse(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            String message = t.getMessage();
            if (message != null && message.contains("Address already in use")) {
                return true;
            }
        }
        return false;
    }

    /** {@code host:port}, {@code [v6]:port} for IPv6 literals. */
    public static String format(String host, int port) {
        return HostPort.format(host, port);
    }
}
