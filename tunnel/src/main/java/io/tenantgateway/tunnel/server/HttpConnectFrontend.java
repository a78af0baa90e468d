package io.tenantgateway.tunnel.server;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoop;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.ssl.SslContext;
import io.netty.util.concurrent.ScheduledFuture;
import io.tenantgateway.tunnel.endpoint.EndpointRelayHandler;
import io.tenantgateway.tunnel.proto.Packet;
import io.tenantgateway.tunnel.protocol.Packets;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code --mode http-connect}: a client sends {@code CONNECT host:port HTTP/1.1}; the server dials through an
 * agent and answers 200, after which the socket carries the tunnelled bytes. Dial errors map to 503 (no agent),
 * 504 (timeout) and 502 (anything else). Reading follows the same credit rule as the gRPC frontend.
 */
final class HttpConnectFrontend extends ChannelInitializer<Channel> {
    private static final Logger log = LoggerFactory.getLogger(HttpConnectFrontend.class);
    private static final String CODEC = "http-codec";
    private static final String AGGREGATOR = "http-aggregator";
    private static final String CONNECT = "connect";

    private final AgentRegistry registry;
    private final SslContext sslContext;
    private final Duration dialTimeout;

    HttpConnectFrontend(AgentRegistry registry, SslContext sslContextOrNull, Duration dialTimeout) {
        this.registry = registry;
        this.sslContext = sslContextOrNull;
        this.dialTimeout = dialTimeout;
    }

    @Override
    protected void initChannel(Channel channel) {
        if (sslContext != null) {
            channel.pipeline().addLast(sslContext.newHandler(channel.alloc()));
        }
        channel.pipeline().addLast(CODEC, new HttpServerCodec());
        channel.pipeline().addLast(AGGREGATOR, new HttpObjectAggregator(16 * 1024));
        channel.pipeline().addLast(CONNECT, new ConnectHandler());
    }

