package io.tenantgateway.agent.ops;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.common.config.ConfigException;
import io.tenantgateway.common.net.HostPort;
import io.tenantgateway.tunnel.server.FrontendMode;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;

/**
 * What {@code tenant-gateway probe} does, validated.
 *
 * @param unixSocket the server's {@code --uds-name} socket; exclusive with {@code server}
 * @param server the server's TCP frontend; exclusive with {@code unixSocket}
 * @param mode the frontend protocol ({@code --mode})
 * @param plaintext TCP without TLS (loopback labs only)
 * @param target the address to dial through the tunnel
 * @param tlsServerName the name to verify the target's certificate against; present when a TLS handshake is wanted
 * @param webhookPath the path to POST a dry-run AdmissionReview to; present when wanted (implies TLS)
 * @param timeout limit of the server connect, TLS and HTTP stages each
 * @param dialTimeout the client-side dial backstop (kube-apiserver: 30 s)
 */
public record ProbeConfig(Optional<Path> unixSocket, Optional<HostPort> server, FrontendMode mode, boolean plaintext,
        HostPort target, Optional<String> tlsServerName, Optional<String> webhookPath, Duration timeout,
        Duration dialTimeout) {

    public ProbeConfig {
        requireNonNull(unixSocket, "unixSocket");
        requireNonNull(server, "server");
        requireNonNull(mode, "mode");
        requireNonNull(target, "target");
        requireNonNull(tlsServerName, "tlsServerName");
        requireNonNull(webhookPath, "webhookPath");
        requireNonNull(timeout, "timeout");
        requireNonNull(dialTimeout, "dialTimeout");
        if (unixSocket.isPresent() == server.isPresent()) {
            throw new ConfigException("--uds/--server", (unixSocket.isPresent() ? "both" : "neither") + " given",
                    "exactly one: the server's Unix socket or its TCP frontend");
        }
        if (plaintext && unixSocket.isPresent()) {
            throw ConfigException.of("--plaintext", "only for --server (a Unix socket is always plain)");
        }
        if (webhookPath.isPresent() && tlsServerName.isEmpty()) {
            throw new ConfigException("--webhook", "without a TLS server name",
                    "--tls-server-name; webhooks are HTTPS");
        }
        if (webhookPath.isPresent() && !webhookPath.get().startsWith("/")) {
            throw new ConfigException("--webhook", "'" + webhookPath.get() + "'", "a path such as /webhook");
        }
        if (timeout.isNegative() || timeout.isZero()) {
            throw new ConfigException("--timeout", timeout, "> 0");
        }
        if (dialTimeout.isNegative() || dialTimeout.isZero()) {
            throw new ConfigException("--dial-timeout", dialTimeout, "> 0");
        }
    }

    /** {@code unix:PATH} or {@code HOST:PORT}. */
    public String serverDescription() {
        return unixSocket.map(path -> "unix:" + path).orElseGet(() -> server.orElseThrow().toString());
    }

    public String modeFlag() {
        return mode == FrontendMode.GRPC ? "grpc" : "http-connect";
    }
}
