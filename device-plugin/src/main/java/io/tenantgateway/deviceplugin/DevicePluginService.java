package io.tenantgateway.deviceplugin;

import static java.util.Objects.requireNonNull;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.tenantgateway.common.text.PeerText;
import io.tenantgateway.deviceplugin.policy.ContainerAllocation;
import io.tenantgateway.deviceplugin.policy.Mount;
import io.tenantgateway.deviceplugin.policy.VirtualDevice;
import io.tenantgateway.deviceplugin.v1beta1.AllocateRequest;
import io.tenantgateway.deviceplugin.v1beta1.AllocateResponse;
import io.tenantgateway.deviceplugin.v1beta1.ContainerAllocateRequest;
import io.tenantgateway.deviceplugin.v1beta1.ContainerAllocateResponse;
import io.tenantgateway.deviceplugin.v1beta1.ContainerPreferredAllocationRequest;
import io.tenantgateway.deviceplugin.v1beta1.ContainerPreferredAllocationResponse;
import io.tenantgateway.deviceplugin.v1beta1.Device;
import io.tenantgateway.deviceplugin.v1beta1.DevicePluginGrpc;
import io.tenantgateway.deviceplugin.v1beta1.DevicePluginOptions;
import io.tenantgateway.deviceplugin.v1beta1.Empty;
import io.tenantgateway.deviceplugin.v1beta1.ListAndWatchResponse;
import io.tenantgateway.deviceplugin.v1beta1.NUMANode;
import io.tenantgateway.deviceplugin.v1beta1.PreStartContainerRequest;
import io.tenantgateway.deviceplugin.v1beta1.PreStartContainerResponse;
import io.tenantgateway.deviceplugin.v1beta1.PreferredAllocationRequest;
import io.tenantgateway.deviceplugin.v1beta1.PreferredAllocationResponse;
import io.tenantgateway.deviceplugin.v1beta1.TopologyInfo;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code v1beta1.DevicePlugin} service kubelet calls.
 *
 * <p>Threading: the server runs every call on one executor (the plugin's call thread), and every ListAndWatch write
 * happens there too ({@link #publish} hops onto it), so the stream observers, which are not thread-safe, have one
 * owner, and Allocate calls run one at a time: one allocation at a time per node, as HAMi's process-wide lock does.
 */
final class DevicePluginService extends DevicePluginGrpc.DevicePluginImplBase {
    private static final Logger log = LoggerFactory.getLogger(DevicePluginService.class);
    static final String HEALTHY = "Healthy";
    static final String UNHEALTHY = "Unhealthy";

    private final DevicePluginConfig config;
    private final Allocator allocator;
    private final DevicePluginMetrics metrics;
    private final Executor calls;

    // Owned by the call executor.
    private final List<ServerCallStreamObserver<ListAndWatchResponse>> streams = new ArrayList<>();
    private ListAndWatchResponse current;
    private volatile int openStreams;

    DevicePluginService(DevicePluginConfig config, Allocator allocator, DevicePluginMetrics metrics,
            Executor calls) {
        this.config = requireNonNull(config, "config");
        this.allocator = requireNonNull(allocator, "allocator");
        this.metrics = requireNonNull(metrics, "metrics");
        this.calls = requireNonNull(calls, "calls");
    }

    DevicePluginOptions options() {
        return DevicePluginOptions.newBuilder().setPreStartRequired(false)
                .setGetPreferredAllocationAvailable(config.preferredAllocation()).build();
    }

    /** ListAndWatch streams open now (kubelet keeps one while it uses the plugin). */
    int openStreams() {
        return openStreams;
    }

    @Override
    public void getDevicePluginOptions(Empty request, StreamObserver<DevicePluginOptions> response) {
        response.onNext(options());
        response.onCompleted();
    }

    @Override
    public void listAndWatch(Empty request, StreamObserver<ListAndWatchResponse> response) {
        ServerCallStreamObserver<ListAndWatchResponse> stream =
                (ServerCallStreamObserver<ListAndWatchResponse>) response;
        stream.setOnCancelHandler(() -> {
            streams.remove(stream);
            openStreams = streams.size();
            log.debug("ListAndWatch stream closed by kubelet resource={} open={}", config.resourceName(),
                    streams.size());
        });
        streams.add(stream);
        openStreams = streams.size();
        log.info("kubelet opened ListAndWatch resource={} devices={}", config.resourceName(),
                current == null ? "not discovered yet" : Integer.toString(current.getDevicesCount()));
        if (current != null) {
            send(stream, current);
        }
    }

    /** Sends {@code devices} to every open stream, and to every stream opened later. Any thread. */
    void publish(List<VirtualDevice> devices) {
        ListAndWatchResponse response = response(devices);
        calls.execute(() -> {
            current = response;
            for (ServerCallStreamObserver<ListAndWatchResponse> stream : List.copyOf(streams)) {
                send(stream, response);
            }
        });
    }

    private void send(ServerCallStreamObserver<ListAndWatchResponse> stream, ListAndWatchResponse response) {
        try {
            stream.onNext(response);
        } catch (StatusRuntimeException | IllegalStateException e) {
            log.debug("ListAndWatch stream gone while sending: {}", e.toString());
            streams.remove(stream);
            openStreams = streams.size();
        }
    }

    /** Ends every ListAndWatch stream (the server stops). Any thread. */
    void closeStreams() {
        calls.execute(() -> {
            for (ServerCallStreamObserver<ListAndWatchResponse> stream : List.copyOf(streams)) {
                try {
                    stream.onCompleted();
                } catch (RuntimeException e) {
                    log.debug("ListAndWatch stream already gone: {}", e.toString());
                }
            }
            streams.clear();
            openStreams = 0;
        });
    }

    private ListAndWatchResponse response(List<VirtualDevice> devices) {
        ListAndWatchResponse.Builder builder = ListAndWatchResponse.newBuilder();
        for (VirtualDevice device : devices) {
            Device.Builder proto = Device.newBuilder().setID(device.id())
                    .setHealth(device.healthy() ? HEALTHY : UNHEALTHY);
            device.numaNode().ifPresent(numa -> proto.setTopology(TopologyInfo.newBuilder()
                    .addNodes(NUMANode.newBuilder().setID(numa))));
            builder.addDevices(proto);
        }
        return builder.build();
    }

    @Override
    public void getPreferredAllocation(PreferredAllocationRequest request,
            StreamObserver<PreferredAllocationResponse> response) {
        PreferredAllocationResponse.Builder answer = PreferredAllocationResponse.newBuilder();
        for (int i = 0; i < request.getContainerRequestsCount(); i++) {
            ContainerPreferredAllocationRequest container = request.getContainerRequests(i);
            Optional<List<String>> preferred;
            try {
                preferred = allocator.preferred(i, container.getAvailableDeviceIDsList(),
                        container.getMustIncludeDeviceIDsList(), container.getAllocationSize());
            } catch (RuntimeException e) {
                log.warn("GetPreferredAllocation failed; kubelet chooses itself resource={}: {}",
                        config.resourceName(), PeerText.bound(e.toString()));
                preferred = Optional.empty();
            }
            // Like HAMi: no answer for a container whose entry cannot be matched; kubelet then picks on its own.
            preferred.ifPresent(ids -> answer.addContainerResponses(
                    ContainerPreferredAllocationResponse.newBuilder().addAllDeviceIDs(ids)));
        }
        response.onNext(answer.build());
        response.onCompleted();
    }

    @Override
    public void allocate(AllocateRequest request, StreamObserver<AllocateResponse> response) {
        AllocateResponse.Builder answer = AllocateResponse.newBuilder();
        for (ContainerAllocateRequest container : request.getContainerRequestsList()) {
            ContainerAllocation allocation;
            try {
                allocation = allocator.allocate(container.getDevicesIdsList());
            } catch (AllocationException e) {
                metrics.allocate(false);
                // The text may quote a pod's annotations; it travels in a header kubelet bounds (PeerText).
                response.onError(Status.UNKNOWN.withDescription(PeerText.bound(e.getMessage())).asRuntimeException());
                return;
            } catch (RuntimeException e) {
                metrics.allocate(false);
                log.error("Allocate failed unexpectedly resource={} devices={}", config.resourceName(),
                        container.getDevicesIdsList(), e);
                response.onError(Status.INTERNAL.withDescription(PeerText.bound("allocation failed: " + e))
                        .asRuntimeException());
                return;
            }
            metrics.allocate(true);
            answer.addContainerResponses(toProto(allocation));
        }
        response.onNext(answer.build());
        response.onCompleted();
    }

    static ContainerAllocateResponse toProto(ContainerAllocation allocation) {
        ContainerAllocateResponse.Builder builder = ContainerAllocateResponse.newBuilder()
                .putAllEnvs(allocation.envs());
        for (Mount mount : allocation.mounts()) {
            builder.addMounts(io.tenantgateway.deviceplugin.v1beta1.Mount.newBuilder()
                    .setContainerPath(mount.containerPath()).setHostPath(mount.hostPath())
                    .setReadOnly(mount.readOnly()));
        }
        return builder.build();
    }

    @Override
    public void preStartContainer(PreStartContainerRequest request,
            StreamObserver<PreStartContainerResponse> response) {
        response.onNext(PreStartContainerResponse.getDefaultInstance());
        response.onCompleted();
    }
}
