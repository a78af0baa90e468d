package io.tenantgateway.tunnel.transport;

import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.SslProvider;

/**
 * Which TLS implementation the tunnel's gRPC connections use: BoringSSL (netty-tcnative) where it loads, else the
 * JDK's.
 *
 * <p>Why not simply the JDK: its AES-GCM runs as plain Java until C2 has compiled it (the GHASH and AES intrinsics
 * are C2-only), and short commands (lab, probe, doctor) run C1 only to start fast. Measured on the 2-core bench
 * machine: JDK AES-GCM ~12 MB/s per core under C1, ~1.2 GB/s under C2; BoringSSL is fast under either, and encrypts
 * from and into direct buffers without the heap copies Netty's JDK path needs. Both providers take the same
 * key/trust managers ({@code io.tenantgateway.certs.TlsContexts}), so reloads and name checks behave the same.
 *
 * <p>Netty's {@code OpenSsl} initialises here, once, with {@link JdkTlsVersionProbe} answering its question about the
 * JDK's TLS versions (so the JDK's TLS handshake classes stay unloaded on BoringSSL).
 */
public final class TlsProviders {
    private TlsProviders() {
    }

    /** {@link SslProvider#OPENSSL} when netty-tcnative loaded on this platform, else {@link SslProvider#JDK}. */
    public static SslProvider preferred() {
        return OpenSslCheck.AVAILABLE ? SslProvider.OPENSSL : SslProvider.JDK;
    }

    /** Initialised at the first {@link #preferred}: the JVM runs it once, other callers wait for it. */
    private static final class OpenSslCheck {
        static final boolean AVAILABLE = JdkTlsVersionProbe.answering(OpenSsl::isAvailable);
    }
}
