package io.tenantgateway.tunnel.proxy;

import com.google.protobuf.ByteString;
import com.google.protobuf.UnsafeByteOperations;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.AbstractChannel;
import io.netty.channel.ChannelConfig;
import io.netty.channel.ChannelMetadata;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.channel.ChannelPromise;
import io.netty.channel.DefaultChannelConfig;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.ScheduledFuture;
import io.tenantgateway.tunnel.proto.Packet;
import io.tenantgateway.tunnel.proto.PacketType;
import io.tenantgateway.tunnel.protocol.Packets;
import io.tenantgateway.tunnel.transport.ByteStrings;
import io.tenantgateway.tunnel.transport.TunnelMethods;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * A Netty {@link io.netty.channel.Channel} whose bytes travel through one {@code /ProxyService/Proxy} stream: put
 * any handlers on it (TLS, HTTP codecs) as on a socket to {@code host:port}.
 *
 * <p>Runs on the event loop its gRPC channel is pinned to, so stream and channel share one thread. Reads follow
 * Netty's read model (one DATA per {@code read()}, i.e. gRPC {@code request(1)}; {@code autoRead} works as
 * usual); writes stay in the channel's outbound buffer while the stream is not ready, so {@code isWritable()}
 * pushes back on the writer.
 */
final class TunnelChannel extends AbstractChannel {
    private static final ChannelMetadata METADATA = new ChannelMetadata(false);
    /** Largest DATA we send: small enough for any server's message limit, large enough to be cheap. */
    static final int MAX_DATA = 256 * 1024;
    /** Most buffers coalesced into one DATA. */
    private static final int MAX_VIEWS = 256;
    private static final int ON_READY_THRESHOLD = 256 * 1024;
    /** How long a closed channel waits for the server's CLOSE_RSP before cancelling the stream. */
    private static final Duration CLOSE_GRACE = Duration.ofSeconds(10);

    private final DefaultChannelConfig config = new DefaultChannelConfig(this);
    private final InetSocketAddress remote;
    private final String address;
    private final CompletableFuture<io.netty.channel.Channel> dialed = new CompletableFuture<>();
    private ClientCall<Packet, Packet> call;
    private boolean callDone;
    private long random;
    private long connectId;
    private boolean open = true;
    private boolean active;
    private boolean established;
    private boolean requestOutstanding;
    private boolean closeSent;
    private ScheduledFuture<?> timer;
    private ScheduledFuture<?> closeDeadline;

