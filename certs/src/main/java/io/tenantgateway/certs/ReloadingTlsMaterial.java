package io.tenantgateway.certs;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.common.concurrent.DaemonThreads;
import io.tenantgateway.common.lifecycle.Lifecycle;
import java.io.IOException;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * TLS material read from PEM files and reloaded when they change.
 *
 * <p>Works with the Kubernetes secret-volume layout, where {@code tls.crt} is a symlink into {@code ..data}, and
 * {@code ..data} is itself a symlink that the kubelet swaps atomically: the watcher listens to the files' parent
 * directories (where the swap shows up as create/delete events) and compares the content it reads through the
 * links, so it reacts to the swap and ignores events that change nothing. A poll at {@code pollInterval} backs the
 * watcher up on file systems that do not deliver events.
 *
 * <p>A change that does not load (garbage PEM, key not matching the certificate, a half-written file) keeps the
 * previous material and logs one error naming the file; the same broken content is not reported again.
 *
 * <p>Threading: one daemon thread owns the watch loop; {@link #current()} is a volatile read and never blocks.
 */
public final class ReloadingTlsMaterial extends Lifecycle implements TlsMaterial {
    private static final Logger log = LoggerFactory.getLogger(ReloadingTlsMaterial.class);
    /** Coalesces the burst of events one swap produces, and lets a writer finish the second of two files. */
    private static final Duration DEBOUNCE = Duration.ofMillis(100);

    private final TlsFiles files;
    private final Duration pollInterval;
    private final List<Consumer<Snapshot>> listeners = new CopyOnWriteArrayList<>();
    private volatile Snapshot current;
    private volatile String loadedFingerprint;
    private volatile String lastFailure;
    private String failedFingerprint;
    private volatile WatchService watchService;
    private volatile Thread watcher;

    private ReloadingTlsMaterial(TlsFiles files, Duration pollInterval) {
        super("TLS reload of " + files.all());
        this.files = files;
        this.pollInterval = pollInterval;
    }

    /**
     * Loads the files now. Fails with a {@link CertificateFileException} naming the file if the initial material
     * is unusable: a process should not start with broken TLS.
     */
    public static ReloadingTlsMaterial load(TlsFiles files, Duration pollInterval) {
        requireNonNull(files, "files");
        requireNonNull(pollInterval, "pollInterval");
        if (pollInterval.isNegative() || pollInterval.isZero()) {
            throw new IllegalArgumentException("pollInterval: " + pollInterval + " (expected: > 0)");
        }
        ReloadingTlsMaterial material = new ReloadingTlsMaterial(files, pollInterval);
        String fingerprint = material.fingerprint();
        material.current = files.load(1);
        material.loadedFingerprint = fingerprint;
        return material;
    }

    @Override
    public Snapshot current() {
        return current;
    }

    public TlsFiles files() {
        return files;
    }

    /** The last reload error, or {@code null} while the files on disk are the ones in use. */
    public String lastFailure() {
        return lastFailure;
    }

    /** Called (on the watcher thread) after each successful reload. */
    public void addListener(Consumer<Snapshot> listener) {
        listeners.add(requireNonNull(listener, "listener"));
    }

    /** Starts watching. Idempotent ({@link Lifecycle#start()}; a failed start leaves it closed). */
    @Override
    protected void doStart() {
        try {
            watchService = FileSystems.getDefault().newWatchService();
        } catch (IOException e) {
            throw new IllegalStateException("cannot create a file watcher for " + files.all() + ": "
                    + e.getMessage(), e);
        }
        for (Path directory : watchedDirectories()) {
            try {
                directory.register(watchService, StandardWatchEventKinds.ENTRY_CREATE,
                        StandardWatchEventKinds.ENTRY_MODIFY, StandardWatchEventKinds.ENTRY_DELETE);
            } catch (IOException e) {
                // Polling still works; say once that reloads may lag by up to the poll interval.
                log.warn("cannot watch {} ({}); polling its TLS files every {}", directory, e.getMessage(),
                        pollInterval);
            }
        }
        Thread thread = DaemonThreads.newThread("tls-reload-" + files.all().iterator().next().getFileName(),
                this::watchLoop);
        watcher = thread;
        thread.start();
    }

    /** Checks the files now (the watcher does this by itself; exposed for callers that know a change happened). */
    public synchronized boolean reloadIfChanged() {
        String fingerprint;
        try {
            fingerprint = fingerprint();
        } catch (CertificateFileException e) {
            reportFailure("missing:" + e.getMessage(), e);
            return false;
        }
        if (fingerprint.equals(loadedFingerprint) || fingerprint.equals(failedFingerprint)) {
            return false;
        }
        Snapshot loaded;
        try {
            loaded = files.load(current.generation() + 1);
        } catch (RuntimeException e) {
            failedFingerprint = fingerprint;
            reportFailure(fingerprint, e);
            return false;
        }
        current = loaded;
        loadedFingerprint = fingerprint;
        failedFingerprint = null;
        lastFailure = null;
        log.info("reloaded TLS material generation={} files={} identity={}", loaded.generation(), files.all(),
                loaded.identity().map(b -> b.leaf().getSubjectX500Principal().getName()
                        + " notAfter=" + b.leaf().getNotAfter().toInstant()).orElse("none"));
        for (Consumer<Snapshot> listener : listeners) {
            try {
                listener.accept(loaded);
            } catch (RuntimeException e) {
                log.error("TLS reload listener failed generation={}", loaded.generation(), e);
            }
        }
        return true;
    }

    private void reportFailure(String fingerprint, RuntimeException e) {
        String message = e.getMessage();
        if (!message.equals(lastFailure)) {
            log.error("TLS reload failed, keeping the previous material (generation {}): {}",
                    current.generation(), message);
        }
        lastFailure = message;
        failedFingerprint = fingerprint;
    }

    private void watchLoop() {
        while (!Thread.currentThread().isInterrupted()) {
            try {
                WatchService service = watchService;
                if (service == null) {
                    return;
                }
                // Wakes on a file event or after pollInterval, whichever comes first.
                WatchKey key = service.poll(pollInterval.toMillis(), TimeUnit.MILLISECONDS);
                if (key != null) {
                    drain(key);
                    WatchKey more;
                    while ((more = service.poll(DEBOUNCE.toMillis(), TimeUnit.MILLISECONDS)) != null) {
                        drain(more);
                    }
                }
                reloadIfChanged();
            } catch (InterruptedException | ClosedWatchServiceException e) {
                return;
            } catch (RuntimeException e) {
                log.error("TLS reload check failed files={}", files.all(), e);
            }
        }
    }

    private static void drain(WatchKey key) {
        key.pollEvents();
        key.reset();
    }

    private Set<Path> watchedDirectories() {
        Set<Path> directories = new LinkedHashSet<>();
        for (Path file : files.all()) {
            Path parent = file.toAbsolutePath().getParent();
            if (parent != null && Files.isDirectory(parent)) {
                directories.add(parent);
            }
        }
        return directories;
    }

    /** SHA-256 over the content of every file, read through symlinks. */
    private String fingerprint() {
        try {
            MessageDigest digest = MessageDigest.getInstance("SHA-256");
            for (Path file : files.all()) {
                digest.update(Pem.read(file).getBytes(java.nio.charset.StandardCharsets.US_ASCII));
                digest.update((byte) 0);
            }
            return HexFormat.of().formatHex(digest.digest());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 unavailable", e);
        }
    }

    /** Stops the watcher (waiting up to 5 s for it). */
    @Override
    protected void doClose() {
        Thread toJoin = watcher;
        if (toJoin != null) {
            toJoin.interrupt();
        }
        closeWatchService();
        if (toJoin != null) {
            try {
                toJoin.join(TimeUnit.SECONDS.toMillis(5));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private void closeWatchService() {
        if (watchService != null) {
            try {
                watchService.close();
            } catch (IOException e) {
                log.debug("closing the TLS file watcher failed", e);
            }
            watchService = null;
        }
    }
}
