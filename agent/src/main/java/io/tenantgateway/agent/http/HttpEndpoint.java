package io.tenantgateway.agent.http;

import static java.util.Objects.requireNonNull;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpServerExpectContinueHandler;
import io.netty.handler.flow.FlowControlHandler;
import io.netty.handler.timeout.IdleStateHandler;
import io.tenantgateway.agent.cli.PortInUseException;
import io.tenantgateway.certs.vertx.ServerLimits;
import io.tenantgateway.common.net.AddressInUseException;
import io.tenantgateway.tunnel.transport.Transports;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A plain HTTP/1.1 listener on an {@link HttpLoop}: the lifecycle and the limits the health and admin ports share,
 * on Netty's HTTP codec (no Vert.x: pure-tunnel mode loads none, DESIGN.md "Footprint"). Starting waits for the bind
 * (a port in use fails with a {@link PortInUseException} naming the flag and the address, which the CLI prints as one
 * line); closing closes the listener and every connection, is idempotent and bounded.
 *
 * <p>Limits ({@link ServerLimits}, as the webhook's Vert.x servers apply them): at most
 * {@code maxConnections} connections (more are closed as they arrive); a request must arrive in full (line, headers,
 * body) within {@code requestTimeout} of the connection opening or of the previous response, so a client that
 * trickles bytes (slowloris) is cut; a connection with no traffic for {@code idleTimeout} is closed (the admin port's
 * outlasts a JFR recording); a request line over {@value #MAX_INITIAL_LINE} bytes is answered 414, headers over
 * {@value #MAX_HEADER_SIZE} bytes 431, a body over {@value #MAX_BODY} bytes 413 (the ports take no body: it is
 * discarded as it arrives, never buffered). Requests of one connection are answered one at a time, in order
 * (pipelined ones wait unread: {@code AUTO_READ} off).
 *
 * <p>Threading: {@link #start} and {@link #close} from any thread (synchronized); every connection and every handler
 * call run on the loop's one event loop; the counters are atomic.
 *
 * <p>Lifecycle: not a {@code common} {@code Lifecycle}: a bind failure must reach the caller as the typed
 * {@code PortInUseException} (exit 2), which the base's wrapping {@code IllegalStateException} would hide.
 */
public final class HttpEndpoint implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(HttpEndpoint.class);
    /** Vert.x's defaults, which these ports had before. */
    static final int MAX_INITIAL_LINE = 4096;
    static final int MAX_HEADER_SIZE = 8192;
    static final int MAX_CHUNK_SIZE = 8192;
    /** No handler reads a body; a larger one is refused rather than read for nothing. */
    static final int MAX_BODY = 64 * 1024;
    private static final long WARN_EVERY_NANOS = 60_000_000_000L;
    private static final long BIND_TIMEOUT_SECONDS = 30;
    private static final long CLOSE_TIMEOUT_SECONDS = 10;

    private final HttpLoop loop;
    private final String name;
    private final String portFlag;
    private final String host;
    private final int port;
    private final HttpHandler handler;
    private final ServerLimits limits;
    private final AtomicInteger open = new AtomicInteger();
    private final AtomicLong rejected = new AtomicLong();
    private final AtomicLong timedOut = new AtomicLong();
    /** Each kind of warning is throttled on its own, so a flood of one kind never hides the other. */
    private final AtomicLong lastCapWarn = new AtomicLong(System.nanoTime() - WARN_EVERY_NANOS);
    private final AtomicLong lastTimeoutWarn = new AtomicLong(System.nanoTime() - WARN_EVERY_NANOS);
    private Channel server;
    private ChannelGroup connections;

    /**
     * @param name what the port is, for messages ({@code health server}, {@code admin server})
     * @param portFlag the flag that sets the port ({@code --health-server-port}), named when it is in use
     * @param port 0 for an ephemeral port
     */
    public HttpEndpoint(HttpLoop loop, String name, String portFlag, String host, int port, HttpHandler handler) {
        this(loop, name, portFlag, host, port, handler, ServerLimits.DEFAULTS);
    }

    /** @param limits connection limits and timeouts (the admin port's idle timeout outlasts a JFR download) */
    public HttpEndpoint(HttpLoop loop, String name, String portFlag, String host, int port, HttpHandler handler,
            ServerLimits limits) {
        this.loop = requireNonNull(loop, "loop");
        this.limits = requireNonNull(limits, "limits");
        this.name = requireNonNull(name, "name");
        this.portFlag = requireNonNull(portFlag, "portFlag");
        this.host = requireNonNull(host, "host");
        this.port = port;
        this.handler = requireNonNull(handler, "handler");
    }

    public synchronized void start() {
        if (server != null) {
            return;
        }
        EventLoopGroup group = loop.group();
        ChannelGroup accepted = new DefaultChannelGroup(name, group.next());
        ServerBootstrap bootstrap = new ServerBootstrap().group(group)
                .channel(Transports.serverSocketChannel(group))
                .option(ChannelOption.SO_REUSEADDR, true)
                .childOption(ChannelOption.AUTO_READ, false)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childHandler(new ChannelInitializer<>() {
                    @Override
                    protected void initChannel(Channel channel) {
                        accept(channel, accepted);
                    }
                });
        ChannelFuture bind = bootstrap.bind(host, port);
        if (!bind.awaitUninterruptibly(BIND_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
            bind.cancel(false);
            throw new IllegalStateException(name + ": binding " + host + ":" + port + " took over "
                    + BIND_TIMEOUT_SECONDS + " s");
        }
        if (!bind.isSuccess()) {
            Throwable cause = bind.cause();
            if (AddressInUseException.isAddressInUse(cause)) {
                throw new PortInUseException(portFlag, host, port, cause);
            }
            throw new IllegalStateException(name + ": cannot listen on " + host + ":" + port + ": "
                    + rootMessage(cause), cause);
        }
        connections = accepted;
        server = bind.channel();
    }

    /** On the loop, for each accepted connection: the cap, then the pipeline. */
    private void accept(Channel channel, ChannelGroup accepted) {
        if (open.incrementAndGet() > limits.maxConnections()) {
            open.decrementAndGet();
            rejected.incrementAndGet();
            warn(lastCapWarn, "{}: {} connections open, the cap (max connections {}); closing the new one from {}",
                    name, limits.maxConnections(), limits.maxConnections(), channel.remoteAddress());
            channel.close();
            return;
        }
        channel.closeFuture().addListener(closed -> open.decrementAndGet());
        accepted.add(channel);
        channel.pipeline().addLast(
                new IdleStateHandler(0, 0, limits.idleTimeout().toMillis(), TimeUnit.MILLISECONDS),
                new HttpServerCodec(MAX_INITIAL_LINE, MAX_HEADER_SIZE, MAX_CHUNK_SIZE),
                new HttpServerExpectContinueHandler(),
                new FlowControlHandler(),
                new ConnectionHandler(this));
    }

    String name() {
        return name;
    }

    HttpHandler handler() {
        return handler;
    }

    /**
     * A request did not arrive in full in time: counted, logged (throttled); the caller closes.
     *
     * @param started whether the request had begun to arrive (else none came at all)
     */
    void timedOut(Channel channel, boolean started) {
        timedOut.incrementAndGet();
        warn(lastTimeoutWarn, started ? "{}: request from {} not received in full within {} ms; closing the connection"
                : "{}: no request from {} within {} ms; closing the connection", name, channel.remoteAddress(),
                limits.requestTimeout().toMillis());
    }

    private void warn(AtomicLong lastWarn, String format, Object... args) {
        long now = System.nanoTime();
        long last = lastWarn.get();
        if (now - last >= WARN_EVERY_NANOS && lastWarn.compareAndSet(last, now)) {
            log.warn(format + " (logged once a minute)", args);
        } else {
            log.debug(format, args);
        }
    }

    public String host() {
        return host;
    }

    public ServerLimits limits() {
        return limits;
    }

    /** Connections open now. */
    public int openConnections() {
        return open.get();
    }

    /** Connections closed because the cap was reached. */
    public long rejectedConnections() {
        return rejected.get();
    }

    /** Connections closed because a request did not arrive in full in time. */
    public long timedOutConnections() {
        return timedOut.get();
    }

    /** The bound port, or -1 before start and after close. */
    public synchronized int boundPort() {
        return server == null ? -1 : ((InetSocketAddress) server.localAddress()).getPort();
    }

    @Override
    public synchronized void close() {
        if (server == null) {
            return;
        }
        try {
            if (!server.close().awaitUninterruptibly(CLOSE_TIMEOUT_SECONDS, TimeUnit.SECONDS)
                    || !connections.close().awaitUninterruptibly(CLOSE_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                log.warn("{} close took over {} s", name, CLOSE_TIMEOUT_SECONDS);
            }
        } finally {
            server = null;
            connections = null;
        }
    }

    static String rootMessage(Throwable e) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return root.getMessage() == null ? root.toString() : root.getMessage();
    }
}