    TunnelChannel(String host, int port) {
        super(null);
        this.remote = InetSocketAddress.createUnresolved(host, port);
        this.address = (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
    }

    /** Starts the stream and sends DIAL_REQ; call on the channel's (registered) event loop. */
    CompletableFuture<io.netty.channel.Channel> start(ManagedChannel grpcChannel, Duration dialTimeout) {
        random = ThreadLocalRandom.current().nextLong(Long.MAX_VALUE);
        call = grpcChannel.newCall(TunnelMethods.PROXY, CallOptions.DEFAULT.withOnReadyThreshold(ON_READY_THRESHOLD));
        call.start(new Listener(), new Metadata());
        call.request(1);
        call.sendMessage(Packets.dialRequest(address, random));
        timer = eventLoop().schedule(() -> {
            if (!active && !dialed.isDone()) {
                if (!callDone) {
                    call.sendMessage(Packets.closeDial(random));
                    call.cancel("dial timeout, backstop", null);
                }
                failDial("dial timeout, backstop");
            }
        }, dialTimeout.toNanos(), TimeUnit.NANOSECONDS);
        return dialed;
    }

    private final class Listener extends ClientCall.Listener<Packet> {
        @Override
        public void onMessage(Packet packet) {
            requestOutstanding = false;
            if (Packets.check(packet, false) != null) {
                call.cancel("malformed packet from server: " + Packets.check(packet, false).message(), null);
                return;
            }
            if (!established) {
                onDialResponse(packet);
                return;
            }
            if (!open) {
                if (!callDone) {
                    call.request(1); // closing: drain until the server ends the stream
                }
                return;
            }
            if (packet.getType() == PacketType.DATA) {
                ByteBuf data = ByteStrings.wrap(packet.getData().getData());
                pipeline().fireChannelRead(data);
                pipeline().fireChannelReadComplete();
            } else if (packet.getType() == PacketType.CLOSE_RSP) {
                closeSent = true; // the tunnel is gone; nothing to ask for
                close();
            } else {
                readIfRequested();
            }
        }

        private void onDialResponse(Packet packet) {
            if (packet.getType() != PacketType.DIAL_RSP || packet.getDialResponse().getRandom() != random) {
                call.cancel("expected DIAL_RSP for dialID " + random + ", got " + Packets.describe(packet), null);
                return;
            }
            timer.cancel(false);
            if (!packet.getDialResponse().getError().isEmpty()) {
                failDial(packet.getDialResponse().getError());
                if (!callDone) {
                    call.halfClose();
                }
                return;
            }
            connectId = packet.getDialResponse().getConnectID();
            established = true;
            if (!open) {
                sendClose(); // closed by the caller while the DIAL_CLS was on its way
                return;
            }
            active = true;
            pipeline().fireChannelActive();
            dialed.complete(TunnelChannel.this);
        }

        @Override
        public void onReady() {
            if (active) {
                flush();
            }
        }

        @Override
        public void onClose(Status status, Metadata trailers) {
            callDone = true;
            if (timer != null) {
                timer.cancel(false);
            }
            if (closeDeadline != null) {
                closeDeadline.cancel(false);
            }
            if (!dialed.isDone()) {
                failDial(status.getDescription() != null ? status.getDescription() : "tunnel stream ended: "
                        + status.getCode());
            }
            closeSent = true;
            if (open) {
                close();
            }
        }
    }

    private void failDial(String error) {
        if (dialed.completeExceptionally(new ProxyDialException(error))) {
            closeSent = true;
            close();
        }
    }

    private void readIfRequested() {
        if (active && !callDone && !requestOutstanding && readRequested) {
            readRequested = false;
            requestOutstanding = true;
            call.request(1);
        }
    }

    private boolean readRequested;

    @Override
    protected void doBeginRead() {
        readRequested = true;
        readIfRequested();
    }

    @Override
    protected void doWrite(ChannelOutboundBuffer in) {
        while (true) {
            Object message = in.current();
            if (message == null) {
                return;
            }
            if (callDone || !call.isReady()) {
                return; // onReady flushes again; meanwhile the outbound buffer fills and turns unwritable
            }
            // Coalesce what the writer queued (e.g. many 16 KiB TLS records) into one DATA of up to MAX_DATA:
            // every message costs the client, the server and the agent a fixed amount of work.
            ByteBuffer[] views = in.nioBuffers(MAX_VIEWS, MAX_DATA);
            int count = in.nioBufferCount();
            long size = in.nioBufferSize();
            if (count == 0) {
                in.removeBytes(0); // empty buffers at the head
                continue;
            }
            if (size > MAX_DATA) {
                // One buffer larger than a DATA: send a slice of it.
                ByteBuf data = (ByteBuf) message;
                int slice = Math.min(data.readableBytes(), MAX_DATA);
                call.sendMessage(Packets.data(connectId,
                        UnsafeByteOperations.unsafeWrap(data.nioBuffer(data.readerIndex(), slice))));
                in.removeBytes(slice);
                continue;
            }
            ByteString payload = UnsafeByteOperations.unsafeWrap(views[0]);
            for (int i = 1; i < count; i++) {
                payload = payload.concat(UnsafeByteOperations.unsafeWrap(views[i]));
            }
            // grpc-netty serialises within sendMessage, so the views may be released right after.
            call.sendMessage(Packets.data(connectId, payload));
            in.removeBytes(size);
        }
    }

    @Override
    protected Object filterOutboundMessage(Object msg) {
        if (msg instanceof ByteBuf) {
            return msg;
        }
        throw new UnsupportedOperationException("unsupported message type: " + msg.getClass().getName()
                + " (expected: ByteBuf)");
    }

    @Override
    protected void doClose() {
        boolean wasActive = active;
        open = false;
        active = false;
        if (wasActive) {
            sendClose();
        } else if (call != null && !established && !callDone && !dialed.isDone()) {
            // Closed by the caller while dialling: tell the server to give up (DIAL_CLS), as a timed-out client does.
            timer.cancel(false);
            call.sendMessage(Packets.closeDial(random));
            call.halfClose();
            call.request(1);
            dialed.completeExceptionally(new ProxyDialException("channel closed while dialling"));
        }
    }

    /** CLOSE_REQ, then wait for the server to end the stream (bounded). */
    private void sendClose() {
        if (closeSent || callDone) {
            return;
        }
        closeSent = true;
        call.sendMessage(Packets.closeRequest(connectId));
        call.halfClose();
        call.request(1);
        closeDeadline = eventLoop().schedule(() -> {
            if (!callDone) {
                call.cancel("no CLOSE_RSP within " + CLOSE_GRACE.toSeconds() + "s", null);
            }
        }, CLOSE_GRACE.toNanos(), TimeUnit.NANOSECONDS);
    }

    @Override
    protected AbstractUnsafe newUnsafe() {
        return new AbstractUnsafe() {
            @Override
            public void connect(SocketAddress remoteAddress, SocketAddress localAddress, ChannelPromise promise) {
                promise.setFailure(new UnsupportedOperationException("a tunnel channel is connected by"
                        + " ProxyClient.dial"));
            }
        };
    }

    @Override
    protected boolean isCompatible(EventLoop loop) {
        return true; // no I/O registration: all work is done through the gRPC stream on this loop
    }

    @Override
    protected SocketAddress localAddress0() {
        return null;
    }

    @Override
    protected SocketAddress remoteAddress0() {
        return remote;
    }

    @Override
    protected void doBind(SocketAddress localAddress) {
        throw new UnsupportedOperationException("bind");
    }

    @Override
    protected void doDisconnect() {
        doClose();
    }

    @Override
    public ChannelConfig config() {
        return config;
    }

    @Override
    public boolean isOpen() {
        return open;
    }

    @Override
    public boolean isActive() {
        return open && active;
    }

    @Override
    public ChannelMetadata metadata() {
        return METADATA;
    }

    @Override
    public String toString() {
        return "TunnelChannel{address=" + address + ", connectionID=" + connectId + ", active=" + active + "}";
    }
}
