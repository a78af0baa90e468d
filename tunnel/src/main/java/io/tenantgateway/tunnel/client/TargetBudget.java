package io.tenantgateway.tunnel.client;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.common.memory.MemoryBudget;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The agent's direct-memory account for what servers push towards targets ({@value #ACCOUNT}): payload written to
 * target sockets and not yet taken by the kernel (Netty's heap→direct copy of each DATA sits in the channel's
 * outbound buffer), plus one maximum-size inbound message per server stream that has a message requested (grpc's
 * deframer pulls a requested message out of the HTTP/2 window into direct buffers before it is delivered).
 *
 * <p>A stream requests its next message only when that reservation fits, so what all servers together can make the
 * agent hold towards targets stays within the account whatever they send; past it streams wait here (the shared
 * stream pauses, no tunnel is dropped) and are woken when targets drain. A stream that holds no target bytes of its
 * own always gets its request (counted even past the limit): it cannot free anything by waiting, and otherwise
 * several servers' idle reservations could starve each other.
 *
 * <p>Thread-safe: streams on different event loops share it; wake-ups are handed to each waiter's own loop.
 */
final class TargetBudget {
    /** The account's name in the agent's memory-budget table (agent/REFERENCE.md). */
    static final String ACCOUNT = "tunnel-target-buffers";
    /**
     * Share of the direct-memory limit: 3/8 (12 MiB of the agent's 32 MiB). The rest is for what the account does
     * not cover: each server connection's HTTP/2 receive window (filled while a stream is paused; 1 MiB to start, at
     * most 8 MiB as grpc's flow-control tuning grows it), grpc's outbound framer buffers, TLS buffers and the pooled
     * allocator's partly used chunks.
     */
    static final double SHARE = 0.375;
    /** Floor for tiny direct limits: one maximum-size message plus a little room to write it out. */
    static final long MINIMUM = 6L * 1024 * 1024;

    private final MemoryBudget.Account account;
    private final ConcurrentLinkedQueue<Runnable> waiters = new ConcurrentLinkedQueue<>();
    private final AtomicInteger pausedStreams = new AtomicInteger();

    TargetBudget(MemoryBudget.Account account) {
        this.account = requireNonNull(account, "account");
    }

    static TargetBudget of(MemoryBudget budget) {
        return new TargetBudget(budget.account(ACCOUNT, MemoryBudget.Pool.DIRECT, SHARE, MINIMUM));
    }

    MemoryBudget.Account account() {
        return account;
    }

    long limit() {
        return account.limit();
    }

    /** Reserves {@code bytes} if they fit; otherwise nothing is reserved. */
    boolean tryReserve(long bytes) {
        return account.tryReserve(bytes);
    }

    /** Counts bytes already held (a delivered DATA on its way to a target), even past the limit. */
    void reserveAnyway(long bytes) {
        account.reserveAnyway(bytes);
    }

    void release(long bytes) {
        account.release(bytes);
        if (!waiters.isEmpty() && fits(TunnelClient.REQUEST_RESERVATION)) {
            wakeAll();
        }
    }

    /**
     * Runs {@code wake} (which must hand over to its own loop and be cheap) once {@code bytes} may fit again. A
     * waiter that still does not fit waits again.
     */
    void await(long bytes, Runnable wake) {
        waiters.add(wake);
        if (fits(bytes)) { // released between the failed reservation and now
            wakeAll();
        }
    }

    /**
     * A stream paused ({@code true}) or resumed ({@code false}) for want of room here; each pause is followed by
     * exactly one resume. Unlike {@link #await}'s queue, which a wake-up empties for a moment, the count stays up for
     * as long as a stream waits.
     */
    void streamPaused(boolean paused) {
        if (paused) {
            pausedStreams.incrementAndGet();
        } else {
            pausedStreams.decrementAndGet();
        }
    }

    /** Whether some stream is paused until target bytes here are released (any stream's). */
    boolean streamsPaused() {
        return pausedStreams.get() > 0;
    }

    private boolean fits(long bytes) {
        return account.used() + bytes <= account.limit();
    }

    private void wakeAll() {
        Runnable next;
        while ((next = waiters.poll()) != null) {
            next.run();
        }
    }
}
