package io.tenantgateway.deviceplugin;

import static java.util.Objects.requireNonNull;

import io.grpc.ForwardingServerCall;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.StatusRuntimeException;
import io.netty.channel.EventLoopGroup;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.tenantgateway.common.concurrent.DaemonThreads;
import io.tenantgateway.common.lifecycle.Lifecycle;
import io.tenantgateway.common.retry.Backoff;
import io.tenantgateway.deviceplugin.DevicePluginSnapshot.Phase;
import io.tenantgateway.deviceplugin.policy.VirtualDevice;
import io.tenantgateway.hami.GpuDevice;
import java.io.IOException;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchEvent;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A kubelet device plugin for one resource, as HAMi's NVIDIA plugin runs it: serves {@code v1beta1.DevicePlugin} on
 * {@code <dir>/<socket>} ({@code nvidia-<resource>.sock} for NVIDIA, the vendor plugin's own name for a simulated
 * Hygon or Ascend device: {@link DevicePluginConfig#socketName()}), registers with {@code <dir>/kubelet.sock}, lists
 * the devices it is given as replicas (resent on every change), and hands Allocate to an {@link Allocator}.
 *
 * <ul>
 *   <li><b>Kubelet restarts</b>: kubelet deletes every plugin socket and creates {@code kubelet.sock} anew; a
 *       deleted (or replaced) own socket and a new {@code kubelet.sock} both make the plugin stop serving, serve
 *       again and register again. File events come from a {@link WatchService} on the directory; a check every
 *       {@code checkInterval} (file identity: inode and modification time) catches what events miss, and a
 *       directory that appears only later.</li>
 *   <li><b>Another plugin</b> (HAMi's or NVIDIA's, same socket name) serving the socket, found at start or when our
 *       socket is replaced: the plugin stops, does not come back until the agent restarts, and tells its
 *       {@link Listener} (the agent then stops writing the register annotation): two plugins must not both serve
 *       {@code nvidia.com/gpu} (HAMi #2076). A stale socket file (nobody listening) is removed.</li>
 *   <li>The socket is bound under a temporary name and renamed into place, so that stopping never deletes a file
 *       at the final path that another process has put there since.</li>
 * </ul>
 *
 * <p>Threading: one supervisor thread ({@code device-plugin}) does all serving, probing and registering, one step at
 * a time; the watch thread only wakes it. gRPC calls run on the single call thread of {@link DevicePluginService}.
 * {@link #updateDevices} and {@link #discoveryFailed} may be called from any thread; {@link #snapshot()} reads
 * volatile state only. Lifecycle: {@link Lifecycle} (a failed start leaves it closed).
 */
public final class DevicePlugin extends Lifecycle {
    private static final Logger log = LoggerFactory.getLogger(DevicePlugin.class);

    /** Told when the plugin steps aside for another one. Called on the supervisor or the starting thread. */
    public interface Listener {
        void standingAside(String reason);
    }

    private final DevicePluginConfig config;
    private final DevicePluginMetrics metrics;
    private final Listener listener;
    private final String version;
    private final Clock clock;
    private final ExecutorService calls = Executors.newSingleThreadExecutor(DaemonThreads.named("device-plugin-calls"));
    private final DevicePluginService service;
    private final Object deviceLock = new Object();

    private EventLoopGroup group;
    private ScheduledExecutorService supervisor;
    private WatchService watch;
    private Thread watcher;
    private boolean metricsRegistered;

    // Owned by the supervisor thread.
    private Server server;
    private FileIdentity served;
    private FileIdentity registeredKubelet;
    private final Backoff.Execution failures;
    private Instant notBefore;
    private String lastProblem;

    // Published.
    private volatile Phase phase = Phase.NEW;
    private volatile String detail = "not started";
    private volatile List<VirtualDevice> devices;
    private volatile int registrations;
    private volatile Instant lastRegistration;

    /**
     * @param version this agent's version: the {@value SocketProbe#MARKER_HEADER} header of every answer
     */
    public DevicePlugin(DevicePluginConfig config, Allocator allocator, PrometheusRegistry registry,
            Listener listener, String version, Clock clock) {
        super("device plugin for " + requireNonNull(config, "config").resourceName());
        this.config = config;
        this.metrics = new DevicePluginMetrics(registry);
        this.listener = requireNonNull(listener, "listener");
        this.version = requireNonNull(version, "version");
        this.clock = requireNonNull(clock, "clock");
        this.service = new DevicePluginService(config, requireNonNull(allocator, "allocator"), metrics, calls);
        this.failures = config.retry().start(new Random());
    }

    public DevicePluginConfig config() {
        return config;
    }

    /**
     * Probes the socket at once (another plugin there: the plugin stands aside before this returns, and the listener
     * has been told), then serves and registers in the background.
     */
    @Override
    protected void doStart() {
        metrics.register();
        metricsRegistered = true;
        group = UnixSockets.newGroup(1, "device-plugin-io");
        supervisor = Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("device-plugin"));
        SocketProbe.Result probe = SocketProbe.probe(config.socket(), group, config.dialTimeout());
        if (probe.kind() == SocketProbe.Kind.FOREIGN) {
            standAside(probe.detail());
            return;
        }
        phase = Phase.WAITING_FOR_KUBELET;
        detail = "starting";
        log.info("device plugin starting resource={} socket={} kubelet={} preferredAllocation={} numaTopology={}",
                config.resourceName(), config.socket(), config.kubeletSocket(), config.preferredAllocation(),
                config.numaTopology());
        long interval = config.checkInterval().toNanos();
        supervisor.scheduleWithFixedDelay(this::reconcileSafely, 0, interval, TimeUnit.NANOSECONDS);
    }

    @Override
    protected void doClose() {
        if (supervisor != null) {
            supervisor.shutdownNow();
            try {
                supervisor.awaitTermination(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        closeWatch();
        if (server != null) {
            stopServing("the agent stops");
        }
        calls.shutdown();
        try {
            calls.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (group != null) {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
        }
        if (metricsRegistered) {
            metrics.unregister();
        }
        if (phase != Phase.NEW) {
            log.info("device plugin stopped resource={}", config.resourceName());
        }
        phase = Phase.CLOSED;
        detail = "closed";
    }

    // ---------------------------------------------------------------- devices

    /**
     * The GPUs to list (from the device source): {@code count} virtual devices each, with their health. Sent to
     * kubelet when the list differs from the last one. Any thread.
     */
    public void updateDevices(List<GpuDevice> gpus) {
        requireNonNull(gpus, "gpus");
        publish(VirtualDevice.of(gpus, config.numaTopology()), "discovered");
    }

    /**
     * Discovery failed (nvidia-smi broke): every device listed so far turns Unhealthy until the next successful
     * discovery, so that kubelet gives out no more of them. Any thread.
     */
    public void discoveryFailed(String reason) {
        List<VirtualDevice> current = devices;
        if (current == null || current.stream().noneMatch(VirtualDevice::healthy)) {
            return;
        }
        log.warn("device discovery failed; listing every device as Unhealthy resource={}: {}", config.resourceName(),
                reason);
        publish(current.stream().map(VirtualDevice::unhealthy).toList(), "discovery failed");
    }

    private void publish(List<VirtualDevice> next, String why) {
        synchronized (deviceLock) {
            if (next.equals(devices)) {
                return;
            }
            devices = next;
            long healthy = next.stream().filter(VirtualDevice::healthy).count();
            metrics.devices(healthy, next.size() - healthy);
            log.info("device plugin lists {} devices ({} healthy) resource={} ({})", next.size(), healthy,
                    config.resourceName(), why);
            service.publish(next);
        }
    }

    /**
     * The devices to list, as they are (a simulated vendor's replicas, {@code VendorAllocation#virtualDevices}): sent
     * to kubelet when the list differs from the last one. Any thread.
     */
    public void updateVirtualDevices(List<VirtualDevice> next) {
        requireNonNull(next, "next");
        publish(List.copyOf(next), "discovered");
    }

    /** The UUIDs of the GPUs listed to kubelet (empty before the first discovery). */
    public Set<String> gpuUuids() {
        List<VirtualDevice> current = devices;
        return current == null ? Set.of()
                : current.stream().map(VirtualDevice::gpuUuid).collect(Collectors.toUnmodifiableSet());
    }

    /** The devices listed to kubelet; empty before the first discovery. */
    public List<VirtualDevice> devices() {
        List<VirtualDevice> current = devices;
        return current == null ? List.of() : current;
    }

    public DevicePluginSnapshot snapshot() {
        List<VirtualDevice> current = devices;
        return new DevicePluginSnapshot(phase, detail, config.socket(), config.resourceName(),
                current == null ? -1 : current.size(),
                current == null ? 0 : (int) current.stream().filter(VirtualDevice::healthy).count(), registrations,
                lastRegistration, service.openStreams());
    }

    // ---------------------------------------------------------------- supervisor thread

    private void reconcileSafely() {
        try {
            reconcile();
        } catch (RuntimeException e) {
            log.error("device plugin supervisor failed; retrying resource={}", config.resourceName(), e);
            problem("unexpected error: " + e);
        }
    }

    private void reconcile() {
        if (isClosed() || phase == Phase.STANDING_ASIDE) { // the first run may come before start() returned
            return;
        }
        Path dir = config.directory();
        if (!Files.isDirectory(dir)) {
            if (server != null) {
                stopServing("directory " + dir + " is gone");
            }
            waiting("directory " + dir + " does not exist (expected: kubelet's device plugin directory, mounted"
                    + " into this pod: --device-plugin-dir)");
            return;
        }
        ensureWatching(dir);
        if (server != null && !Objects.equals(FileIdentity.of(config.socket()), served)) {
            stopServing(Files.exists(config.socket(), LinkOption.NOFOLLOW_LINKS) ? "socket " + config.socket()
                    + " was replaced by another file" : "socket " + config.socket() + " was deleted");
        }
        FileIdentity kubelet = FileIdentity.of(config.kubeletSocket());
        if (server != null && registeredKubelet != null && kubelet != null && !kubelet.equals(registeredKubelet)) {
            stopServing(config.kubeletSocket() + " was created again (kubelet restarted)");
        }
        if (notBefore != null && clock.instant().isBefore(notBefore)) {
            return; // backing off; a timer runs this again
        }
        if (server == null) {
            SocketProbe.Result probe = SocketProbe.probe(config.socket(), group, config.dialTimeout());
            if (probe.kind() == SocketProbe.Kind.FOREIGN) {
                standAside(probe.detail());
                return;
            }
            if (probe.kind() != SocketProbe.Kind.ABSENT) {
                log.info("removing {} before serving: {}", config.socket(), probe.detail());
                deleteQuietly(config.socket());
            }
            try {
                serve();
            } catch (RuntimeException e) {
                problem("cannot serve on " + config.socket() + ": " + e.getMessage());
                return;
            }
        }
        if (registeredKubelet == null) {
            if (kubelet == null) {
                waiting("serving on " + config.socket() + ", waiting for kubelet: no " + config.kubeletSocket());
                return;
            }
            register(kubelet);
        }
    }

    private void serve() {
        Path socket = config.socket();
        // Same length as the real name, so it fits wherever the real name fits; "." keeps it out of kubelet's way.
        Path temporary = config.directory().resolve("." + config.socketName().substring(1));
        deleteQuietly(temporary);
        Server started = UnixSockets.serve(temporary, group, calls, service, new MarkerInterceptor(version));
        try {
            Files.move(temporary, socket, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            started.shutdownNow();
            throw new IllegalStateException("cannot move " + temporary + " to " + socket + ": " + e, e);
        }
        server = started;
        served = FileIdentity.of(socket);
        // As HAMi: dial ourselves once to be sure the socket answers before kubelet is told about it.
        SocketProbe.Result self = SocketProbe.probe(socket, group, config.dialTimeout());
        if (self.kind() != SocketProbe.Kind.OURS) {
            stopServing("self-check failed");
            throw new IllegalStateException("the socket does not answer as ours: " + self.detail());
        }
        log.info("device plugin serving resource={} socket={}", config.resourceName(), socket);
    }

    private void register(FileIdentity kubelet) {
        try {
            KubeletRegistration.register(config.kubeletSocket(),
                    KubeletRegistration.request(config, service.options()), group, config.dialTimeout().multipliedBy(3));
        } catch (StatusRuntimeException e) {
            metrics.registration(false);
            problem("Register with kubelet (" + config.kubeletSocket() + ") failed: " + e.getStatus().getCode()
                    + (e.getStatus().getDescription() == null ? "" : ": " + e.getStatus().getDescription()));
            return;
        }
        metrics.registration(true);
        registeredKubelet = kubelet;
        registrations++;
        lastRegistration = clock.instant();
        failures.reset();
        notBefore = null;
        lastProblem = null;
        phase = Phase.REGISTERED;
        detail = "registered " + config.resourceName() + " with kubelet, endpoint " + config.socketName();
        log.info("device plugin registered with kubelet resource={} endpoint={} version={} registrations={}",
                config.resourceName(), config.socketName(), DevicePluginConfig.VERSION, registrations);
    }

    private void stopServing(String why) {
        Server stopping = server;
        server = null;
        registeredKubelet = null;
        if (stopping == null) {
            return;
        }
        log.info("device plugin stops serving resource={} socket={}: {}", config.resourceName(), config.socket(),
                why);
        service.closeStreams();
        stopping.shutdownNow();
        try {
            stopping.awaitTermination(2, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        // Only our own file: another plugin may have put its socket there since.
        if (served != null && served.equals(FileIdentity.of(config.socket()))) {
            deleteQuietly(config.socket());
        }
        served = null;
        if (phase == Phase.REGISTERED) {
            phase = Phase.WAITING_FOR_KUBELET;
            detail = why;
        }
    }

    private void standAside(String reason) {
        if (server != null) {
            stopServing("another device plugin took over the socket");
        }
        phase = Phase.STANDING_ASIDE;
        detail = reason;
        metrics.standingAside(true);
        if (config.socketName().equals(DevicePluginConfig.socketName(config.resourceName()))) {
            log.warn("device plugin does not start: {}. HAMi's or NVIDIA's device plugin already serves {} on this"
                    + " node, and two plugins must not both serve it (HAMi #2076). The agent also stops writing"
                    + " hami.io/node-nvidia-register. Fix: remove the other device plugin from this node (or run the"
                    + " agent here with --device-plugin=false --device-source=none), then restart the agent",
                    reason, config.resourceName());
        } else {
            log.warn("device plugin does not start: {}. The vendor's own device plugin already serves {} on this"
                    + " node, and two plugins must not both serve it; device registration is told to stand aside"
                    + " too. Fix: remove that plugin from this node, or leave this vendor out of the agent's simulated"
                    + " devices, then restart the agent", reason, config.resourceName());
        }
        listener.standingAside(reason);
    }

    private void waiting(String why) {
        phase = Phase.WAITING_FOR_KUBELET;
        detail = why;
        if (!why.equals(lastProblem)) {
            lastProblem = why;
            log.info("device plugin waiting resource={}: {}", config.resourceName(), why);
        }
    }

    /** A failed step: waits with the backoff before the next attempt. */
    private void problem(String why) {
        Duration wait = failures.failure();
        notBefore = clock.instant().plus(wait);
        phase = Phase.WAITING_FOR_KUBELET;
        detail = why + "; retrying in " + wait.toMillis() + "ms";
        if (!why.equals(lastProblem)) {
            lastProblem = why;
            log.warn("device plugin resource={}: {}; retrying in {}ms", config.resourceName(), why, wait.toMillis());
        } else {
            log.debug("device plugin resource={}: {}; retrying in {}ms", config.resourceName(), why, wait.toMillis());
        }
        try {
            supervisor.schedule(this::reconcileSafely, wait.toNanos(), TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            // closing
        }
    }

    // ---------------------------------------------------------------- directory watch

    private void ensureWatching(Path dir) {
        if (watcher != null && watcher.isAlive()) {
            return;
        }
        closeWatch();
        try {
            WatchService service = FileSystems.getDefault().newWatchService();
            dir.register(service, StandardWatchEventKinds.ENTRY_CREATE, StandardWatchEventKinds.ENTRY_DELETE);
            watch = service;
            watcher = DaemonThreads.newThread("device-plugin-watch", () -> watchLoop(service));
            watcher.start();
        } catch (IOException e) {
            log.warn("cannot watch {} (the {} check still notices changes): {}", dir, config.checkInterval(),
                    e.toString());
        }
    }

    private void watchLoop(WatchService service) {
        String kubeletName = DevicePluginConfig.KUBELET_SOCKET;
        String ourName = config.socketName();
        try {
            while (true) {
                WatchKey key = service.take();
                boolean wake = false;
                for (WatchEvent<?> event : key.pollEvents()) {
                    if (event.kind() == StandardWatchEventKinds.OVERFLOW) {
                        wake = true;
                        continue;
                    }
                    String name = String.valueOf(event.context());
                    if (name.equals(kubeletName) && event.kind() == StandardWatchEventKinds.ENTRY_CREATE) {
                        wake = true;
                    } else if (name.equals(ourName) && event.kind() == StandardWatchEventKinds.ENTRY_DELETE) {
                        wake = true;
                    }
                }
                boolean valid = key.reset();
                if (wake || !valid) {
                    try {
                        supervisor.execute(this::reconcileSafely);
                    } catch (RejectedExecutionException e) {
                        return;
                    }
                }
                if (!valid) {
                    return; // the directory went away; the periodic check watches it again when it is back
                }
            }
        } catch (ClosedWatchServiceException e) {
            // closed
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void closeWatch() {
        WatchService current = watch;
        watch = null;
        if (current != null) {
            try {
                current.close();
            } catch (IOException e) {
                log.debug("closing the directory watch: {}", e.toString());
            }
        }
    }

    private static void deleteQuietly(Path file) {
        try {
            Files.deleteIfExists(file);
        } catch (IOException e) {
            log.warn("cannot delete {}: {}", file, e.toString());
        }
    }

    /** A file's identity: inode (file key) and modification time, so that a file created anew differs. */
    private record FileIdentity(Object key, Instant modified) {
        static FileIdentity of(Path file) {
            try {
                BasicFileAttributes attributes = Files.readAttributes(file, BasicFileAttributes.class,
                        LinkOption.NOFOLLOW_LINKS);
                return new FileIdentity(attributes.fileKey(), attributes.lastModifiedTime().toInstant());
            } catch (NoSuchFileException e) {
                return null;
            } catch (IOException e) {
                return null;
            }
        }
    }

    /** Puts the agent version into the headers of every answer, so that a probe can tell our socket apart. */
    private static final class MarkerInterceptor implements ServerInterceptor {
        private final String version;

        MarkerInterceptor(String version) {
            this.version = version;
        }

        @Override
        public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
                ServerCallHandler<Q, R> next) {
            return next.startCall(new ForwardingServerCall.SimpleForwardingServerCall<>(call) {
                @Override
                public void sendHeaders(Metadata responseHeaders) {
                    responseHeaders.put(SocketProbe.MARKER, version);
                    super.sendHeaders(responseHeaders);
                }
            }, headers);
        }
    }
}
