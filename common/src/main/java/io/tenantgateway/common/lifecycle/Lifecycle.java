package io.tenantgateway.common.lifecycle;

import static java.util.Objects.requireNonNull;

/**
 * The start/close contract every long-lived component shares (JOSDK {@code Operator}):
 *
 * <ul>
 *   <li>{@link #start()} is idempotent. It runs {@link #doStart()} once, under the lifecycle lock. If that throws, the
 *       component calls {@link #doClose()} to undo what already started, is {@link State#CLOSED CLOSED}, and
 *       rethrows an {@link IllegalStateException} with the cause's message, led by the component's name (unless the
 *       message already starts with it) and followed by {@code (closed after the failed start)}; a
 *       later {@code start()} throws too. Build a new instance to try again.</li>
 *   <li>{@link #close()} is idempotent and safe from a shutdown hook. It runs {@link #doClose()} exactly once,
 *       whatever the state (never started too: a component may own things from construction, such as registered
 *       metrics), and outside the lifecycle lock, so {@code doClose} may wait for threads that themselves check
 *       {@link #isRunning()}. {@code doClose} stops things in the reverse order of {@code doStart} and must cope with
 *       a partial start or none.</li>
 * </ul>
 *
 * <p>States: {@code NEW → STARTING → RUNNING → CLOSED}, or {@code NEW → CLOSED}, or {@code STARTING → CLOSED} when the
 * start fails. Thread-safe.
 */
public abstract class Lifecycle implements AutoCloseable {
    /** Where a component is in its life. */
    public enum State { NEW, STARTING, RUNNING, CLOSED }

    private final String name;
    private final Object lock = new Object();
    private volatile State state = State.NEW;

    /** @param name what the component is, with its identifiers, for messages ({@code "device registrar for node n1"}) */
    protected Lifecycle(String name) {
        this.name = requireNonNull(name, "name");
    }

    /** Starts the component once; see the class comment. */
    public final void start() {
        synchronized (lock) {
            switch (state) {
                case RUNNING:
                    return;
                case CLOSED:
                    throw new IllegalStateException(name + " is closed");
                case STARTING:
                    throw new IllegalStateException(name + " is already starting (start() called from doStart())");
                default:
                    break;
            }
            state = State.STARTING;
            try {
                doStart();
                state = State.RUNNING;
                return;
            } catch (RuntimeException | Error e) {
                state = State.CLOSED;
                closeAfterFailedStart(e);
                throw new IllegalStateException(failedStartMessage(e), e);
            }
        }
    }

    /** The cause's message, prefixed with the name unless it already starts with it, and that it is now closed. */
    private String failedStartMessage(Throwable e) {
        String detail = String.valueOf(e.getMessage());
        return (detail.startsWith(name) ? detail : name + " failed to start: " + detail)
                + " (closed after the failed start)";
    }

    private void closeAfterFailedStart(Throwable failure) {
        try {
            doClose();
        } catch (RuntimeException | Error e) {
            failure.addSuppressed(e);
        }
    }

    /** Closes the component once; see the class comment. */
    @Override
    public final void close() {
        synchronized (lock) {
            if (state == State.CLOSED) {
                return;
            }
            state = State.CLOSED;
        }
        doClose();
    }

    public final State state() {
        return state;
    }

    /** True between a successful start and close; cheap (a volatile read), safe from any thread. */
    public final boolean isRunning() {
        return state == State.RUNNING;
    }

    /** True once {@link #close()} was called or a start failed. */
    public final boolean isClosed() {
        return state == State.CLOSED;
    }

    /** The name given at construction, for log lines. */
    protected final String name() {
        return name;
    }

    /**
     * Starts what the component runs. Called once, under the lifecycle lock. Throw to fail the start; what already
     * started is then stopped by {@link #doClose()}.
     */
    protected abstract void doStart();

    /**
     * Stops what {@link #doStart()} started, in reverse order, and releases what the constructor acquired; copes with a
     * partial start or none. Called exactly once (by {@link #close()} or a failed start), outside the lifecycle lock
     * when called by {@code close()}, with {@link #state()} already {@code CLOSED}.
     */
    protected abstract void doClose();
}
