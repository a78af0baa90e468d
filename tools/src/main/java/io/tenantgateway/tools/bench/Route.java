package io.tenantgateway.tools.bench;

import static java.util.Objects.requireNonNull;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.tenantgateway.tunnel.proxy.ProxyClient;
import io.tenantgateway.tunnel.transport.Transports;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;

/** How the bench's client reaches a target: straight over loopback TCP (the baseline), or through the tunnel. */
interface Route {
    /** {@code direct} or {@code tunnel}: the key of the figure in the report. */
    String name();

    /**
     * Connects to {@code target} with {@code handler} on the new channel; completes with the active channel. The
     * handler sees {@code channelActive} before the future completes.
     */
    CompletableFuture<Channel> connect(InetSocketAddress target, ChannelHandler handler);

    /** Loopback TCP on the client's event loops, the same socket options as the agent's target connections. */
    static Route direct(EventLoopGroup group) {
        requireNonNull(group, "group");
        Bootstrap bootstrap = new Bootstrap().group(group).channel(Transports.socketChannel(group))
                .option(ChannelOption.TCP_NODELAY, true);
        return new Route() {
            @Override
            public String name() {
                return "direct";
            }

            @Override
            public CompletableFuture<Channel> connect(InetSocketAddress target, ChannelHandler handler) {
                return Transports.whenDone(bootstrap.clone().handler(handler).connect(target));
            }
        };
    }

    /** Through a konnectivity-server and the agent ({@code /ProxyService/Proxy}, one stream per connection). */
    static Route tunnel(ProxyClient client) {
        requireNonNull(client, "client");
        return new Route() {
            @Override
            public String name() {
                return "tunnel";
            }

            @Override
            public CompletableFuture<Channel> connect(InetSocketAddress target, ChannelHandler handler) {
                return client.dial(target.getHostString(), target.getPort(), handler);
            }
        };
    }
}
