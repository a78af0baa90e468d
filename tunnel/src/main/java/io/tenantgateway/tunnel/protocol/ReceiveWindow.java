package io.tenantgateway.tunnel.protocol;

/**
 * Receive side of one tunnel's TG_CREDIT accounting (not thread-safe: owned by one event loop).
 *
 * <p>The peer may send {@code window} payload bytes up front and more as we grant them. We grant again once the
 * bytes that left our buffer (written to the socket or handed to the next stream) reach a quarter of the window,
 * topping the peer's allowance up to "consumed + window". So at most {@code window} bytes (plus one message the
 * peer was already sending) sit in our buffer for this tunnel, whatever the other tunnels do.
 */
public final class ReceiveWindow {
    private final long window;
    private final long slack;
    private final long grantThreshold;
    private long granted;
    private long received;
    private long consumed;

    /**
     * @param window bytes the peer may have outstanding
     * @param slack extra bytes tolerated before the peer counts as violating the window: a sender decides to send
     *     while its credit is positive, so one message may overshoot
     */
    public ReceiveWindow(long window, long slack) {
        if (window < 1) {
            throw new IllegalArgumentException("window: " + window + " (expected: > 0)");
        }
        if (slack < 0) {
            throw new IllegalArgumentException("slack: " + slack + " (expected: >= 0)");
        }
        this.window = window;
        this.slack = slack;
        this.grantThreshold = Math.max(1, window / 4);
        this.granted = window;
    }

    /** Records received payload; {@code false} when the peer sent more than it was allowed (close the tunnel). */
    public boolean onReceived(long bytes) {
        received += bytes;
        return received <= granted + slack;
    }

    /**
     * Records payload that left our buffer.
     *
     * @return the credit to send now, or 0 while the unreported amount is still small
     */
    public long onConsumed(long bytes) {
        consumed += bytes;
        long grant = consumed + window - granted;
        if (grant >= grantThreshold) {
            granted += grant;
            return grant;
        }
        return 0;
    }

    /** Bytes received and not yet consumed. */
    public long buffered() {
        return received - consumed;
    }

    public long window() {
        return window;
    }
}
