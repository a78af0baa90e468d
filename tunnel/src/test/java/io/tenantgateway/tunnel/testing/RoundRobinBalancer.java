package io.tenantgateway.tunnel.testing;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.util.concurrent.GlobalEventExecutor;
import io.tenantgateway.tunnel.transport.Transports;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A layer-4 load balancer on loopback: each accepted connection goes to the next backend in turn (TLS passes
 * through untouched). A backend that refuses makes the balancer drop the client connection, as a real TCP
 * balancer with a dead target would.
 */
public final class RoundRobinBalancer implements AutoCloseable {
    private final EventLoopGroup group = Transports.newGroup(1, "balancer");
    private final List<InetSocketAddress> backends = new CopyOnWriteArrayList<>();
    private final AtomicInteger next = new AtomicInteger();
    private final ChannelGroup connections = new DefaultChannelGroup(GlobalEventExecutor.INSTANCE);
    private final Channel listener;

    public RoundRobinBalancer(List<InetSocketAddress> initial) {
        backends.addAll(initial);
        listener = new ServerBootstrap().group(group).channel(Transports.serverSocketChannel(group))
                .childOption(ChannelOption.AUTO_READ, false)
                .childHandler(new ChannelInitializer<>() {
                    @Override
                    protected void initChannel(Channel inbound) {
                        connections.add(inbound);
                        InetSocketAddress backend = backends.get(Math.floorMod(next.getAndIncrement(),
                                backends.size()));
                        ChannelFuture connect = new Bootstrap().group(inbound.eventLoop())
                                .channel(Transports.socketChannel(group))
                                .option(ChannelOption.AUTO_READ, false)
                                .handler(new Relay(inbound))
                                .connect(backend);
                        inbound.pipeline().addLast(new Relay(connect.channel()));
                        connect.addListener((ChannelFutureListener) f -> {
                            if (f.isSuccess()) {
                                connections.add(f.channel());
                                inbound.read();
                                f.channel().read();
                            } else {
                                inbound.close();
                            }
                        });
                    }
                })
                .bind(new InetSocketAddress("127.0.0.1", 0)).syncUninterruptibly().channel();
    }

    public int port() {
        return ((InetSocketAddress) listener.localAddress()).getPort();
    }

    public void setBackends(List<InetSocketAddress> addresses) {
        backends.clear();
        backends.addAll(addresses);
    }

    @Override
    public void close() {
        listener.close().syncUninterruptibly();
        connections.close().syncUninterruptibly();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }

    /** Copies one direction, reading again only after the write went out. */
    private static final class Relay extends ChannelInboundHandlerAdapter {
        private final Channel peer;

        Relay(Channel peer) {
            this.peer = peer;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            peer.writeAndFlush(msg).addListener((ChannelFutureListener) f -> {
                if (f.isSuccess()) {
                    ctx.channel().read();
                } else {
                    ctx.channel().close();
                }
            });
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            peer.close();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }
}
