package io.tenantgateway.deviceplugin.testing;

import static java.util.Objects.requireNonNull;

import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import io.netty.channel.EventLoopGroup;
import io.tenantgateway.deviceplugin.UnixSockets;
import io.tenantgateway.deviceplugin.v1beta1.AllocateRequest;
import io.tenantgateway.deviceplugin.v1beta1.AllocateResponse;
import io.tenantgateway.deviceplugin.v1beta1.ContainerAllocateRequest;
import io.tenantgateway.deviceplugin.v1beta1.ContainerPreferredAllocationRequest;
import io.tenantgateway.deviceplugin.v1beta1.Device;
import io.tenantgateway.deviceplugin.v1beta1.DevicePluginGrpc;
import io.tenantgateway.deviceplugin.v1beta1.DevicePluginOptions;
import io.tenantgateway.deviceplugin.v1beta1.Empty;
import io.tenantgateway.deviceplugin.v1beta1.ListAndWatchResponse;
import io.tenantgateway.deviceplugin.v1beta1.PreferredAllocationRequest;
import io.tenantgateway.deviceplugin.v1beta1.PreferredAllocationResponse;
import io.tenantgateway.deviceplugin.v1beta1.RegisterRequest;
import io.tenantgateway.deviceplugin.v1beta1.RegistrationGrpc;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * A kubelet stand-in for tests and the lab — never part of the runtime: the {@code v1beta1.Registration} server on
 * {@code <dir>/kubelet.sock} over a real Unix socket, and kubelet's side of the device plugin protocol
 * (shared/spec/device-plugin.md §1): on Register it checks the version and the resource name, dials the plugin's
 * endpoint, asks its options (a failure fails the registration) and keeps ListAndWatch open; when the stream ends,
 * every device turns unhealthy. {@link #admitPod} plays kubelet's pod admission: for each container (init containers
 * first) that asks for the resource it picks devices (asking GetPreferredAllocation first when the plugin offers
 * it) and calls Allocate with exactly one container request. {@link #restart()} does what a kubelet restart does to
 * the directory.
 *
 * <p>Thread-safe; the Registration server runs on its own thread, stream callbacks on the stand-in's event loop.
 */
public final class KubeletStandIn implements AutoCloseable {
    /** The one file kubelet keeps when it starts. */
    public static final String CHECKPOINT = "kubelet_internal_checkpoint";
    private static final Pattern EXTENDED_RESOURCE = Pattern.compile("[a-z0-9.-]+/[A-Za-z0-9._-]+");

    private final Path directory;
    private final EventLoopGroup group = UnixSockets.newGroup(1, "kubelet-standin-io");
    private final ExecutorService calls = Executors.newSingleThreadExecutor(r -> {
        Thread thread = new Thread(r, "kubelet-standin");
        thread.setDaemon(true);
        return thread;
    });
    private final List<RegisterRequest> registrations = new CopyOnWriteArrayList<>();
    private final Map<String, Plugin> plugins = new ConcurrentHashMap<>();
    private final Set<String> inUse = ConcurrentHashMap.newKeySet();
    private final Map<String, List<String>> podDevices = new ConcurrentHashMap<>();
    private final AtomicInteger restarts = new AtomicInteger();
    private volatile Server server;
    private volatile boolean closed;

    private KubeletStandIn(Path directory) {
        this.directory = requireNonNull(directory, "directory");
    }

    /** Creates the directory (if needed) and serves {@code kubelet.sock} in it. */
    public static KubeletStandIn start(Path directory) {
        KubeletStandIn kubelet = new KubeletStandIn(directory);
        try {
            Files.createDirectories(directory);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create " + directory, e);
        }
        kubelet.serve();
        return kubelet;
    }

    private void serve() {
        try {
            Files.deleteIfExists(socket());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot remove " + socket(), e);
        }
        server = UnixSockets.serve(socket(), group, calls, new Registration());
    }

    public Path directory() {
        return directory;
    }

    /** {@code <dir>/kubelet.sock}. */
    public Path socket() {
        return directory.resolve("kubelet.sock");
    }

    /** Every Register call that was accepted, oldest first (across restarts). */
    public List<RegisterRequest> registrations() {
        return List.copyOf(registrations);
    }

    /** How often {@link #restart()} ran. */
    public int restarts() {
        return restarts.get();
    }

    /** The plugin registered for {@code resource}, if one is. */
    public Optional<Plugin> plugin(String resource) {
        return Optional.ofNullable(plugins.get(resource));
    }

    /**
     * What kubelet knows of one registered plugin.
     */
    public final class Plugin {
        private final RegisterRequest registration;
        private final DevicePluginOptions options;
        private final ManagedChannel channel;
        private volatile List<Device> devices = List.of();
        private final AtomicInteger updates = new AtomicInteger();
        private volatile boolean streamOpen = true;
        private volatile String streamEnd;

        private Plugin(RegisterRequest registration, DevicePluginOptions options, ManagedChannel channel) {
            this.registration = registration;
            this.options = options;
            this.channel = channel;
        }

        public RegisterRequest registration() {
            return registration;
        }

        /** What GetDevicePluginOptions answered when it registered. */
        public DevicePluginOptions options() {
            return options;
        }

        /** The last ListAndWatch list; every device Unhealthy once the stream ended. */
        public List<Device> devices() {
            return devices;
        }

        /** The IDs of the Healthy devices: what kubelet counts as allocatable. */
        public List<String> healthyIds() {
            return devices.stream().filter(d -> "Healthy".equals(d.getHealth())).map(Device::getID).toList();
        }

        /** How many ListAndWatch responses arrived. */
        public int updates() {
            return updates.get();
        }

        public boolean streamOpen() {
            return streamOpen;
        }

        /** Why the ListAndWatch stream ended, {@code null} while it is open. */
        public String streamEnd() {
            return streamEnd;
        }

        /** One Allocate call for one container, as kubelet makes it. */
        public AllocateResponse allocate(List<String> deviceIds) {
            return DevicePluginGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS)
                    .allocate(AllocateRequest.newBuilder().addContainerRequests(ContainerAllocateRequest.newBuilder()
                            .addAllDevicesIds(deviceIds)).build());
        }

        /** One GetPreferredAllocation call for one container. */
        public PreferredAllocationResponse preferred(List<String> available, List<String> mustInclude, int size) {
            return DevicePluginGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS)
                    .getPreferredAllocation(PreferredAllocationRequest.newBuilder().addContainerRequests(
                            ContainerPreferredAllocationRequest.newBuilder().addAllAvailableDeviceIDs(available)
                                    .addAllMustIncludeDeviceIDs(mustInclude).setAllocationSize(size)).build());
        }

        private void watch() {
            DevicePluginGrpc.newStub(channel).listAndWatch(Empty.getDefaultInstance(),
                    new StreamObserver<ListAndWatchResponse>() {
                        @Override
                        public void onNext(ListAndWatchResponse response) {
                            devices = List.copyOf(response.getDevicesList());
                            updates.incrementAndGet();
                        }

                        @Override
                        public void onError(Throwable t) {
                            ended(Status.fromThrowable(t).toString());
                        }

                        @Override
                        public void onCompleted() {
                            ended("completed by the plugin");
                        }
                    });
        }

        /** Kubelet: when the stream breaks every device turns unhealthy (allocatable 0). */
        private void ended(String why) {
            streamOpen = false;
            streamEnd = why;
            devices = devices.stream().map(d -> d.toBuilder().setHealth("Unhealthy").build()).toList();
        }

        private void close() {
            channel.shutdownNow();
        }
    }

    /** One container of a pod, as kubelet's device manager sees it: how many devices of the resource it asks for. */
    public record ContainerRequest(String name, int count) {
        public ContainerRequest {
            requireNonNull(name, "name");
        }
    }

    /**
     * What happened to one container at admission.
     *
     * @param response the Allocate answer, {@code null} when the call failed
     * @param error why it failed (the plugin's error text, or kubelet's own), {@code null} when it worked
     */
    public record ContainerResult(String container, List<String> deviceIds, AllocateResponse response,
            String error) {
    }

    /** The admission of a pod: one result per container that asked for devices, up to the first failure. */
    public record PodResult(List<ContainerResult> containers) {
        public boolean admitted() {
            return containers.stream().allMatch(c -> c.error() == null);
        }

        public Optional<String> error() {
            return containers.stream().map(ContainerResult::error).filter(e -> e != null).findFirst();
        }
    }

    /**
     * Kubelet's admission of a pod bound here: for each container in order (init containers first) that asks for
     * {@code resource}, choose devices among the healthy unused ones (the plugin's preference first, when it offers
     * one and it fits) and call Allocate. A failure ends the admission (kubelet rejects the pod) and frees what the
     * pod held.
     */
    public PodResult admitPod(String resource, String podUid, List<ContainerRequest> containers) {
        List<ContainerResult> results = new ArrayList<>();
        List<String> held = new ArrayList<>();
        for (ContainerRequest container : containers) {
            if (container.count() <= 0) {
                continue;
            }
            Plugin plugin = plugins.get(resource);
            if (plugin == null) {
                results.add(new ContainerResult(container.name(), List.of(), null, "no device plugin registered for "
                        + resource + " (kubelet: resource not registered)"));
                break;
            }
            List<String> available = new ArrayList<>(plugin.healthyIds());
            available.removeAll(inUse);
            if (available.size() < container.count()) {
                results.add(new ContainerResult(container.name(), List.of(), null, "Insufficient " + resource
                        + ": requested " + container.count() + ", available " + available.size()));
                break;
            }
            List<String> chosen = choose(plugin, available, container.count());
            try {
                AllocateResponse response = plugin.allocate(chosen);
                inUse.addAll(chosen);
                held.addAll(chosen);
                results.add(new ContainerResult(container.name(), chosen, response, null));
            } catch (StatusRuntimeException e) {
                results.add(new ContainerResult(container.name(), chosen, null,
                        e.getStatus().getDescription() == null ? e.getStatus().toString()
                                : e.getStatus().getDescription()));
                break;
            }
        }
        PodResult result = new PodResult(List.copyOf(results));
        if (result.admitted()) {
            podDevices.put(podUid, List.copyOf(held));
        } else {
            inUse.removeAll(held);
        }
        return result;
    }

    private static List<String> choose(Plugin plugin, List<String> available, int count) {
        if (plugin.options().getGetPreferredAllocationAvailable()) {
            try {
                PreferredAllocationResponse preferred = plugin.preferred(available, List.of(), count);
                if (preferred.getContainerResponsesCount() > 0) {
                    List<String> ids = preferred.getContainerResponses(0).getDeviceIDsList();
                    if (ids.size() == count && new HashSet<>(available).containsAll(ids)
                            && new LinkedHashSet<>(ids).size() == count) {
                        return List.copyOf(ids);
                    }
                }
            } catch (StatusRuntimeException e) {
                // kubelet logs it and chooses on its own
            }
        }
        return List.copyOf(available.subList(0, count));
    }

    /** The pod is gone: its devices may be given out again. */
    public void releasePod(String podUid) {
        List<String> held = podDevices.remove(podUid);
        if (held != null) {
            inUse.removeAll(held);
        }
    }

    /**
     * A kubelet restart, as it looks in the directory: the Registration server stops (every plugin connection and
     * ListAndWatch stream breaks), every non-directory file except {@value #CHECKPOINT} is deleted (all plugin
     * sockets vanish), and {@code kubelet.sock} is created anew. Plugins must register again.
     */
    public void restart() {
        stopServer();
        plugins.values().forEach(Plugin::close);
        plugins.clear(); // allocations survive, as in kubelet's checkpoint
        try (Stream<Path> files = Files.list(directory)) {
            for (Path file : files.toList()) {
                if (!Files.isDirectory(file, LinkOption.NOFOLLOW_LINKS)
                        && !file.getFileName().toString().equals(CHECKPOINT)) {
                    Files.deleteIfExists(file);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot clean " + directory, e);
        }
        restarts.incrementAndGet();
        serve();
    }

    private void stopServer() {
        Server current = server;
        if (current != null) {
            current.shutdownNow();
            try {
                current.awaitTermination(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        stopServer();
        plugins.values().forEach(Plugin::close);
        plugins.clear();
        calls.shutdownNow();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
        try {
            Files.deleteIfExists(socket());
        } catch (IOException e) {
            // best effort
        }
    }

    /** kubelet's Registration service. */
    private final class Registration extends RegistrationGrpc.RegistrationImplBase {
        @Override
        public void register(RegisterRequest request, StreamObserver<Empty> response) {
            if (!"v1beta1".equals(request.getVersion())) {
                response.onError(Status.INVALID_ARGUMENT.withDescription("invalid version " + request.getVersion()
                        + " (expected: v1beta1)").asRuntimeException());
                return;
            }
            String resource = request.getResourceName();
            if (!EXTENDED_RESOURCE.matcher(resource).matches() || resource.startsWith("kubernetes.io/")) {
                response.onError(Status.INVALID_ARGUMENT.withDescription("invalid name of device plugin socket: "
                        + resource + " is not an extended resource name").asRuntimeException());
                return;
            }
            Path endpoint = directory.resolve(request.getEndpoint());
            ManagedChannel channel = UnixSockets.channel(endpoint, group);
            DevicePluginOptions options;
            try {
                // A generous deadline (the tests' 30 s): a plugin on a loaded machine may be slow to answer.
                options = DevicePluginGrpc.newBlockingStub(channel).withWaitForReady()
                        .withDeadlineAfter(30, TimeUnit.SECONDS).getDevicePluginOptions(Empty.getDefaultInstance());
            } catch (StatusRuntimeException e) {
                channel.shutdownNow();
                response.onError(Status.FAILED_PRECONDITION.withDescription("failed to dial device plugin " + endpoint
                        + ": " + e.getStatus()).asRuntimeException());
                return;
            }
            Plugin plugin = new Plugin(request, options, channel);
            Plugin previous = plugins.put(resource, plugin);
            if (previous != null) {
                previous.close();
            }
            registrations.add(request);
            // Not in this call's context: it is cancelled when Register returns, and the stream with it.
            io.grpc.Context.ROOT.run(plugin::watch);
            response.onNext(Empty.getDefaultInstance());
            response.onCompleted();
        }
    }
}
