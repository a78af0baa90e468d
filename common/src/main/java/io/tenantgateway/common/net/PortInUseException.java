package io.tenantgateway.common.net;

import io.tenantgateway.common.config.ConfigException;

/**
 * A listener could not bind because its address is in use: a configuration error (another process, or a second agent,
 * has the port), so the CLI prints {@code --health-server-port: 127.0.0.1:8093 is in use} and exits 2, without a
 * stack trace.
 */
public final class PortInUseException extends ConfigException {
    private static final long serialVersionUID = 1L;

    private final String address;

    /**
     * @param flag the flag that chose the port ({@code --health-server-port}, {@code --webhook-listen})
     * @param host the bind address as the listener used it
     * @param port the port asked for
     */
    public PortInUseException(String flag, String host, int port, Throwable cause) {
        this(flag, AddressInUseException.format(host, port), cause);
    }

    /** @param address {@code host:port} as the listener used it ({@code [v6]:port} for IPv6 literals) */
    public PortInUseException(String flag, String address, Throwable cause) {
        super(flag, address + " is in use", cause, false);
        this.address = address;
    }

    /** {@code host:port} as the listener used it. */
    public String address() {
        return address;
    }
}
