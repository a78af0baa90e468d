package io.tenantgateway.tunnel.client;

import io.netty.channel.EventLoopGroup;
import io.netty.handler.ssl.SslContext;
import io.tenantgateway.tunnel.TunnelConfig;
import io.tenantgateway.tunnel.endpoint.EndpointDialer;
import io.tenantgateway.tunnel.metrics.AgentMetrics;
import io.tenantgateway.tunnel.protocol.ConnectionIds;
import java.time.Clock;

/** What every server connection of one agent shares. */
record ClientResources(TunnelConfig config, SslContext sslContext, EventLoopGroup group, EndpointDialer dialer,
        AgentMetrics metrics, Clock clock, ConnectionIds connectionIds, TargetBudget budget) {
}
