package io.tenantgateway.certs.vertx;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.certs.ClientAuthMode;
import io.tenantgateway.certs.TlsContexts;
import io.tenantgateway.certs.TlsMaterial;
import io.vertx.core.http.ClientAuth;
import io.vertx.core.net.ClientOptionsBase;
import io.vertx.core.net.KeyCertOptions;
import io.vertx.core.net.NetServerOptions;
import io.vertx.core.net.TrustOptions;
import java.time.Clock;
import java.util.LinkedHashSet;
import javax.net.ssl.X509KeyManager;

/**
 * Vert.x TLS options backed by {@link TlsMaterial}, so Vert.x servers and clients pick up reloaded certificates on
 * the next handshake without {@code updateSSLOptions} or a restart.
 */
public final class VertxTls {
    private VertxTls() {
    }

    /**
     * Turns on TLS for a Vert.x server ({@code HttpServerOptions} is a {@code NetServerOptions}): TLS 1.3 and 1.2,
     * {@link TlsContexts#SERVER_CIPHER_SUITES} only.
     */
    public static <T extends NetServerOptions> T configureServer(T options, TlsMaterial material,
            ClientAuthMode clientAuth, Clock clock) {
        requireNonNull(options, "options");
        requireNonNull(clientAuth, "clientAuth");
        if (material.current().identityOrNull() == null) {
            throw new IllegalArgumentException("TLS server: no certificate and key (expected: a serving identity)");
        }
        options.setSsl(true);
        options.setKeyCertOptions(KeyCertOptions.wrap((X509KeyManager) TlsContexts.keyManager(material)));
        options.setEnabledSecureTransportProtocols(new LinkedHashSet<>(TlsContexts.PROTOCOLS));
        TlsContexts.SERVER_CIPHER_SUITES.forEach(options::addEnabledCipherSuite);
        if (clientAuth != ClientAuthMode.NONE) {
            if (material.current().trustOrNull() == null) {
                throw new IllegalArgumentException("TLS server: client authentication " + clientAuth
                        + " without a CA file (expected: the CA that signs client certificates)");
            }
            options.setTrustOptions(TrustOptions.wrap(TlsContexts.trustManager(material, clock)));
        }
        options.setClientAuth(switch (clientAuth) {
            case NONE -> ClientAuth.NONE;
            case OPTIONAL -> ClientAuth.REQUEST;
            case REQUIRE -> ClientAuth.REQUIRED;
        });
        return options;
    }

    /**
     * Turns on TLS for a Vert.x client ({@code HttpClientOptions}, {@code NetClientOptions}): server verified
     * against the material's CA bundle, client certificate presented when the material has one. Host-name
     * verification follows the options' {@code verifyHost} setting (on by default for HTTP clients).
     */
    public static <T extends ClientOptionsBase> T configureClient(T options, TlsMaterial material, Clock clock) {
        requireNonNull(options, "options");
        if (material.current().trustOrNull() == null) {
            throw new IllegalArgumentException("TLS client: no CA file (expected: the CA that signs the server's"
                    + " certificate)");
        }
        options.setSsl(true);
        options.setTrustOptions(TrustOptions.wrap(TlsContexts.trustManager(material, clock)));
        if (material.current().identityOrNull() != null) {
            options.setKeyCertOptions(KeyCertOptions.wrap((X509KeyManager) TlsContexts.keyManager(material)));
        }
        options.setEnabledSecureTransportProtocols(new LinkedHashSet<>(TlsContexts.PROTOCOLS));
        return options;
    }
}
