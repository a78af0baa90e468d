package io.tenantgateway.tools.lab;

import static java.util.Objects.requireNonNull;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.tenantgateway.tunnel.transport.Transports;
import java.net.InetSocketAddress;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The lab's kube-proxy: a webhook Service's stable address ({@code ClusterIP:443} in a cluster) on
 * {@code 127.0.0.1:<port>}, relaying each connection to the Service's endpoint (the agent's webhook). kube-apiserver
 * on Kamaji dials the ClusterIP through the tunnel, never the pod, so the agents' dial policy can allow exactly this
 * address while the webhook itself listens on a port picked at start.
 *
 * <p>A Service without an endpoint rejects connections (kube-proxy's REJECT rule): the connection is reset at once.
 *
 * <p>Threading: every connection pair lives on one event loop of the shared group; reads are manual
 * ({@code AUTO_READ=false}) and the next read is requested only when the previous write has completed, so a slow
 * side slows only its own pair.
 */
final class ServiceProxy implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ServiceProxy.class);

    private final String service;
    private final EventLoopGroup group;
    private final AtomicLong relayed = new AtomicLong();
    private final AtomicLong rejected = new AtomicLong();
    private volatile InetSocketAddress endpoint;
    private Channel listener;

    /** @param service the Service's DNS name, for logs */
    ServiceProxy(String service, EventLoopGroup group) {
        this.service = requireNonNull(service, "service");
        this.group = requireNonNull(group, "group");
    }

    /** Binds {@code 127.0.0.1:0}. */
    synchronized void start() {
        if (listener != null) {
            return;
        }
        listener = new ServerBootstrap().group(group)
                .channel(Transports.serverSocketChannel(group))
                .childOption(ChannelOption.AUTO_READ, false)
                .childHandler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel inbound) {
                        inbound.pipeline().addLast(new FrontendHandler());
                    }
                })
                .bind(new InetSocketAddress("127.0.0.1", 0)).syncUninterruptibly().channel();
        log.info("service proxy listening service={} address={}", service, address());
    }

    /** The Service address clients dial. */
    InetSocketAddress address() {
        return (InetSocketAddress) listener.localAddress();
    }

    /** Sets the Service's endpoint; {@code null} means no ready endpoint (connections are reset). */
    void endpoint(InetSocketAddress value) {
        endpoint = value;
        log.info("service endpoint service={} endpoint={}", service, value == null ? "<none>" : value);
    }

    InetSocketAddress endpoint() {
        return endpoint;
    }

    /** Connections relayed to the endpoint so far. */
    long relayed() {
        return relayed.get();
    }

    /** Connections reset because the Service had no endpoint or the endpoint refused. */
    long rejected() {
        return rejected.get();
    }

    @Override
    public synchronized void close() {
        if (listener != null) {
            listener.close().syncUninterruptibly();
        }
    }

    /** Accepts a client connection and connects it to the endpoint, or resets it. */
    private final class FrontendHandler extends ChannelInboundHandlerAdapter {
        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            Channel inbound = ctx.channel();
            InetSocketAddress target = endpoint;
            if (target == null) {
                reject(inbound, "no endpoint");
                return;
            }
            new Bootstrap().group(inbound.eventLoop())
                    .channel(Transports.socketChannel(group))
                    .option(ChannelOption.AUTO_READ, false)
                    .handler(new RelayHandler(inbound))
                    .connect(target)
                    .addListener((ChannelFutureListener) connected -> {
                        if (!connected.isSuccess()) {
                            reject(inbound, "endpoint " + target + ": " + connected.cause().getMessage());
                            return;
                        }
                        Channel outbound = connected.channel();
                        if (!inbound.isActive()) {
                            outbound.close(); // the client gave up while we connected
                            return;
                        }
                        relayed.incrementAndGet();
                        inbound.pipeline().replace(this, "relay", new RelayHandler(outbound));
                        inbound.read();
                        outbound.read();
                    });
        }

        private void reject(Channel inbound, String why) {
            rejected.incrementAndGet();
            log.debug("service proxy reset a connection service={} reason=\"{}\"", service, why);
            inbound.config().setOption(ChannelOption.SO_LINGER, 0);
            inbound.close();
        }
    }

    /** Copies what one side reads to the other side, one read at a time. */
    private static final class RelayHandler extends ChannelInboundHandlerAdapter {
        private final Channel peer;

        RelayHandler(Channel peer) {
            this.peer = peer;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            // writeAndFlush releases msg, also when the write fails.
            peer.writeAndFlush(msg).addListener((ChannelFutureListener) written -> {
                if (written.isSuccess()) {
                    ctx.channel().read();
                } else {
                    ctx.channel().close();
                    peer.close();
                }
            });
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            if (peer.isActive()) {
                peer.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            log.debug("service proxy connection failed: {}", cause.toString());
            ctx.close();
        }
    }
}
