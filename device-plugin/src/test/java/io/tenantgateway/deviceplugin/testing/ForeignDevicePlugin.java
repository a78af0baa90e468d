package io.tenantgateway.deviceplugin.testing;

import io.grpc.Server;
import io.grpc.stub.StreamObserver;
import io.netty.channel.EventLoopGroup;
import io.tenantgateway.deviceplugin.UnixSockets;
import io.tenantgateway.deviceplugin.v1beta1.DevicePluginGrpc;
import io.tenantgateway.deviceplugin.v1beta1.DevicePluginOptions;
import io.tenantgateway.deviceplugin.v1beta1.Empty;
import java.nio.file.Path;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * Another device plugin on the socket (HAMi's, NVIDIA's — both serve {@code nvidia-gpu.sock} for {@code
 * nvidia.com/gpu}): answers GetDevicePluginOptions, without this agent's marker header. For coexistence tests.
 */
public final class ForeignDevicePlugin implements AutoCloseable {
    private final EventLoopGroup group = UnixSockets.newGroup(1, "foreign-plugin");
    private final ExecutorService executor = Executors.newSingleThreadExecutor(r -> {
        Thread thread = new Thread(r, "foreign-plugin-calls");
        thread.setDaemon(true);
        return thread;
    });
    private final Server server;

    public ForeignDevicePlugin(Path socket) {
        server = UnixSockets.serve(socket, group, executor, new DevicePluginGrpc.DevicePluginImplBase() {
            @Override
            public void getDevicePluginOptions(Empty request, StreamObserver<DevicePluginOptions> response) {
                response.onNext(DevicePluginOptions.newBuilder().setGetPreferredAllocationAvailable(true).build());
                response.onCompleted();
            }
        });
    }

    /** Its event loops (epoll), for probes in tests. */
    public EventLoopGroup group() {
        return group;
    }

    @Override
    public void close() {
        server.shutdownNow();
        try {
            server.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        executor.shutdownNow();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
    }
}
