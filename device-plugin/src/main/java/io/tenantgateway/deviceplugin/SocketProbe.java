package io.tenantgateway.deviceplugin;

import static java.util.Objects.requireNonNull;

import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.MetadataUtils;
import io.netty.channel.EventLoopGroup;
import io.tenantgateway.deviceplugin.v1beta1.DevicePluginGrpc;
import io.tenantgateway.deviceplugin.v1beta1.DevicePluginOptions;
import io.tenantgateway.deviceplugin.v1beta1.Empty;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Who serves a device plugin socket: nobody (no file, or a stale file that refuses connections), this agent (its
 * answers carry the {@value #MARKER_HEADER} header), or another plugin — HAMi's or NVIDIA's, which use the same
 * socket name {@code nvidia-gpu.sock} for {@code nvidia.com/gpu}, or a vendor's own plugin on the socket name the
 * agent serves for a simulated vendor ({@code hygon.com_dcunum}, {@code Ascend910B4.sock}). The agent uses it before serving and {@code
 * doctor} to say why the plugin stands aside. Blocks up to the timeout: never call it on an event loop.
 */
public final class SocketProbe {
    /** Response header on every call this agent's plugin answers: the agent version. */
    public static final String MARKER_HEADER = "tenant-gateway-device-plugin";
    static final Metadata.Key<String> MARKER = Metadata.Key.of(MARKER_HEADER, Metadata.ASCII_STRING_MARSHALLER);

    /** What was found. */
    public enum Kind {
        /** No file at the path. */
        ABSENT,
        /** A file nobody listens on (left by a process that died): safe to remove. */
        STALE,
        /** This agent's plugin (another instance, or this one). */
        OURS,
        /** Something else listens: another device plugin. */
        FOREIGN
    }

    /** @param detail what was seen, in words (the other plugin's options, the connect error, our version) */
    public record Result(Kind kind, String detail) {
        public Result {
            requireNonNull(kind, "kind");
            requireNonNull(detail, "detail");
        }
    }

    private SocketProbe() {
    }

    /** Probes the socket at {@code socket} with one GetDevicePluginOptions call of at most {@code timeout}. */
    public static Result probe(Path socket, EventLoopGroup group, Duration timeout) {
        requireNonNull(socket, "socket");
        requireNonNull(group, "group");
        requireNonNull(timeout, "timeout");
        if (!Files.exists(socket, LinkOption.NOFOLLOW_LINKS)) {
            return new Result(Kind.ABSENT, "no " + socket);
        }
        String refused = UnixSockets.connectFailure(socket);
        if (refused != null) {
            return new Result(Kind.STALE, socket + " exists but nobody listens (" + refused + ")");
        }
        AtomicReference<Metadata> headers = new AtomicReference<>();
        AtomicReference<Metadata> trailers = new AtomicReference<>();
        ManagedChannel channel = UnixSockets.channel(socket, group);
        try {
            DevicePluginOptions options = DevicePluginGrpc.newBlockingStub(channel)
                    .withInterceptors(MetadataUtils.newCaptureMetadataInterceptor(headers, trailers))
                    .withDeadlineAfter(timeout.toMillis(), TimeUnit.MILLISECONDS)
                    .getDevicePluginOptions(Empty.getDefaultInstance());
            Metadata answered = headers.get();
            String version = answered == null ? null : answered.get(MARKER);
            if (version != null) {
                return new Result(Kind.OURS, socket + " is served by tenant-gateway " + version);
            }
            String who = String.valueOf(socket.getFileName()).startsWith("nvidia-") ? "HAMi's or NVIDIA's: " : "";
            return new Result(Kind.FOREIGN, socket + " is served by another device plugin (" + who
                    + "GetDevicePluginOptions answered pre_start_required=" + options.getPreStartRequired()
                    + ", get_preferred_allocation_available=" + options.getGetPreferredAllocationAvailable() + ")");
        } catch (StatusRuntimeException e) {
            return new Result(Kind.FOREIGN, socket + " accepts connections but does not answer as a device plugin ("
                    + e.getStatus().getCode() + (e.getStatus().getDescription() == null ? ""
                    : ": " + e.getStatus().getDescription()) + "); some other process owns it");
        } finally {
            channel.shutdownNow();
        }
    }
}
