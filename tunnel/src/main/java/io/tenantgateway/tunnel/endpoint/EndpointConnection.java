package io.tenantgateway.tunnel.endpoint;

import static java.util.Objects.requireNonNull;

import com.google.protobuf.ByteString;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelException;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.ScheduledFuture;
import io.tenantgateway.tunnel.protocol.ReceiveWindow;
import io.tenantgateway.tunnel.transport.ByteStrings;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One tunnelled connection on the agent: the target socket and its flow-control state.
 *
 * <p>Threading: confined to the event loop that owns the server stream (the target channel is registered on the
 * same loop), so there are no locks; only the byte counters are read from other threads (snapshots).
 *
 * <p>Target → server: the channel has {@code AUTO_READ=false}; the next read is issued only after the previous
 * chunk was handed to the stream, while the stream is ready and (with the extension) while the server granted
 * credit. Server → target: payload is written as it arrives; the channel's outbound buffer is the bounded
 * per-tunnel buffer. With the extension the server cannot put more than the window into it; without it the
 * owning stream pauses when the buffer passes the high-water mark ({@link TunnelPort#bufferFull}).
 */
public final class EndpointConnection implements EndpointRelayHandler.RelayListener {
    private static final Logger log = LoggerFactory.getLogger(EndpointConnection.class);
    /** How long a closing connection may take to flush queued bytes to a target that stopped reading. */
    static final Duration CLOSE_FLUSH_TIMEOUT = Duration.ofSeconds(5);

    /** What the connection needs from the stream that owns it. Every method is called on the stream's loop. */
    public interface TunnelPort {
        /** Sends {@code data} as DATA; takes ownership of the buffer. */
        void sendData(EndpointConnection connection, ByteBuf data);

        void sendCloseResponse(long connectId, String errorOrNull);

        void sendCredit(long connectId, long bytes);

        /** Whether the stream accepts more messages now ({@code isReady()}). */
        boolean streamWritable();

        /** Calls {@link #onStreamWritable()} once the stream is ready again. */
        void parkUntilWritable(EndpointConnection connection);

        /** {@code bytes} of DATA are about to be written to a target (counted in the agent's memory budget). */
        void targetWriteStarted(int bytes);

        /** A write of {@link #targetWriteStarted} finished, written or failed; called exactly once per write. */
        void targetWriteDone(int bytes);

        /** Without the extension: this tunnel's buffer crossed the high (true) or low (false) water mark. */
        void bufferFull(EndpointConnection connection, boolean full);

        /** The connection is finished; remove it from the table. Called exactly once. */
        void closed(EndpointConnection connection);
    }

    public enum State { DIALING, OPEN, CLOSING, CLOSED }

    private final long connectId;
    private final long random;
    private final String address;
    private final Instant openedAt;
    private final TunnelPort port;
    private final ReceiveWindow receiveWindow;
    private long sendCredit;
    private final boolean creditMode;
    // Volatile only for snapshots read from other threads; written on the loop.
    private volatile Channel channel;
    private Future<Channel> dial;
    private volatile State state = State.DIALING;
    private boolean readInFlight;
    private boolean parked;
    private boolean bufferFull;
    private volatile long bytesToTarget;
    private volatile long bytesFromTarget;
    // What the target took (loop-confined): DATA bytes whose write completed, and targetIdleNanos' last look.
    private long writtenToTarget;
    private long progressMark = -1;
    private long progressAtNanos;

    /**
     * @param sendWindow credit the server granted up front (extension), or {@code <= 0} for none (plain protocol)
     * @param receiveWindow our window for the server's DATA (extension), or {@code null} for the plain protocol
     */
    public EndpointConnection(long connectId, long random, String address, Instant openedAt, TunnelPort port,
            long sendWindow, ReceiveWindow receiveWindow) {
        this.connectId = connectId;
        this.random = random;
        this.address = requireNonNull(address, "address");
        this.openedAt = requireNonNull(openedAt, "openedAt");
        this.port = requireNonNull(port, "port");
        this.creditMode = receiveWindow != null;
        this.receiveWindow = receiveWindow;
        this.sendCredit = creditMode ? sendWindow : Long.MAX_VALUE;
    }

    public long connectId() {
        return connectId;
    }

    public long random() {
        return random;
    }

    public String address() {
        return address;
    }

    public Instant openedAt() {
        return openedAt;
    }

    public State state() {
        return state;
    }

    public long bytesToTarget() {
        return bytesToTarget;
    }

    public long bytesFromTarget() {
        return bytesFromTarget;
    }

    /** Bytes accepted from the server and not yet written to the target socket (racy read; for snapshots). */
    public long bufferedToTarget() {
        Channel ch = channel;
        if (ch == null) {
            return 0;
        }
        ChannelOutboundBuffer buffer = ch.unsafe().outboundBuffer();
        return buffer == null ? 0 : buffer.totalPendingWriteBytes();
    }

    /**
     * Nanoseconds the target has taken no bytes, as of {@code now} ({@link System#nanoTime}): since the later of the
     * last change this method saw in what Netty handed to the socket (completed writes plus the current write's
     * progress) and, on epoll, the kernel's last transmission of data on the connection ({@code tcpi_last_data_sent}).
     * The kernel's view is what tells a slow reader from a stuck one: the socket's send buffer (autotuned up to 4 MiB)
     * takes bytes long after the target stopped reading and then takes none until a third of it drained (minutes
     * for a target reading a few KiB a second), while the kernel sends data whenever the target's window opens.
     * Under NIO only Netty's view is there. The first call starts the clock; call it on the loop, while the tunnel
     * holds bytes for its target, at least once per check interval.
     */
    public long targetIdleNanos(long now) {
        Channel ch = channel;
        ChannelOutboundBuffer buffer = ch.unsafe().outboundBuffer();
        long mark = writtenToTarget + (buffer == null ? 0 : buffer.currentProgress());
        if (mark != progressMark) {
            progressMark = mark;
            progressAtNanos = now;
        }
        if (ch instanceof EpollSocketChannel epoll && ch.isOpen()) {
            try {
                long sentAt = now - TimeUnit.MILLISECONDS.toNanos(epoll.tcpInfo().lastDataSent());
                if (sentAt - progressAtNanos > 0) {
                    progressAtNanos = sentAt;
                }
            } catch (ChannelException e) {
                log.debug("no TCP_INFO for connectionID={}: {}", connectId, e.toString()); // closing: Netty's view
            }
        }
        return now - progressAtNanos;
    }

    /** Whether the dial succeeded (the target socket was handed to this connection). */
    public boolean opened() {
        return channel != null;
    }

    /**
     * Completes when the target socket is closed (after a closing connection flushed what it owed the target), or
     * {@code null} when no socket was ever connected.
     */
    public ChannelFuture targetCloseFuture() {
        Channel ch = channel;
        return ch == null ? null : ch.closeFuture();
    }

    /** Remembers the dial so that DIAL_CLS or a lost stream can cancel it. */
    public void dialing(Future<Channel> pendingDial) {
        this.dial = pendingDial;
    }

    /** The dial succeeded; returns {@code false} (and closes the channel) if the connection was cancelled. */
    public boolean dialed(Channel connected) {
        if (state != State.DIALING) {
            connected.close();
            return false;
        }
        channel = connected;
        state = State.OPEN;
        dial = null; // done; do not keep the promise and its listeners alive for the tunnel's lifetime
        return true;
    }

    /** Starts relaying target → server; call after DIAL_RSP went out so DATA and CLOSE_RSP never precede it. */
    public void startReading() {
        if (state == State.OPEN && !channel.isActive()) {
            onClosed(null); // the target hung up before the dial result was processed
            return;
        }
        maybeRead();
    }

    private void maybeRead() {
        if (state != State.OPEN || readInFlight) {
            return;
        }
        if (sendCredit <= 0) {
            return; // resumed by addCredit
        }
        if (!port.streamWritable()) {
            if (!parked) {
                parked = true;
                port.parkUntilWritable(this);
            }
            return;
        }
        readInFlight = true;
        channel.read();
    }

    /** The stream became ready (see {@link TunnelPort#parkUntilWritable}). */
    public void onStreamWritable() {
        parked = false;
        maybeRead();
    }

    /** TG_CREDIT from the server. */
    public void addCredit(long bytes) {
        if (!creditMode) {
            return;
        }
        // Saturating: a server granting absurd credit (Long.MAX_VALUE twice) must not wrap it negative, which would
        // stall this tunnel's target -> server direction for good.
        long sum = sendCredit + bytes;
        sendCredit = bytes > 0 && sum < sendCredit ? Long.MAX_VALUE : sum;
        maybeRead();
    }

    @Override
    public void onRead(ByteBuf data) {
        if (state != State.OPEN) {
            data.release();
            return;
        }
        int size = data.readableBytes();
        bytesFromTarget += size;
        if (creditMode) {
            sendCredit -= size;
        }
        port.sendData(this, data);
    }

    @Override
    public void onReadComplete() {
        readInFlight = false;
        maybeRead();
    }

    /** DATA from the server: write it to the target. */
    public void write(ByteString payload) {
        if (state != State.OPEN) {
            return; // closing: the server already got (or will get) CLOSE_RSP
        }
        int size = payload.size();
        if (creditMode && !receiveWindow.onReceived(size)) {
            log.warn("server exceeded the flow-control window; closing tunnel connectionID={} address={} window={}"
                    + " buffered={}", connectId, address, receiveWindow.window(), receiveWindow.buffered());
            fail("flow-control window exceeded");
            return;
        }
        bytesToTarget += size;
        port.targetWriteStarted(size);
        ChannelFuture write = channel.writeAndFlush(ByteStrings.wrap(payload));
        write.addListener(f -> {
            if (f.isSuccess()) {
                writtenToTarget += size;
            }
            port.targetWriteDone(size);
        });
        if (creditMode) {
            write.addListener(f -> written(size, f));
        } else {
            write.addListener(ChannelFutureListener.FIRE_EXCEPTION_ON_FAILURE);
            if (!bufferFull && !channel.isWritable()) {
                bufferFull = true;
                port.bufferFull(this, true);
            }
        }
    }

    private void written(int size, Future<? super Void> result) {
        if (!result.isSuccess()) {
            channel.pipeline().fireExceptionCaught(result.cause());
            return;
        }
        if (state == State.OPEN) {
            long grant = receiveWindow.onConsumed(size);
            if (grant > 0) {
                port.sendCredit(connectId, grant);
            }
        }
    }

    @Override
    public void onWritabilityChanged(boolean writable) {
        if (bufferFull && writable) {
            bufferFull = false;
            port.bufferFull(this, false);
        }
    }

    /** CLOSE_REQ from the server: answer CLOSE_RSP, then flush what is queued to the target and close it. */
    public void closeRequested() {
        if (state == State.CLOSED || state == State.CLOSING) {
            return;
        }
        boolean wasDialing = state == State.DIALING;
        state = State.CLOSING;
        port.sendCloseResponse(connectId, null);
        finish();
        if (wasDialing) {
            cancelDial();
        } else {
            flushAndClose();
        }
    }

    /** DIAL_CLS: the client gave up. Cancel the dial, or close a connection whose DIAL_RSP already went out. */
    public void dialCancelled() {
        if (state == State.DIALING) {
            state = State.CLOSED;
            finish();
            cancelDial();
        } else if (state == State.OPEN) {
            state = State.CLOSING;
            port.sendCloseResponse(connectId, null);
            finish();
            channel.close();
        }
    }

    /** The server stream is gone: drop the target without any packet. */
    public void streamLost() {
        State before = state;
        if (before == State.CLOSED) {
            return;
        }
        state = State.CLOSED;
        finish();
        if (before == State.DIALING) {
            cancelDial();
        } else if (channel != null) {
            channel.close();
        }
    }

    /** Closes the tunnel because of an error on our side; the server gets CLOSE_RSP with {@code error}. */
    public void fail(String error) {
        if (state != State.OPEN) {
            return;
        }
        state = State.CLOSING;
        port.sendCloseResponse(connectId, error);
        finish();
        channel.close();
    }

    @Override
    public void onClosed(Throwable cause) {
        if (state == State.DIALING) {
            return; // the dial result decides; startReading notices an early hang-up
        }
        if (state != State.OPEN) {
            state = State.CLOSED;
            return;
        }
        // Everything read before the FIN/RST was already sent as DATA (reads are forwarded immediately), so the
        // unsolicited CLOSE_RSP is ordered after it on the stream.
        if (cause != null) {
            log.debug("target connection failed connectionID={} address={} cause={}", connectId, address,
                    cause.toString());
        }
        state = State.CLOSED;
        port.sendCloseResponse(connectId, null);
        finish();
    }

    private void flushAndClose() {
        Channel ch = channel;
        ScheduledFuture<?> deadline = ch.eventLoop().schedule(() -> {
            ch.close();
        }, CLOSE_FLUSH_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        ch.closeFuture().addListener(f -> deadline.cancel(false));
        ch.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
    }

    private void cancelDial() {
        if (dial != null) {
            dial.cancel(false);
        }
    }

    private boolean finished;

    private void finish() {
        if (!finished) {
            finished = true;
            if (bufferFull) {
                bufferFull = false;
                port.bufferFull(this, false);
            }
            port.closed(this);
        }
    }

    @Override
    public String toString() {
        return "EndpointConnection{connectionID=" + connectId + ", address=" + address + ", state=" + state + "}";
    }
}
