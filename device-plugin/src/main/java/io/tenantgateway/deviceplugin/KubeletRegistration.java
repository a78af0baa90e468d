package io.tenantgateway.deviceplugin;

import io.grpc.ManagedChannel;
import io.netty.channel.EventLoopGroup;
import io.tenantgateway.deviceplugin.v1beta1.DevicePluginOptions;
import io.tenantgateway.deviceplugin.v1beta1.RegisterRequest;
import io.tenantgateway.deviceplugin.v1beta1.RegistrationGrpc;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/** The plugin's one call to kubelet: Register on {@code kubelet.sock}. */
final class KubeletRegistration {
    private KubeletRegistration() {
    }

    static RegisterRequest request(DevicePluginConfig config, DevicePluginOptions options) {
        return RegisterRequest.newBuilder().setVersion(DevicePluginConfig.VERSION).setEndpoint(config.socketName())
                .setResourceName(config.resourceName()).setOptions(options).build();
    }

    /**
     * Registers; blocks up to {@code timeout} (kubelet dials the plugin back and asks its options before it answers).
     *
     * @throws io.grpc.StatusRuntimeException when kubelet is not there or refuses
     */
    static void register(Path kubeletSocket, RegisterRequest request, EventLoopGroup group, Duration timeout) {
        ManagedChannel channel = UnixSockets.channel(kubeletSocket, group);
        try {
            RegistrationGrpc.newBlockingStub(channel).withDeadlineAfter(timeout.toMillis(), TimeUnit.MILLISECONDS)
                    .register(request);
        } finally {
            channel.shutdownNow();
        }
    }
}
