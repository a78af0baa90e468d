package io.tenantgateway.tunnel.e2e;

import static io.tenantgateway.tunnel.testing.TunnelHarness.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslProvider;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.tenantgateway.certs.ClientAuthMode;
import io.tenantgateway.certs.TlsContexts;
import io.tenantgateway.tunnel.client.TunnelClientSet;
import io.tenantgateway.tunnel.proxy.ProxyClient;
import io.tenantgateway.tunnel.server.TunnelServer;
import io.tenantgateway.tunnel.testing.Payload;
import io.tenantgateway.tunnel.testing.TunnelHarness;
import io.tenantgateway.tunnel.testing.TunnelTestBase;
import io.tenantgateway.tunnel.transport.TlsProviders;
import io.tenantgateway.tunnel.transport.Transports;
import java.net.InetSocketAddress;
import java.security.MessageDigest;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * TLS end to end through a tunnel, as kube-apiserver talks to a webhook: an {@code SslHandler} on the tunnel
 * channel, a TLS echo target behind the agent. Regression: tunnel channels used to deliver read-only buffers, and
 * the JDK's SSLEngine (which decrypts in place) failed on every record that arrived whole in one DATA. Runs with
 * both TLS providers on the agent leg, so the JDK fallback stays covered.
 */
@Timeout(120)
class TlsThroughTunnelIT extends TunnelTestBase {
    private static final int BYTES = 4 * 1024 * 1024;

    @ParameterizedTest
    @EnumSource(value = SslProvider.class, names = {"JDK", "OPENSSL"})
    void tlsInsideTheTunnelEchoesEveryByte(SslProvider agentTls) throws Exception {
        TunnelServer server = harness.startServer(TunnelHarness.serverConfig("tls")
                .agentClientAuth(ClientAuthMode.REQUIRE).udsPath(TunnelHarness.socketPath(dir)).build());
        TunnelClientSet agent = harness.track(TunnelClientSet.builder(TunnelHarness.agentConfig(server).build())
                .tlsMaterial(TunnelHarness.PKI.clientMaterial()).registry(new PrometheusRegistry())
                .sslProvider(agentTls == SslProvider.OPENSSL ? TlsProviders.preferred() : SslProvider.JDK).build());
        agent.start();
        await().atMost(WAIT).until(agent::isReady);
        EventLoopGroup targetGroup = Transports.newGroup(1, "tls-target");
        harness.track(() -> targetGroup.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly());
        SslContext serverTls = TlsContexts.server(TunnelHarness.PKI.serverMaterial(), ClientAuthMode.NONE,
                Clock.systemUTC());
        Channel target = new ServerBootstrap().group(targetGroup).channel(Transports.serverSocketChannel(targetGroup))
                .childHandler(new ChannelInitializer<>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        ch.pipeline().addLast(serverTls.newHandler(ch.alloc()), new ChannelInboundHandlerAdapter() {
                            @Override
                            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                                ctx.writeAndFlush(msg);
                            }
                        });
                    }
                })
                .bind(new InetSocketAddress("127.0.0.1", 0)).syncUninterruptibly().channel();
        harness.track(() -> target.close().syncUninterruptibly());
        int port = ((InetSocketAddress) target.localAddress()).getPort();

        SslContext clientTls = TlsContexts.client(TunnelHarness.PKI.trustOnlyMaterial(), Clock.systemUTC());
        ProxyClient client = harness.proxyClient(server);
        MessageDigest received = Payload.newDigest();
        AtomicLong receivedBytes = new AtomicLong();
        CompletableFuture<Void> echoed = new CompletableFuture<>();
        Channel channel = TunnelHarness.dial(client, "127.0.0.1:" + port, new ChannelInitializer<>() {
            @Override
            protected void initChannel(Channel ch) {
                ch.pipeline().addLast(clientTls.newHandler(ch.alloc(), "localhost", port),
                        new ChannelInboundHandlerAdapter() {
                            @Override
                            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                                ByteBuf data = (ByteBuf) msg;
                                received.update(data.nioBuffer());
                                if (receivedBytes.addAndGet(data.readableBytes()) == BYTES) {
                                    echoed.complete(null);
                                }
                                data.release();
                            }

                            @Override
                            public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                                echoed.completeExceptionally(cause);
                            }
                        });
            }
        });
        channel.pipeline().get(SslHandler.class).handshakeFuture().get(WAIT.toSeconds(), TimeUnit.SECONDS);
        Payload payload = new Payload(7);
        for (int sent = 0; sent < BYTES; sent += 16 * 1024) {
            ByteBuf chunk = Unpooled.buffer(16 * 1024);
            payload.fill(chunk, 16 * 1024);
            channel.writeAndFlush(chunk).sync();
        }
        echoed.get(60, TimeUnit.SECONDS);
        assertThat(Payload.hex(received)).isEqualTo(Payload.sha256(7, BYTES));
        channel.close().sync();
    }

    @Test
    void theAgentPrefersBoringSslWhereItLoads() {
        assertThat(TlsProviders.preferred()).isEqualTo(SslProvider.OPENSSL); // linux-x86_64 ships the library
    }
}
