package io.tenantgateway.agent.ops;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.unix.DomainSocketAddress;
import io.netty.resolver.NoopAddressResolverGroup;
import io.tenantgateway.certs.TlsFailures;
import io.tenantgateway.tunnel.transport.Transports;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.security.cert.CertificateException;
import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Pattern;
import javax.net.ssl.SSLException;

/**
 * Plain connections for the diagnostic commands, which run on the CLI's main thread: that thread may block on a
 * future, the event loops never do. Addresses are resolved before they get here (DNS is blocking in the JDK).
 */
final class Connections {
    /** Netty's native transport prefixes errno texts with the syscall: {@code connect(..) failed: }. */
    private static final Pattern NATIVE_PREFIX = Pattern.compile("^\\w+\\(\\.\\.\\) failed(?: with error\\(-?\\d+\\))?: ");

    private Connections() {
    }

    /** Thrown by {@link #await} when the step did not finish in time. */
    static final class StepTimeoutException extends Exception {
        private static final long serialVersionUID = 1L;

        StepTimeoutException(String step, Duration timeout) {
            super(step + ": no answer within " + io.tenantgateway.agent.cli.Durations.format(timeout), null, false, false);
        }
    }

    /** Connects to a resolved TCP address or a Unix socket; the future fails with the connect error. */
    static CompletableFuture<Channel> connect(EventLoopGroup group, SocketAddress address, Duration timeout) {
        if (address instanceof InetSocketAddress inet && inet.isUnresolved()) {
            return CompletableFuture.failedFuture(new IllegalArgumentException("address " + address
                    + ": unresolved (expected: resolved off the event loop first)"));
        }
        boolean unix = address instanceof DomainSocketAddress;
        Bootstrap bootstrap = new Bootstrap().group(group)
                .channel(unix ? Transports.domainSocketChannel(group) : Transports.socketChannel(group))
                .resolver(NoopAddressResolverGroup.INSTANCE)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.min(Integer.MAX_VALUE, timeout.toMillis()))
                .handler(new ChannelInitializer<>() {
                    @Override
                    protected void initChannel(Channel channel) {
                        // Handlers are added by each step once it knows what it talks to.
                    }
                });
        if (!unix) {
            bootstrap.option(ChannelOption.TCP_NODELAY, true);
        }
        return Transports.whenDone(bootstrap.connect(address));
    }

    /**
     * Waits for a step. Unwraps the failure so callers see the real cause.
     *
     * @throws StepTimeoutException when {@code timeout} passes first (the future is cancelled)
     * @throws Exception the step's own failure
     */
    static <T> T await(Future<T> future, String step, Duration timeout) throws Exception {
        try {
            return future.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            future.cancel(false);
            throw new StepTimeoutException(step, timeout);
        } catch (ExecutionException e) {
            throw unwrap(e.getCause());
        } catch (CancellationException e) {
            throw new StepTimeoutException(step, timeout);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw e;
        }
    }

    private static Exception unwrap(Throwable failure) {
        Throwable cause = failure;
        while ((cause instanceof CompletionException || cause instanceof ExecutionException)
                && cause.getCause() != null) {
            cause = cause.getCause();
        }
        return cause instanceof Exception e ? e : new IllegalStateException(cause);
    }

    /**
     * One line for a failed step: TLS failures as {@link TlsFailures} words them, anything else as the innermost
     * message.
     */
    static String describe(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof SSLException || t instanceof CertificateException) {
                return TlsFailures.describe(failure);
            }
        }
        return rootMessage(failure);
    }

    /** The message of the innermost cause that has one (Netty wraps socket errors). */
    static String rootMessage(Throwable failure) {
        String message = failure.getClass().getSimpleName();
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t.getMessage() != null && !t.getMessage().isBlank()) {
                message = t.getMessage();
            }
        }
        return NATIVE_PREFIX.matcher(message).replaceFirst("");
    }

}
