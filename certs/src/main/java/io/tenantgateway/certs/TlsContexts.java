package io.tenantgateway.certs;

import static java.util.Objects.requireNonNull;

import io.netty.handler.ssl.ApplicationProtocolConfig;
import io.netty.handler.ssl.ApplicationProtocolConfig.Protocol;
import io.netty.handler.ssl.ApplicationProtocolConfig.SelectedListenerFailureBehavior;
import io.netty.handler.ssl.ApplicationProtocolConfig.SelectorFailureBehavior;
import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import java.time.Clock;
import java.util.List;
import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLException;
import javax.net.ssl.TrustManager;

/**
 * Netty TLS contexts backed by {@link TlsMaterial}: TLS 1.3 and 1.2 only, the JDK provider, and key/trust managers
 * that read the current material on every handshake (so reloads need no new context).
 *
 * <p>The {@code *Builder} methods return a configured {@link SslContextBuilder} for callers that must adjust it
 * further (grpc-netty's {@code GrpcSslContexts.configure} sets HTTP/2 ALPN and ciphers).
 */
public final class TlsContexts {
    /** Protocol versions every endpoint of this project speaks. */
    public static final List<String> PROTOCOLS = List.of("TLSv1.3", "TLSv1.2");

    /**
     * Cipher suites the servers accept: TLS 1.3's, and for TLS 1.2 only ECDHE key exchange with an AEAD cipher
     * (Mozilla's "intermediate" list without the DHE suites). No static RSA key exchange (no forward secrecy), no
     * CBC, no SHA-1 MACs. IANA names, as the JDK and BoringSSL take them.
     */
    public static final List<String> SERVER_CIPHER_SUITES = List.of(
            "TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256",
            "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
            "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
            "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256");

    private TlsContexts() {
    }

    /** A key manager presenting the material's current identity. */
    public static KeyManager keyManager(TlsMaterial material) {
        return new MaterialKeyManager(requireNonNull(material, "material"));
    }

    /** A trust manager checking peers against the material's current CA bundle (and server names when asked to). */
    public static TrustManager trustManager(TlsMaterial material, Clock clock) {
        return new MaterialTrustManager(requireNonNull(material, "material"), requireNonNull(clock, "clock"));
    }

    public static SslContextBuilder serverBuilder(TlsMaterial material, ClientAuthMode clientAuth, Clock clock) {
        requireNonNull(clientAuth, "clientAuth");
        if (material.current().identityOrNull() == null) {
            throw new IllegalArgumentException("TLS server: no certificate and key (expected: a serving identity)");
        }
        if (clientAuth != ClientAuthMode.NONE && material.current().trustOrNull() == null) {
            throw new IllegalArgumentException("TLS server: client authentication " + clientAuth
                    + " without a CA file (expected: the CA that signs client certificates)");
        }
        SslContextBuilder builder = SslContextBuilder.forServer(keyManager(material))
                .sslProvider(SslProvider.JDK)
                .protocols(PROTOCOLS)
                .clientAuth(switch (clientAuth) {
                    case NONE -> ClientAuth.NONE;
                    case OPTIONAL -> ClientAuth.OPTIONAL;
                    case REQUIRE -> ClientAuth.REQUIRE;
                });
        if (clientAuth != ClientAuthMode.NONE) {
            builder.trustManager(trustManager(material, clock));
        }
        return builder;
    }

    /**
     * A client builder: presents the material's identity when it has one, verifies the server against its CA
     * bundle, and checks the server's names against the host the connection was opened for.
     */
    public static SslContextBuilder clientBuilder(TlsMaterial material, Clock clock) {
        if (material.current().trustOrNull() == null) {
            throw new IllegalArgumentException("TLS client: no CA file (expected: the CA that signs the server's"
                    + " certificate)");
        }
        SslContextBuilder builder = SslContextBuilder.forClient()
                .sslProvider(SslProvider.JDK)
                .protocols(PROTOCOLS)
                .endpointIdentificationAlgorithm("HTTPS")
                .trustManager(trustManager(material, clock));
        if (material.current().identityOrNull() != null) {
            builder.keyManager(keyManager(material));
        }
        return builder;
    }

    /** Advertises the given ALPN protocols (for example {@code h2}, {@code http/1.1}). */
    public static SslContextBuilder alpn(SslContextBuilder builder, String... protocols) {
        return builder.applicationProtocolConfig(new ApplicationProtocolConfig(Protocol.ALPN,
                SelectorFailureBehavior.NO_ADVERTISE, SelectedListenerFailureBehavior.ACCEPT, protocols));
    }

    public static SslContext server(TlsMaterial material, ClientAuthMode clientAuth, Clock clock) {
        return build(serverBuilder(material, clientAuth, clock));
    }

    public static SslContext client(TlsMaterial material, Clock clock) {
        return build(clientBuilder(material, clock));
    }

    public static SslContext build(SslContextBuilder builder) {
        try {
            return builder.build();
        } catch (SSLException e) {
            throw new IllegalStateException("cannot build TLS context: " + e.getMessage(), e);
        }
    }
}
