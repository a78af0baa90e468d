package io.tenantgateway.agent.http;

import static java.util.Objects.requireNonNull;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.AdaptiveRecvByteBufAllocator;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.handler.codec.http.HttpResponseEncoder;
import io.netty.handler.codec.http.HttpServerExpectContinueHandler;
import io.netty.handler.flow.FlowControlHandler;
import io.netty.handler.timeout.IdleStateHandler;
import io.tenantgateway.common.net.PortInUseException;
import io.tenantgateway.certs.vertx.ServerLimits;
import io.tenantgateway.common.memory.MemoryBudget;
import io.tenantgateway.common.net.AddressInUseException;
import io.tenantgateway.tunnel.transport.Transports;
import java.net.InetSocketAddress;
import java.time.Duration;
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
 * <p>Limits ({@link ServerLimits}, as the webhook's Vert.x servers apply them, and this port's own): at most
 * {@code maxConnections} connections, at most {@value #DEFAULT_MAX_PER_PEER} from one remote address; a new connection
 * over either cap displaces an idle one (nothing of a request received: new, or kept alive between requests) rather
 * than being refused, so the kubelet's probes always get in ({@link ConnectionSlots} says whom); a new connection must
 * send its first byte within {@link #DEFAULT_FIRST_BYTE_TIMEOUT} (3 s); a request must arrive in full (line, headers,
 * body) within {@code requestTimeout} of the connection opening or of the previous response, so a client that
 * trickles bytes (slowloris) is cut; a connection with no traffic for {@code idleTimeout} is closed (the admin port's
 * outlasts a JFR recording); a request line over {@value #MAX_INITIAL_LINE} bytes is answered 414, headers over
 * {@value #MAX_HEADER_SIZE} bytes 431, a body over {@value #MAX_BODY} bytes 413 (the ports take no body: it is
 * discarded as it arrives, never buffered), ambiguous framing 400 ({@link RequestDecoder}). Requests of one
 * connection are answered one at a time, in order (pipelined ones wait unread: {@code AUTO_READ} off; at most
 * {@value ConnectionHandler#MAX_PIPELINED} wait decoded). A socket read takes at most {@value #MAX_READ} bytes.
 *
 * <p>Threading: {@link #start} and {@link #close} from any thread (synchronized); every connection and every handler
 * call run on the loop's one event loop (the slot table is confined to it); the counters are atomic.
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
    /** Largest socket read: what one read may decode at once is bounded by it (a request fits in far less). */
    static final int MAX_READ = 16 * 1024;
    /**
     * Connections one remote address may hold: an eighth of the 1,024 cap, so filling the cap takes 8 addresses, and
     * far above what one client opens (a browser 6, the kubelet 1 per probe, Prometheus 1).
     */
    public static final int DEFAULT_MAX_PER_PEER = 128;
    /**
     * A new connection that sends nothing for this long is closed. Every real client sends its request as soon as it
     * is connected (the kubelet, Prometheus, curl: within milliseconds); 3 s is 3 times the kubelet's default probe
     * timeout, and an idle-connection flood is cleared within it.
     */
    public static final Duration DEFAULT_FIRST_BYTE_TIMEOUT = Duration.ofSeconds(3);
    /**
     * The memory-budget account of answers written but not yet taken by their clients (direct memory while the socket
     * is full): an eighth of the direct limit (4 MiB of the launcher's 32), at least 1 MiB. Only clients that stop
     * reading fill it (1,024 of them each holding a {@code /metrics} answer would hold tens of MiB, the tunnels'
     * memory); past it a large answer is a short 503. Shared by the health and admin ports.
     */
    public static final String RESPONSES_ACCOUNT = "http-responses";
    static final double RESPONSES_SHARE = 0.125;
    static final long RESPONSES_MINIMUM = 1024 * 1024;
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
    private final AtomicLong displaced = new AtomicLong();
    private final AtomicLong timedOut = new AtomicLong();
    private final AtomicLong firstByteTimedOut = new AtomicLong();
    private final AtomicLong pipelineOverflows = new AtomicLong();
    private int maxPerPeer;
    private Duration firstByteTimeout = DEFAULT_FIRST_BYTE_TIMEOUT;
    private MemoryBudget.Account responses = MemoryBudget.jvm().account(RESPONSES_ACCOUNT,
            MemoryBudget.Pool.DIRECT, RESPONSES_SHARE, RESPONSES_MINIMUM);
    /** Made at start; used on the loop only. */
    private volatile ConnectionSlots slots;
    /** Each kind of warning is throttled on its own, so a flood of one kind never hides the other. */
    private final AtomicLong lastCapWarn = new AtomicLong(System.nanoTime() - WARN_EVERY_NANOS);
    private final AtomicLong lastTimeoutWarn = new AtomicLong(System.nanoTime() - WARN_EVERY_NANOS);
    private final AtomicLong lastDisplaceWarn = new AtomicLong(System.nanoTime() - WARN_EVERY_NANOS);
    private final AtomicLong lastFirstByteWarn = new AtomicLong(System.nanoTime() - WARN_EVERY_NANOS);
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
        this.maxPerPeer = Math.min(DEFAULT_MAX_PER_PEER, limits.maxConnections());
    }

    /**
     * Sets the per-address cap and the first-byte timeout (tests; the ports use the defaults). Before {@link #start}.
     */
    synchronized HttpEndpoint peerLimits(int perPeer, Duration firstByte) {
        if (perPeer < 1 || perPeer > limits.maxConnections()) {
            throw new IllegalArgumentException("max connections per peer: " + perPeer + " (expected: 1.."
                    + limits.maxConnections() + ")");
        }
        requireNonNull(firstByte, "firstByte");
        if (firstByte.isZero() || firstByte.isNegative()) {
            throw new IllegalArgumentException("first-byte timeout: " + firstByte + " (expected: > 0)");
        }
        this.maxPerPeer = perPeer;
        this.firstByteTimeout = firstByte;
        return this;
    }

    public synchronized void start() {
        if (server != null) {
            return;
        }
        EventLoopGroup group = loop.group();
        ChannelGroup accepted = new DefaultChannelGroup(name, group.next());
        ConnectionSlots table = new ConnectionSlots(limits.maxConnections(), maxPerPeer);
        slots = table;
        ServerBootstrap bootstrap = new ServerBootstrap().group(group)
                .channel(Transports.serverSocketChannel(group))
                .option(ChannelOption.SO_REUSEADDR, true)
                .childOption(ChannelOption.AUTO_READ, false)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(ChannelOption.RCVBUF_ALLOCATOR, new AdaptiveRecvByteBufAllocator(64, 1024, MAX_READ))
                .childHandler(new ChannelInitializer<>() {
                    @Override
                    protected void initChannel(Channel channel) {
                        accept(channel, accepted, table);
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

    /** On the loop, for each accepted connection: a slot (displacing an idle connection at a cap), the pipeline. */
    private void accept(Channel channel, ChannelGroup accepted, ConnectionSlots table) {
        Object peer = channel.remoteAddress() instanceof InetSocketAddress address && address.getAddress() != null
                ? address.getAddress() : "unknown";
        ConnectionSlots.Opened opened = table.open(peer, channel);
        switch (opened.admission()) {
            case REFUSED -> {
                rejected.incrementAndGet();
                warn(lastCapWarn, "{}: every one of {} connections (at most {} per address) is being answered;"
                        + " closing the new one from {}", name, table.open(), table.perPeer(), channel.remoteAddress());
                channel.close();
                return;
            }
            case DISPLACED_PEER -> {
                displaced.incrementAndGet();
                warn(lastDisplaceWarn, "{}: {} holds {} connections, the per-address cap; closing its {} one for"
                        + " its new one ({} displaced so far)", name, peer, table.perPeer(), what(opened),
                        displaced.get());
                abort((Channel) opened.displaced().owner);
            }
            case DISPLACED_OLDEST_IDLE, DISPLACED_OLDEST_WAITING -> {
                displaced.incrementAndGet();
                Channel victim = (Channel) opened.displaced().owner;
                warn(lastDisplaceWarn, "{}: {} connections open, the cap (max connections {}); closing the {} one"
                        + " from {} for a new one from {} ({} displaced so far)", name, table.max(), table.max(),
                        what(opened), victim.remoteAddress(), peer, displaced.get());
                abort(victim);
            }
            case TAKEN -> { }
        }
        open.incrementAndGet();
        channel.closeFuture().addListener(closed -> open.decrementAndGet());
        accepted.add(channel);
        ConnectionHandler connection = new ConnectionHandler(this, opened.slot());
        channel.pipeline().addLast(
                connection.bytesIn(),
                new IdleStateHandler(0, 0, limits.idleTimeout().toMillis(), TimeUnit.MILLISECONDS),
                new RequestDecoder(MAX_INITIAL_LINE, MAX_HEADER_SIZE, MAX_CHUNK_SIZE),
                new HttpResponseEncoder(),
                new HttpServerExpectContinueHandler(),
                connection.pipelineLimit(),
                new FlowControlHandler(),
                connection);
    }

    /**
     * Closes with a reset ({@code SO_LINGER} 0): a displaced or silent connection has nothing worth a FIN handshake,
     * and a flood re-opened as cut leaves no TIME_WAIT socket per connection on the node (200,000 in 40 s otherwise).
     */
    static void abort(Channel channel) {
        try {
            channel.config().setOption(ChannelOption.SO_LINGER, 0);
        } catch (RuntimeException e) {
            log.debug("SO_LINGER on {}: {}", channel, e.toString()); // closed already; the close below is a no-op
        }
        channel.close();
    }

    private static String what(ConnectionSlots.Opened opened) {
        return opened.displaced().state() == ConnectionSlots.State.IDLE ? "oldest idle" : "oldest waiting-on-the-client";
    }

    /** The connection's slot changed state (on the loop). */
    void slotState(ConnectionSlots.Slot slot, ConnectionSlots.State state) {
        ConnectionSlots table = slots;
        if (table != null) {
            table.set(slot, state);
        }
    }

    /** The connection closed (on the loop): its slot is free (a displaced one's was freed already). */
    void closed(ConnectionSlots.Slot slot) {
        ConnectionSlots table = slots;
        if (table != null) {
            table.close(slot);
        }
    }

    Duration firstByteTimeout() {
        return firstByteTimeout;
    }

    MemoryBudget.Account responses() {
        return responses;
    }

    /** Replaces the {@link #RESPONSES_ACCOUNT} account (tests). Before {@link #start}. */
    synchronized HttpEndpoint responsesAccount(MemoryBudget.Account account) {
        this.responses = requireNonNull(account, "account");
        return this;
    }

    /** A new connection sent nothing within the first-byte timeout: counted, logged (throttled); the caller closes. */
    void firstByteTimedOut(Channel channel) {
        firstByteTimedOut.incrementAndGet();
        warn(lastFirstByteWarn, "{}: nothing received from {} within {} ms of connecting; closing the connection"
                + " ({} so far)", name, channel.remoteAddress(), firstByteTimeout.toMillis(), firstByteTimedOut.get());
    }

    /** A client pipelined more than {@link ConnectionHandler#MAX_PIPELINED} requests: DEBUG (it is told by a close). */
    void pipelineOverflow(Channel channel) {
        pipelineOverflows.incrementAndGet();
        log.debug("{}: {} pipelined more than {} requests; answering those and closing", name,
                channel.remoteAddress(), ConnectionHandler.MAX_PIPELINED);
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

    /** New connections closed because every slot was answering a request (none idle to displace). */
    public long rejectedConnections() {
        return rejected.get();
    }

    /** Connections closed to make room for a new one (at the cap, or at the per-address cap). */
    public long displacedConnections() {
        return displaced.get();
    }

    /** New connections closed because they sent nothing within the first-byte timeout. */
    public long firstByteTimeouts() {
        return firstByteTimedOut.get();
    }

    /** Connections cut because they pipelined too many requests. */
    public long pipelineOverflows() {
        return pipelineOverflows.get();
    }

    public int maxConnectionsPerPeer() {
        return maxPerPeer;
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
