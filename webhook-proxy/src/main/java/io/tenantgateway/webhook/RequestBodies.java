package io.tenantgateway.webhook;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.common.memory.MemoryBudget;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerRequest;
import java.io.InputStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * Admission request bodies in flight, every byte of them reserved from one {@link MemoryBudget} heap account
 * ({@value #ACCOUNT}) as it arrives, partial bodies included, until the request is answered or its connection goes.
 * A chunk that does not fit is not held: the request is refused (429, {@code Retry-After}) and its connection
 * closed. Before refusing, bodies that have been arriving for longer than {@link #CUT_AFTER} are cut (their
 * connection closed, their bytes released), oldest first, when they
 * received nothing for {@link #CUT_AFTER} (stalled) or arrive slower than {@link #MIN_BYTES_PER_SECOND} (trickling):
 * kube-apiserver sends a whole review at once, so under memory pressure such a body holds memory a review needs.
 *
 * <p>Bodies larger than the limit are never held: they are counted and dropped (the caller answers 413).
 *
 * <p>Thread-safe: requests on several event loops share the account; each {@link InFlight} is locked on itself.
 */
final class RequestBodies {
    static final String ACCOUNT = "webhook-bodies";
    /**
     * The account's share of the heap: at the launcher's 64 MiB heap for a webhook agent 19.2 MiB, four 3.25 MiB
     * reviews in flight with their kept trees (the kube-apiserver sends few at once: one per pod being created).
     */
    static final double HEAP_SHARE = 0.30;
    /** At least one review at the body limit, whatever the heap. */
    static final long MINIMUM_BYTES = 4L * 1024 * 1024;
    /**
     * Under memory pressure, bodies that received nothing for this long are cut to make room. Not shorter: a
     * client sending several large reviews at once over a busy link (or a busy 2-core node) starves some of its
     * connections for a second or more (measured: 1 s cut legitimate concurrent reviews in WebhookMemoryBudgetIT).
     */
    static final Duration CUT_AFTER = Duration.ofSeconds(3);
    /**
     * Under memory pressure, bodies in flight for over {@link #CUT_AFTER} that arrive slower than this on average
     * are cut too (trickling): at 128 KiB/s a body at the 3.25 MiB limit needs 26 s, past the 10 s request
     * deadline, so it could never be answered anyway.
     */
    static final long MIN_BYTES_PER_SECOND = 128 * 1024;
    /**
     * What holding one chunk costs on the heap besides its bytes: the chunk's buffer objects (a Vert.x buffer over a
     * Netty heap buffer and its array header) and its slot in the list. Reserved with every chunk held, so a body
     * sent as many tiny pieces (HTTP/1.1 chunks of one byte, HTTP/2 DATA frames of one byte) is counted at what it
     * really holds: measured, 1.1 million one-byte chunks of one 1.1 MB body (6.6 MB on the wire, 2 s) ran the 64 MiB
     * heap out when only their bytes were counted. A review kube-apiserver sends arrives in chunks of kilobytes,
     * where this is under 1 %.
     */
    static final long CHUNK_OVERHEAD_BYTES = 128;

    private final MemoryBudget.Account account;
    private final LongSupplier nanoTime;
    private final Runnable onCut;
    private final Set<InFlight> inFlight = ConcurrentHashMap.newKeySet();

    RequestBodies(MemoryBudget.Account account, LongSupplier nanoTime, Runnable onCut) {
        this.account = requireNonNull(account, "account");
        this.nanoTime = requireNonNull(nanoTime, "nanoTime");
        this.onCut = requireNonNull(onCut, "onCut");
    }

    /** The default account of this JVM's budget. */
    static MemoryBudget.Account defaultAccount() {
        return MemoryBudget.jvm().account(ACCOUNT, MemoryBudget.Pool.HEAP, HEAP_SHARE, MINIMUM_BYTES);
    }

    MemoryBudget.Account account() {
        return account;
    }

    /** What reading a body gave. */
    record Body(List<Buffer> chunks, long size, boolean tooLarge, boolean abandoned, boolean refused) {
        /** The body as a stream over its chunks (no copy). */
        InputStream stream() {
            return new ChunksInputStream(chunks);
        }

        /** The body in one buffer (a copy, for the upstream call). */
        Buffer joined() {
            Buffer whole = Buffer.buffer((int) size);
            chunks.forEach(whole::appendBuffer);
            return whole;
        }
    }

    /**
     * Starts reading {@code request}'s body; call in the request handler, before the body arrives. The returned
     * {@link InFlight} must be {@link InFlight#release() released} once the request is answered; it also releases
     * itself when the connection closes before the body ended.
     */
    InFlight read(HttpServerRequest request, int limit, long discardLimit) {
        InFlight body = new InFlight(request, Vertx.currentContext(), limit, Math.max(limit, discardLimit));
        inFlight.add(body);
        // A connection (or HTTP/2 stream) that goes before the body ended reaches the request's exception handler;
        // the response's close handler belongs to the connection guard (ConnectionGuard), not to us.
        request.exceptionHandler(failure -> {
            body.release();
            body.promise.tryFail(failure);
        });
        request.handler(chunk -> {
            if (body.accept(chunk)) {
                request.handler(null);
                request.endHandler(null);
            }
        });
        request.endHandler(ignored -> body.end());
        return body;
    }

    /** Reserves {@code bytes} for {@code who}, cutting stalled bodies of others first when the account is full. */
    private boolean reserve(InFlight who, long bytes) {
        if (account.tryReserve(bytes)) {
            return true;
        }
        long now = nanoTime.getAsLong();
        List<InFlight> stalled = new ArrayList<>();
        for (InFlight other : inFlight) {
            if (other != who && other.cuttable(now)) {
                stalled.add(other);
            }
        }
        stalled.sort(Comparator.comparingLong(other -> other.started));
        for (InFlight other : stalled) {
            if (other.cut()) {
                onCut.run();
                if (account.tryReserve(bytes)) {
                    return true;
                }
            }
        }
        return false;
    }

    /** One request's body: its chunks, the bytes it holds in the account, and how reading it ended. */
    final class InFlight {
        private final HttpServerRequest request;
        private final Context context;
        private final int limit;
        private final long discardLimit;
        final long started = nanoTime.getAsLong();
        private long lastProgress = started;
        private final Promise<Body> promise = Promise.promise();
        private List<Buffer> chunks = new ArrayList<>();
        private long size;
        private long reserved;
        /** The part of {@link #reserved} the held chunks account for. */
        private long chunkBytes;
        private boolean complete;
        private boolean released;
        /** The budget refused a chunk: answered 429 at once, the connection closed, the rest never read. */
        private boolean refused;

        InFlight(HttpServerRequest request, Context context, int limit, long discardLimit) {
            this.request = request;
            this.context = context;
            this.limit = limit;
            this.discardLimit = discardLimit;
        }

        Future<Body> body() {
            return promise.future();
        }

        /**
         * Holds the chunk if it fits under the limit and in the budget. Past the limit it counts and drops it (the
         * caller answers 413 once the body has ended, so the client reads a clean answer); when the budget refuses
         * it, reading stops and the caller answers 429 and closes the connection at once (reading the rest would
         * cost a TLS decryption per byte for nothing).
         *
         * @return true when reading stops here (past the discard limit, or cut)
         */
        boolean accept(Buffer chunk) {
            long giveBack = 0;
            synchronized (this) {
                if (released && !refused) {
                    return true; // cut
                }
                size += chunk.length();
                lastProgress = nanoTime.getAsLong();
                if (size > limit || refused) {
                    // Over the limit or refused: keep counting, hold nothing (and reserve nothing).
                    dropChunks();
                    giveBack = reserved;
                    reserved = 0;
                    chunkBytes = 0;
                }
            }
            if (giveBack > 0) {
                account.release(giveBack);
            }
            synchronized (this) {
                if (size > limit || refused) {
                    if (size > discardLimit) {
                        promise.tryComplete(new Body(List.of(), size, size > limit, true, refused));
                        return true;
                    }
                    return false;
                }
            }
            if (!reserveMore(chunk.length() + CHUNK_OVERHEAD_BYTES)) {
                synchronized (this) {
                    refused = true;
                }
                release(); // hold nothing; the caller answers 429 now and closes the connection
                promise.tryComplete(new Body(List.of(), size, false, true, true));
                return true;
            }
            synchronized (this) {
                if (released) {
                    return true;
                }
                chunks.add(chunk);
                chunkBytes += chunk.length() + CHUNK_OVERHEAD_BYTES;
            }
            return false;
        }

        void end() {
            synchronized (this) {
                complete = true;
                if (released && !refused) {
                    return;
                }
            }
            boolean tooLarge = size > limit;
            promise.tryComplete(new Body(tooLarge || refused ? List.of() : chunks, size, tooLarge, false,
                    refused && !tooLarge));
        }

        /** Reserves bytes beyond the body (the parsed tree, a joined copy); false when the account refuses. */
        boolean reserveMore(long bytes) {
            if (!reserve(this, bytes)) {
                return false;
            }
            synchronized (this) {
                if (!released) {
                    reserved += bytes;
                    return true;
                }
            }
            account.release(bytes); // cut meanwhile
            return false;
        }

        /**
         * Drops the chunks (they were parsed or copied); their reservation stays until {@link #release()}. Clears
         * the list itself: the {@link Body} handed out shares it, and a kept-alive connection keeps this request
         * (and its completed body future) reachable until the next request (measured: 30 MB of answered bodies
         * held that way ran a 48 MiB heap out).
         */
        synchronized void dropChunks() {
            chunks.clear();
            chunks = new ArrayList<>(0);
        }

        /**
         * Drops the chunks and gives back what they held: the body has been parsed (the kept tree is charged on its
         * own) and nothing reads it again.
         */
        void releaseChunks() {
            long bytes;
            synchronized (this) {
                dropChunks();
                bytes = Math.min(chunkBytes, reserved);
                chunkBytes = 0;
                reserved -= bytes;
            }
            if (bytes > 0) {
                account.release(bytes);
            }
        }

        /** Gives back {@code bytes} of what {@link #reserveMore} reserved (a working buffer that is gone). */
        void giveBack(long bytes) {
            long given;
            synchronized (this) {
                given = Math.min(bytes, reserved);
                reserved -= given;
            }
            if (given > 0) {
                account.release(given);
            }
        }

        /** Gives back everything this body holds; idempotent. */
        void release() {
            long bytes;
            synchronized (this) {
                if (released) {
                    return;
                }
                released = true;
                bytes = reserved;
                reserved = 0;
                chunkBytes = 0;
                dropChunks();
            }
            inFlight.remove(this);
            if (bytes > 0) {
                account.release(bytes);
            }
        }

        synchronized boolean cuttable(long now) {
            if (complete || released || reserved == 0 || now - started < CUT_AFTER.toNanos()) {
                return false;
            }
            boolean stalled = now - lastProgress >= CUT_AFTER.toNanos();
            boolean trickling = size * 1_000_000_000L / (now - started) < MIN_BYTES_PER_SECOND;
            return stalled || trickling;
        }

        /** Releases this stalled body and closes its connection (on its own event loop). */
        boolean cut() {
            synchronized (this) {
                if (complete || released) {
                    return false;
                }
            }
            long now = nanoTime.getAsLong();
            String detail;
            synchronized (this) {
                detail = size + " bytes in " + (now - started) / 1_000_000 + " ms, the last "
                        + (now - lastProgress) / 1_000_000 + " ms ago";
            }
            release();
            promise.tryFail(new IllegalStateException("request body cut: the " + ACCOUNT + " memory budget was full"
                    + " and this body was stalled (nothing for " + CUT_AFTER.toMillis() + " ms) or slower than "
                    + MIN_BYTES_PER_SECOND + " bytes/s: " + detail));
            Runnable close = () -> {
                if (!request.response().closed()) {
                    request.response().reset();
                }
            };
            if (context != null) {
                context.runOnContext(ignored -> close.run());
            } else {
                close.run();
            }
            return true;
        }

        synchronized long reservedBytes() {
            return reserved;
        }
    }

    /** An {@link InputStream} over a list of buffers, read in place. */
    private static final class ChunksInputStream extends InputStream {
        private final List<Buffer> chunks;
        private int index;
        private int offset;

        ChunksInputStream(List<Buffer> chunks) {
            this.chunks = chunks;
        }

        @Override
        public int read() {
            byte[] one = new byte[1];
            return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] into, int at, int length) {
            if (length == 0) {
                return 0;
            }
            while (index < chunks.size() && offset >= chunks.get(index).length()) {
                index++;
                offset = 0;
            }
            if (index >= chunks.size()) {
                return -1;
            }
            Buffer chunk = chunks.get(index);
            int n = Math.min(length, chunk.length() - offset);
            chunk.getBytes(offset, offset + n, into, at);
            offset += n;
            return n;
        }
    }
}
