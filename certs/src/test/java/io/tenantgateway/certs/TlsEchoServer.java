package io.tenantgateway.certs;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** A Netty TLS echo server on 127.0.0.1:0 and a matching client, for handshake tests. */
final class TlsEchoServer implements AutoCloseable {
    /**
     * How long this package's TLS tests wait for what should happen (a handshake, an echo, a close): one generous
     * ceiling, because a busy two-core CI machine runs a cold handshake many times slower than a laptop.
     */
    static final Duration WAIT = Duration.ofSeconds(30);

    final EventLoopGroup group = new MultiThreadIoEventLoopGroup(2, NioIoHandler.newFactory());
    final BlockingQueue<Throwable> serverHandshakeFailures = new LinkedBlockingQueue<>();
    private final Channel serverChannel;

    TlsEchoServer(SslContext serverContext) throws InterruptedException {
        serverChannel = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(serverContext.newHandler(ch.alloc()));
                        ch.pipeline().addLast(new ChannelInboundHandlerAdapter() {
                            @Override
                            public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
                                if (evt instanceof SslHandshakeCompletionEvent done && !done.isSuccess()) {
                                    serverHandshakeFailures.add(done.cause());
                                }
                                ctx.fireUserEventTriggered(evt);
                            }

                            @Override
                            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                                ctx.writeAndFlush(msg);
                            }

                            @Override
                            public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                                ctx.close();
                            }
                        });
                    }
                }).bind("127.0.0.1", 0).sync().channel();
    }

    int port() {
        return ((InetSocketAddress) serverChannel.localAddress()).getPort();
    }

    /** A connected client whose handshake verified (or failed to verify) {@code peerHost}. */
    Client connect(SslContext clientContext, String peerHost) throws InterruptedException {
        Client client = new Client();
        Channel channel = new Bootstrap().group(group).channel(NioSocketChannel.class)
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(clientContext.newHandler(ch.alloc(), peerHost, port()));
                        ch.pipeline().addLast(new SimpleChannelInboundHandler<ByteBuf>() {
                            @Override
                            protected void channelRead0(ChannelHandlerContext ctx, ByteBuf msg) {
                                client.received.add(msg.toString(StandardCharsets.UTF_8));
                            }

                            @Override
                            public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                                ctx.close();
                            }
                        });
                    }
                }).connect("127.0.0.1", port()).sync().channel();
        client.channel = channel;
        client.handshake = channel.pipeline().get(SslHandler.class).handshakeFuture().await();
        return client;
    }

    static final class Client implements AutoCloseable {
        final BlockingQueue<String> received = new LinkedBlockingQueue<>();
        Channel channel;
        io.netty.util.concurrent.Future<Channel> handshake;

        X509Certificate peerCertificate() throws Exception {
            return (X509Certificate) channel.pipeline().get(SslHandler.class).engine().getSession()
                    .getPeerCertificates()[0];
        }

        /** Sends text and returns the echo (or null when nothing comes back within the wait). */
        String echo(String text) throws InterruptedException {
            channel.writeAndFlush(Unpooled.copiedBuffer(text, StandardCharsets.UTF_8));
            StringBuilder answer = new StringBuilder();
            while (answer.length() < text.length()) {
                String part = received.poll(WAIT.toSeconds(), TimeUnit.SECONDS);
                if (part == null) {
                    return null;
                }
                answer.append(part);
            }
            return answer.toString();
        }

        @Override
        public void close() {
            channel.close().syncUninterruptibly();
        }
    }

    @Override
    public void close() {
        serverChannel.close().syncUninterruptibly();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }
}
