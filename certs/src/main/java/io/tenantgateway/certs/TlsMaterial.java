package io.tenantgateway.certs;

import java.util.Optional;

/**
 * Where live TLS endpoints get their identity and trust from. Key and trust managers built by {@link TlsContexts}
 * and {@link io.tenantgateway.certs.vertx.VertxTls} ask it on every handshake, so a new snapshot reaches new connections at once while
 * established connections keep the material they negotiated with.
 */
public interface TlsMaterial {

    /** The current material. Must be cheap and non-blocking: it is called on event loops during handshakes. */
    Snapshot current();

    /** Fixed material that never changes. */
    static TlsMaterial of(CertBundle identity, TrustBundle trust) {
        Snapshot snapshot = new Snapshot(0, identity, trust);
        return () -> snapshot;
    }

    /**
     * One consistent version of the material.
     *
     * @param generation increases with every successful reload; key managers use it to pair a chosen alias with
     *     the matching chain and key even while a reload happens mid-handshake
     * @param identityOrNull certificate chain and key presented to peers, or {@code null} when none is configured
     * @param trustOrNull CAs that peers are verified against, or {@code null} when none are configured
     */
    record Snapshot(long generation, CertBundle identityOrNull, TrustBundle trustOrNull) {
        public Optional<CertBundle> identity() {
            return Optional.ofNullable(identityOrNull);
        }

        public Optional<TrustBundle> trust() {
            return Optional.ofNullable(trustOrNull);
        }
    }
}
