package io.tenantgateway.tools.bench;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.common.config.ConfigException;
import java.nio.file.Path;

/**
 * A konnectivity-server the bench does not start itself (an operator's, or Go's upstream one). The bench's own
 * agent connects to its agent port, the bench's client dials through its frontend, and the targets stay on this
 * machine's loopback, so the agent must be the only one the server routes the bench's dials to (a dedicated
 * server, or {@code destHost} with {@code --agent-identifiers=ipv4=127.0.0.1}).
 *
 * @param host agent listener host, also the TLS server name ({@code --proxy-server-host})
 * @param port agent listener port ({@code --proxy-server-port})
 * @param caCert CA of the server certificate ({@code --ca-cert})
 * @param agentCert client certificate for mTLS, or {@code null}
 * @param agentKey its key, or {@code null}
 * @param tokenPath bearer token file for token auth, or {@code null}
 * @param agentIdentifiers {@code --agent-identifiers} of the bench agent ("" for none)
 * @param frontendUds the server's {@code --uds-name} socket, or {@code null}
 * @param frontendHost TCP frontend host (mTLS), or {@code null}
 * @param frontendPort TCP frontend port
 * @param frontendCert client certificate for the TCP frontend
 * @param frontendKey its key
 * @param frontendCa CA of the frontend's serving certificate
 */
public record ExternalServer(String host, int port, Path caCert, Path agentCert, Path agentKey, Path tokenPath,
        String agentIdentifiers, Path frontendUds, String frontendHost, int frontendPort, Path frontendCert,
        Path frontendKey, Path frontendCa) {

    public ExternalServer {
        requireNonNull(host, "host");
        if (port < 1 || port > 65535) {
            throw new ConfigException("--server", "port " + port, "1..65535");
        }
        if (caCert == null) {
            throw new ConfigException("--ca-cert", "not set",
                    "the CA of the server's agent listener certificate, since --server is set");
        }
        if ((agentCert == null) != (agentKey == null)) {
            throw new ConfigException("--agent-cert/--agent-key", "only one is set", "both or neither");
        }
        agentIdentifiers = agentIdentifiers == null ? "" : agentIdentifiers;
        if ((frontendUds == null) == (frontendHost == null)) {
            throw new ConfigException("frontend", frontendUds == null ? "none" : "both --frontend-uds and --frontend",
                    "exactly one of --frontend-uds PATH or --frontend HOST:PORT");
        }
        if (frontendHost != null && (frontendCert == null || frontendKey == null || frontendCa == null)) {
            throw new ConfigException("--frontend " + frontendHost + ":" + frontendPort,
                    "missing --frontend-cert, --frontend-key or --frontend-ca", "all three, the frontend is mTLS");
        }
    }

    /** For reports: where the server is, never the files' contents. */
    public String describe() {
        return host + ":" + port + " (frontend " + (frontendUds != null ? "unix:" + frontendUds
                : frontendHost + ":" + frontendPort) + ", " + (tokenPath != null ? "token" : agentCert != null
                ? "mTLS" : "TLS") + ")";
    }
}
