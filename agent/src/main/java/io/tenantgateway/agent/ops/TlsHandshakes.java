package io.tenantgateway.agent.ops;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslProvider;
import io.netty.handler.ssl.util.InsecureTrustManagerFactory;
import io.tenantgateway.certs.CertBundle;
import io.tenantgateway.certs.TlsContexts;
import io.tenantgateway.certs.TlsMaterial;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;

/**
 * TLS handshakes that report what the peer presented instead of only failing.
 *
 * <p>The context built here accepts any server chain ON PURPOSE: a diagnostic must show the chain it got and say
 * which check fails (expired, wrong CA, wrong name), which a verifying handshake cannot do — it stops at the first
 * problem with a generic alert. The caller judges the chain with {@link ChainCheck} right after the handshake and
 * sends nothing over the connection unless that verdict is clean.
 */
final class TlsHandshakes {
    private TlsHandshakes() {
    }

    /**
     * What the handshake negotiated and what the peer presented.
     *
     * @param protocol e.g. {@code TLSv1.3}
     * @param cipherSuite the negotiated suite
     * @param applicationProtocol the ALPN result, {@code ""} when none
     * @param chain the peer's certificates, leaf first
     */
    record PeerSession(String protocol, String cipherSuite, String applicationProtocol,
            List<X509Certificate> chain) {
        PeerSession {
            chain = List.copyOf(chain);
        }
    }

    /**
     * A client context presenting {@code identity} (when not {@code null}) and accepting every server chain (see the
     * class comment), offering the given ALPN protocols.
     */
    static SslContext inspectingClient(CertBundle identity, List<String> alpn) {
        SslContextBuilder builder = SslContextBuilder.forClient()
                .sslProvider(SslProvider.JDK)
                .protocols(TlsContexts.PROTOCOLS)
                .trustManager(InsecureTrustManagerFactory.INSTANCE);
        if (identity != null) {
            builder.keyManager(TlsContexts.keyManager(TlsMaterial.of(identity, null)));
        }
        if (!alpn.isEmpty()) {
            TlsContexts.alpn(builder, alpn.toArray(String[]::new));
        }
        return TlsContexts.build(builder);
    }

    /**
     * Adds a client {@link SslHandler} at the end of {@code channel}'s pipeline and completes with the session once
     * the handshake is done (or fails with the handshake's error).
     *
     * @param serverName the name sent as SNI (ignored by the JDK for IP literals)
     * @param after handlers added behind the {@code SslHandler} in the same step, so that they see whatever the
     *     peer sends right after the handshake (a TLS 1.3 server's alert, for one)
     */
    static CompletableFuture<PeerSession> handshake(Channel channel, SslContext context, String serverName, int port,
            Duration timeout, ChannelHandler... after) {
        SslHandler handler = context.newHandler(channel.alloc(), serverName, port);
        handler.setHandshakeTimeout(timeout.toMillis(), TimeUnit.MILLISECONDS);
        CompletableFuture<PeerSession> result = new CompletableFuture<>();
        handler.handshakeFuture().addListener(f -> {
            if (!f.isSuccess()) {
                result.completeExceptionally(f.cause());
                return;
            }
            try {
                SSLSession session = handler.engine().getSession();
                List<X509Certificate> chain = new ArrayList<>();
                for (Certificate certificate : session.getPeerCertificates()) {
                    if (certificate instanceof X509Certificate x509) {
                        chain.add(x509);
                    }
                }
                String alpn = handler.applicationProtocol();
                result.complete(new PeerSession(session.getProtocol(), session.getCipherSuite(),
                        alpn == null ? "" : alpn, chain));
            } catch (SSLPeerUnverifiedException e) {
                result.completeExceptionally(e);
            }
        });
        ChannelHandler[] handlers = new ChannelHandler[after.length + 1];
        handlers[0] = handler;
        System.arraycopy(after, 0, handlers, 1, after.length);
        channel.pipeline().addLast(handlers);
        return result;
    }
}
