package io.tenantgateway.tunnel.endpoint;

import static io.tenantgateway.tunnel.testing.TunnelHarness.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.channel.Channel;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.Future;
import io.tenantgateway.tunnel.policy.DialPolicy;
import io.tenantgateway.tunnel.testing.FullListener;
import io.tenantgateway.tunnel.transport.Transports;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(60)
class EndpointDialerTest {
    private final EventLoopGroup group = Transports.newGroup(1, "dialer-test");
    private final List<AutoCloseable> closeables = new ArrayList<>();

    @AfterEach
    void close() throws Exception {
        for (AutoCloseable closeable : closeables) {
            closeable.close();
        }
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
    }

    private EndpointDialer dialer(DialPolicy policy, Duration timeout) {
        EndpointDialer dialer = new EndpointDialer(group, policy, timeout, 64 * 1024, 1024 * 1024);
        closeables.add(dialer);
        return dialer;
    }

    /** Dials on the loop (as the agent does) and returns the outcome. */
    private static Channel dial(EndpointDialer dialer, EventLoop loop, String address) throws Exception {
        CompletableFuture<Channel> result = new CompletableFuture<>();
        loop.execute(() -> {
            Future<Channel> dial = dialer.dial(loop, address, new ChannelInboundHandlerAdapter());
            dial.addListener(f -> {
                if (f.isSuccess()) {
                    result.complete(dial.getNow());
                } else {
                    result.completeExceptionally(f.cause());
                }
            });
        });
        try {
            return result.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw (Exception) e.getCause();
        }
    }

    @Test
    void connectsToIpLiteralsAndNamesWithAutoReadOff() throws Exception {
        try (ServerSocket listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            EndpointDialer dialer = dialer(DialPolicy.ALLOW_ALL, WAIT);
            EventLoop loop = group.next();
            Channel literal = dial(dialer, loop, "127.0.0.1:" + listener.getLocalPort());
            assertThat(literal.isActive()).isTrue();
            assertThat(literal.config().isAutoRead()).isFalse();
            literal.close().sync();
            Channel byName = dial(dialer, loop, "localhost:" + listener.getLocalPort());
            assertThat(((InetSocketAddress) byName.remoteAddress()).getAddress().isLoopbackAddress()).isTrue();
            byName.close().sync();
        }
    }

    @Test
    void refusedConnectionIsReportedInGoWording() throws Exception {
        int closedPort;
        try (ServerSocket listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            closedPort = listener.getLocalPort();
        }
        EndpointDialer dialer = dialer(DialPolicy.ALLOW_ALL, WAIT);
        DialFailure failure = expectFailure(dialer, "127.0.0.1:" + closedPort);
        assertThat(failure.reason()).isEqualTo(DialFailure.Reason.UNKNOWN);
        assertThat(failure.getMessage())
                .isEqualTo("dial tcp 127.0.0.1:" + closedPort + ": connect: connection refused");
    }

    @Test
    void timesOutAgainstAListenerWhoseAcceptQueueIsFull() throws Exception {
        try (FullListener full = FullListener.open()) {
            EndpointDialer dialer = dialer(DialPolicy.ALLOW_ALL, Duration.ofMillis(300));
            DialFailure failure = expectFailure(dialer, full.address());
            assertThat(failure.reason()).isEqualTo(DialFailure.Reason.TIMEOUT);
            assertThat(failure.getMessage()).isEqualTo("dial tcp " + full.address() + ": i/o timeout");
        }
    }

    @Test
    void policyDenialNeverTouchesTheNetwork() throws Exception {
        DialPolicy policy = DialPolicy.of(List.of(), List.of("127.0.0.0/8"), List.of(), List.of(), List.of(),
                List.of());
        EndpointDialer dialer = dialer(policy, WAIT);
        DialFailure failure = expectFailure(dialer, "127.0.0.1:9");
        assertThat(failure.reason()).isEqualTo(DialFailure.Reason.DENIED);
        assertThat(failure.getMessage()).isEqualTo("dial to 127.0.0.1:9 denied by policy (deny cidr 127.0.0.0/8)");
        // A name resolving into a denied network is refused after resolution.
        assertThat(expectFailure(dialer, "localhost:9").getMessage())
                .isEqualTo("dial to localhost:9 denied by policy (deny cidr 127.0.0.0/8)");
    }

    @Test
    void malformedAddressesFailWithoutDialling() throws Exception {
        EndpointDialer dialer = dialer(DialPolicy.ALLOW_ALL, WAIT);
        assertThat(expectFailure(dialer, "no-port").getMessage()).contains("invalid address");
        assertThat(expectFailure(dialer, "host:99999").getMessage()).contains("invalid address");
    }

    private DialFailure expectFailure(EndpointDialer dialer, String address) {
        try {
            Channel channel = dial(dialer, group.next(), address);
            channel.close();
            throw new AssertionError("dial to " + address + " succeeded");
        } catch (DialFailure failure) {
            return failure;
        } catch (Exception e) {
            throw new AssertionError("unexpected failure " + e, e);
        }
    }

    @Test
    void runningOutOfDescriptorsSaysSoInGoWordsWithoutAStackTrace() {
        Throwable netty = new io.netty.channel.ChannelException("Unable to create Channel from class class"
                + " io.netty.channel.epoll.EpollSocketChannel", new java.net.SocketException(
                        "newSocketStream(..) failed: Too many open files"));
        DialFailure failure = EndpointDialer.classify("10.0.0.1:443", netty);
        assertThat(failure.getMessage()).isEqualTo("dial tcp 10.0.0.1:443: socket: too many open files");
        assertThat(failure.getCause()).as("no stack trace kept per dial").isNull();
        assertThat(failure.getStackTrace()).isEmpty();
        assertThat(EndpointDialer.classify("10.0.0.1:443", new java.net.SocketException(
                "connect(..) failed: Cannot assign requested address")).getMessage())
                .isEqualTo("dial tcp 10.0.0.1:443: connect: cannot assign requested address");
        assertThat(EndpointDialer.exhausted(new java.io.IOException("Too many open files in system")))
                .isEqualTo("too many open files in system");
        assertThat(EndpointDialer.exhausted(new java.net.ConnectException("Connection refused"))).isNull();
    }
}
