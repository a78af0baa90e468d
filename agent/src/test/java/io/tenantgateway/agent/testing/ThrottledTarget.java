package io.tenantgateway.agent.testing;

import io.tenantgateway.common.concurrent.DaemonThreads;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A loopback target that accepts one connection and reads it as told: nothing ({@code kubectl exec -i} into a process
 * that ignores stdin), at a fixed rate, or as fast as it can; it hashes what it read. Its receive buffer is small
 * (4 KiB), so the kernel takes little for it and hands it data in small steps, as across a network (on loopback with
 * default buffers a 64 KiB MSS makes those steps 64 KiB).
 */
public final class ThrottledTarget implements AutoCloseable {
    private static final long UNLIMITED = Long.MAX_VALUE;

    private final ServerSocket listener;
    private final MessageDigest digest = HostileServer.newDigest();
    private final Object lock = new Object();
    public final AtomicLong received = new AtomicLong();
    private long bytesPerSecond; // guarded by lock; 0: not reading
    private volatile Socket socket;

    /** @param bytesPerSecond the reading rate to start with; 0: not reading */
    public ThrottledTarget(long bytesPerSecond) throws IOException {
        this.bytesPerSecond = bytesPerSecond;
        listener = new ServerSocket();
        listener.setReceiveBufferSize(4096);
        listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 1);
        DaemonThreads.newThread("throttled-target", this::run).start();
    }

    public String address() {
        return "127.0.0.1:" + listener.getLocalPort();
    }

    /** Reads as fast as it can from now on. */
    public void readFreely() {
        synchronized (lock) {
            bytesPerSecond = UNLIMITED;
            lock.notifyAll();
        }
    }

    private void run() {
        try {
            socket = listener.accept();
            InputStream in = socket.getInputStream();
            byte[] buffer = new byte[64 * 1024];
            long start = 0;
            long readSinceStart = 0;
            while (true) {
                int chunk;
                synchronized (lock) {
                    while (bytesPerSecond == 0) {
                        lock.wait();
                    }
                    if (bytesPerSecond == UNLIMITED) {
                        chunk = buffer.length;
                    } else {
                        // 1 KiB at a time on a schedule (not a sleep per read), so a late wake-up catches up.
                        long now = System.nanoTime();
                        if (start == 0) {
                            start = now;
                        }
                        long due = start + TimeUnit.SECONDS.toNanos(1) * readSinceStart / bytesPerSecond;
                        if (due > now) {
                            TimeUnit.NANOSECONDS.timedWait(lock, due - now);
                            continue;
                        }
                        chunk = 1024;
                    }
                }
                int n = in.read(buffer, 0, chunk);
                if (n < 0) {
                    return;
                }
                readSinceStart += n;
                synchronized (digest) {
                    digest.update(buffer, 0, n);
                }
                received.addAndGet(n);
            }
        } catch (IOException | InterruptedException e) {
            // closed: by the test, or the agent closed the tunnel
        }
    }

    /** SHA-256 of everything read so far. */
    public String sha256() {
        synchronized (digest) {
            try {
                return HexFormat.of().formatHex(((MessageDigest) digest.clone()).digest());
            } catch (CloneNotSupportedException e) {
                throw new IllegalStateException(e);
            }
        }
    }

    @Override
    public void close() throws IOException {
        readFreely();
        if (socket != null) {
            socket.close();
        }
        listener.close();
    }
}