    private final class ConnectHandler extends SimpleChannelInboundHandler<FullHttpRequest> {
        @Override
        protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest request) {
            if (!HttpMethod.CONNECT.equals(request.method())) {
                respond(ctx.channel(), HttpResponseStatus.METHOD_NOT_ALLOWED, "only CONNECT is supported");
                return;
            }
            ctx.channel().config().setAutoRead(false);
            new Session(ctx.channel()).dial(request.uri());
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            log.debug("HTTP-CONNECT client failed before the tunnel was set up: {}", cause.toString());
            ctx.close();
        }
    }

    private static void respond(Channel channel, HttpResponseStatus status, String text) {
        byte[] body = (text + "\n").getBytes(StandardCharsets.UTF_8);
        FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status,
                Unpooled.wrappedBuffer(body));
        response.headers().set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.TEXT_PLAIN);
        response.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, body.length);
        response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        channel.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
    }

    private enum State { DIALING, ESTABLISHED, DONE }

    /** One CONNECT tunnel; confined to the client channel's event loop. */
    private final class Session implements Frontend, EndpointRelayHandler.RelayListener {
        private final Channel channel;
        private final ArrayDeque<Packet> outbound = new ArrayDeque<>();
        private State state = State.DIALING;
        private long random;
        private ServerTunnel tunnel;
        private ScheduledFuture<?> timer;
        private boolean readInFlight;
        private boolean closeWhenFlushed;

        Session(Channel channel) {
            this.channel = channel;
        }

        @Override
        public EventLoop loop() {
            return channel.eventLoop();
        }

        void dial(String address) {
            random = ThreadLocalRandom.current().nextLong(Long.MAX_VALUE);
            AgentConnection agent = registry.pick(GrpcFrontend.hostOf(address));
            if (agent == null) {
                fail(HttpResponseStatus.SERVICE_UNAVAILABLE, Packets.NO_AGENT_AVAILABLE);
                return;
            }
            Packet request = Packets.dialRequest(address, random);
            if (!registry.addPending(new PendingDial(random, address, agent, this))
                    || !agent.execute(() -> agent.sendDialRequest(request))) {
                registry.takePending(random);
                fail(HttpResponseStatus.BAD_GATEWAY, "agent disconnected");
                return;
            }
            timer = channel.eventLoop().schedule(() -> {
                if (state == State.DIALING) {
                    cancelDial();
                    fail(HttpResponseStatus.GATEWAY_TIMEOUT, "dial timeout, backstop");
                }
            }, dialTimeout.toNanos(), TimeUnit.NANOSECONDS);
            channel.closeFuture().addListener(f -> channel.eventLoop().execute(() -> onClosed(null)));
        }

        private void cancelDial() {
            state = State.DONE;
            PendingDial pending = registry.takePending(random);
            if (pending != null) {
                pending.agent().execute(() -> pending.agent().sendDialClose(random));
            }
        }

        private void fail(HttpResponseStatus status, String error) {
            state = State.DONE;
            if (channel.isActive()) {
                respond(channel, status, error);
            }
        }

        @Override
        public void dialSucceeded(ServerTunnel established, Packet response) {
            if (timer != null) {
                timer.cancel(false);
            }
            if (state != State.DIALING || !channel.isActive()) {
                established.closeFromFrontend();
                return;
            }
            tunnel = established;
            state = State.ESTABLISHED;
            channel.pipeline().remove(CONNECT);
            channel.pipeline().remove(AGGREGATOR);
            channel.pipeline().remove(CODEC);
            channel.pipeline().addLast(new EndpointRelayHandler(this));
            channel.writeAndFlush(Unpooled.copiedBuffer("HTTP/1.1 200 Connection established\r\n\r\n",
                    StandardCharsets.US_ASCII));
            maybeRead();
        }

        @Override
        public void dialFailed(Packet response) {
            if (timer != null) {
                timer.cancel(false);
            }
            if (state != State.DIALING) {
                return;
            }
            String error = response.getDialResponse().getError();
            String lower = error.toLowerCase(Locale.ROOT);
            HttpResponseStatus status = Packets.NO_AGENT_AVAILABLE.equals(error)
                    || error.equals("agent disconnected") ? HttpResponseStatus.SERVICE_UNAVAILABLE
                    : lower.contains("timeout") ? HttpResponseStatus.GATEWAY_TIMEOUT : HttpResponseStatus.BAD_GATEWAY;
            fail(status, error);
        }

        private void maybeRead() {
            if (state == State.ESTABLISHED && !readInFlight && tunnel.parkUnlessReadable()) {
                readInFlight = true;
                channel.read();
            }
        }

        @Override
        public void resumeReading() {
            if (state == State.ESTABLISHED && !readInFlight && tunnel.unparkIfReadable()) {
                readInFlight = true;
                channel.read();
            }
        }

        @Override
        public void onRead(ByteBuf data) {
            if (state != State.ESTABLISHED) {
                data.release();
                return;
            }
            tunnel.toAgent(data);
        }

        @Override
        public void onReadComplete() {
            readInFlight = false;
            maybeRead();
        }

        @Override
        public void deliver(Packet data) {
            int size = data.getData().getData().size();
            if (state != State.ESTABLISHED || closeWhenFlushed) {
                tunnel.deliveredToClient(size);
                return;
            }
            if (!tunnel.received(size)) {
                log.warn("agent exceeded the flow-control window; closing tunnel connectionID={}", tunnel.connectId);
                tunnel.deliveredToClient(size);
                channel.close();
                return;
            }
            outbound.add(data);
            flush();
        }

        private void flush() {
            boolean wrote = false;
            while (!outbound.isEmpty() && channel.isWritable()) {
                Packet packet = outbound.poll();
                channel.write(Unpooled.wrappedBuffer(packet.getData().getData().asReadOnlyByteBuffer()));
                tunnel.deliveredToClient(packet.getData().getData().size());
                wrote = true;
            }
            if (wrote) {
                channel.flush();
            }
            if (outbound.isEmpty() && closeWhenFlushed) {
                state = State.DONE;
                channel.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
            }
        }

        @Override
        public void onWritabilityChanged(boolean writable) {
            if (writable && state == State.ESTABLISHED) {
                flush();
            }
        }

        @Override
        public void closedByAgent(String error) {
            if (state == State.ESTABLISHED && !closeWhenFlushed) {
                closeWhenFlushed = true;
                flush();
            }
        }

        @Override
        public void onClosed(Throwable cause) {
            switch (state) {
                case DIALING -> cancelDial();
                case ESTABLISHED -> {
                    tunnel.closeFromFrontend();
                    state = State.DONE;
                }
                default -> {
                }
            }
            Packet packet;
            while ((packet = outbound.poll()) != null) {
                tunnel.deliveredToClient(packet.getData().getData().size());
            }
        }
    }
}
