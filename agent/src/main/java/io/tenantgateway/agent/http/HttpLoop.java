package io.tenantgateway.agent.http;

import static java.util.Objects.requireNonNull;

import io.netty.channel.EventLoopGroup;
import io.tenantgateway.common.concurrent.DaemonThreads;
import io.tenantgateway.common.lifecycle.Lifecycle;
import io.tenantgateway.tunnel.transport.Transports;
import java.time.Duration;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The threads of the agent's own HTTP ports (health and admin): one Netty event loop ({@code tg-http-…}, epoll where it
 * loads, as the tunnel's) that every {@link HttpEndpoint} on it shares, and a small bounded executor
 * ({@code tg-http-blocking-N}, {@value #BLOCKING_THREADS} threads, started on demand, {@value #BLOCKING_QUEUE}
 * queued tasks) for the few handlers that block (JFR recordings, diagnostic commands, file work). Its own loop,
 * not the tunnel's: a scrape or a status page never delays a tunnel's bytes, and it costs one thread.
 *
 * <p>Threading: thread-safe. {@link #blocking} and {@link #schedule} may be called from any thread once started;
 * a task refused because the executor is full fails its future with {@link RejectedExecutionException} (the
 * caller answers 503). Closing stops the loop within {@link #CLOSE_TIMEOUT} and interrupts blocking tasks.
 */
public final class HttpLoop extends Lifecycle {
    static final int BLOCKING_THREADS = 2;
    static final int BLOCKING_QUEUE = 16;
    static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(10);

    private final String threadName;
    private volatile EventLoopGroup group;
    private volatile ThreadPoolExecutor blocking;

    public HttpLoop() {
        this("tg-http");
    }

    /** @param threadName the loop's thread name; the blocking threads are {@code threadName-blocking-N} */
    public HttpLoop(String threadName) {
        super("HTTP loop " + requireNonNull(threadName, "threadName"));
        this.threadName = threadName;
    }

    @Override
    protected void doStart() {
        group = Transports.newGroup(1, threadName);
        ThreadPoolExecutor executor = new ThreadPoolExecutor(BLOCKING_THREADS, BLOCKING_THREADS, 30,
                TimeUnit.SECONDS, new ArrayBlockingQueue<>(BLOCKING_QUEUE),
                DaemonThreads.numbered(threadName + "-blocking"), new ThreadPoolExecutor.AbortPolicy());
        executor.allowCoreThreadTimeOut(true); // no thread until a handler needs one, none left when idle
        blocking = executor;
    }

    /** The event loop group the endpoints bind on. */
    EventLoopGroup group() {
        EventLoopGroup current = group;
        if (current == null || !isRunning()) {
            throw new IllegalStateException(name() + " is not running (start it before the endpoints)");
        }
        return current;
    }

    /**
     * Runs {@code work} on a blocking thread. The future completes there; callers that answer a request hand the
     * result to {@link Response}, which moves to the connection's loop itself.
     */
    public <T> CompletableFuture<T> blocking(Callable<T> work) {
        requireNonNull(work, "work");
        CompletableFuture<T> result = new CompletableFuture<>();
        ThreadPoolExecutor executor = blocking;
        if (executor == null || !isRunning()) {
            result.completeExceptionally(new RejectedExecutionException(name() + " is not running"));
            return result;
        }
        try {
            executor.execute(() -> {
                try {
                    result.complete(work.call());
                } catch (Exception | Error e) {
                    result.completeExceptionally(e);
                }
            });
        } catch (RejectedExecutionException e) {
            result.completeExceptionally(new RejectedExecutionException("busy: " + BLOCKING_THREADS
                    + " blocking tasks running and " + BLOCKING_QUEUE + " queued; try again later", e));
        }
        return result;
    }

    /** Runs {@code task} on the loop after {@code delay}: a timer, not a sleeping thread. */
    public ScheduledFuture<?> schedule(Duration delay, Runnable task) {
        requireNonNull(task, "task");
        return group().schedule(task, Math.max(0, delay.toMillis()), TimeUnit.MILLISECONDS);
    }

    @Override
    protected void doClose() {
        ThreadPoolExecutor executor = blocking;
        if (executor != null) {
            executor.shutdownNow();
        }
        EventLoopGroup current = group;
        if (current != null) {
            current.shutdownGracefully(0, CLOSE_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
                    .awaitUninterruptibly(CLOSE_TIMEOUT.toMillis() + 1000);
        }
    }
}
