package io.tenantgateway.agent.cli;

import static java.util.Objects.requireNonNull;

/**
 * A listener could not bind because its address is in use: a user error (another process, or a second agent, has
 * the port), so the CLI prints {@code --health-server-port: 127.0.0.1:8093 is in use} and exits
 * {@link ExitCodes#USAGE}, without a stack trace.
 */
public final class PortInUseException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final String flag;
    private final String address;

    /**
     * @param flag the flag that chose the port ({@code --health-server-port}, {@code --webhook-listen})
     * @param host the bind address as the listener used it
     * @param port the port asked for
     */
    public PortInUseException(String flag, String host, int port, Throwable cause) {
        this(flag, format(host, port), cause);
    }

    /** @param address {@code host:port} as the listener used it */
    public PortInUseException(String flag, String address, Throwable cause) {
        super(requireNonNull(flag, "flag") + ": " + requireNonNull(address, "address") + " is in use", cause);
        this.flag = flag;
        this.address = address;
    }

    public String flag() {
        return flag;
    }

    /** {@code host:port} ({@code [v6]:port} for IPv6 literals). */
    public String address() {
        return address;
    }

    /** Whether {@code failure} (or one of its causes) is a bind that failed with "address in use". */
    public static boolean isAddressInUse(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            // java.net.BindException (NIO) or Netty's native IOException: both carry the OS text for EADDRINUSE.
            // Not every BindException: "Cannot assign requested address" is a wrong host, not a busy port.
            String message = t.getMessage();
            if (message != null && message.contains("Address already in use")) {
                return true;
            }
        }
        return false;
    }

    static String format(String host, int port) {
        return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
    }
}
