package io.tenantgateway.common.concurrent;

import static java.util.Objects.requireNonNull;

import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Named daemon threads, so that a forgotten executor never keeps the JVM alive and a thread dump says whose thread it
 * is. Thread-safe.
 */
public final class DaemonThreads implements ThreadFactory {
    private final String name;
    private final boolean numbered;
    private final AtomicInteger count = new AtomicInteger();

    private DaemonThreads(String name, boolean numbered) {
        this.name = requireNonNull(name, "name");
        this.numbered = numbered;
    }

    /** Every thread is called {@code name} (for single-thread executors). */
    public static DaemonThreads named(String name) {
        return new DaemonThreads(name, false);
    }

    /** Threads are called {@code prefix-1}, {@code prefix-2}, … */
    public static DaemonThreads numbered(String prefix) {
        return new DaemonThreads(prefix, true);
    }

    /** One unstarted daemon thread named {@code name}. */
    public static Thread newThread(String name, Runnable runnable) {
        Thread thread = new Thread(requireNonNull(runnable, "runnable"), requireNonNull(name, "name"));
        thread.setDaemon(true);
        return thread;
    }

    @Override
    public Thread newThread(Runnable runnable) {
        return newThread(numbered ? name + "-" + count.incrementAndGet() : name, runnable);
    }
}
