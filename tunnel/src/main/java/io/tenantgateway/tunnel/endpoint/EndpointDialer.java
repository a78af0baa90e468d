package io.tenantgateway.tunnel.endpoint;

import static java.util.Objects.requireNonNull;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.AdaptiveRecvByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelOption;
import io.netty.channel.ConnectTimeoutException;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.resolver.DefaultHostsFileEntriesResolver;
import io.netty.resolver.NoopAddressResolverGroup;
import io.netty.resolver.ResolvedAddressTypes;
import io.netty.resolver.dns.DnsAddressResolverGroup;
import io.netty.resolver.dns.DnsNameResolverBuilder;
import io.netty.util.NetUtil;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.Promise;
import io.netty.util.concurrent.ScheduledFuture;
import io.tenantgateway.tunnel.policy.DialPolicy.Decision;
import io.tenantgateway.tunnel.policy.DialPolicy.Verdict;
import io.tenantgateway.tunnel.policy.DialPolicy;
import io.tenantgateway.tunnel.protocol.TargetHost;
import io.tenantgateway.tunnel.transport.Transports;
import java.net.ConnectException;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Dials targets without blocking: strict IP literals connect at once, names go through Netty's asynchronous DNS
 * resolver (hosts file first; the JDK resolver would block the event loop), malformed hosts are refused without a
 * lookup, the policy is applied to the name and again to every resolved address, the connect goes to a judged
 * address, and one timer bounds resolution plus connect.
 *
 * <p>Channels are created with {@code AUTO_READ=false}: the tunnel decides when to read (flow control), and
 * with a receive allocator that grows up to {@code maxReadSize}, so a busy target is read in large chunks.
 */
public final class EndpointDialer implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(EndpointDialer.class);

    /** Replaced whole by {@link #policy(DialPolicy)} (the agent learns its admin port after the tunnel started). */
    private volatile DialPolicy policy;
    private final Duration timeout;
    private final int maxReadSize;
    private final WriteBufferWaterMark waterMark;
    private final EventLoopGroup group;
    /**
     * Made at the first dial of a name ({@link #resolvers()}): dials of IP literals (kubelets by node address) need no
     * DNS, and an agent that dialed no name loads none of Netty's DNS resolver and codec (issue 35). Making it reads
     * {@code /etc/resolv.conf} once, on the loop of that first dial (a small local file).
     */
    private volatile DnsAddressResolverGroup resolvers;
    /** Guards making {@link #resolvers} and {@link #closed}. */
    private final Object resolversLock = new Object();
    private boolean closed;
    private final DefaultHostsFileEntriesResolver hostsFile = new DefaultHostsFileEntriesResolver();
    /** Netty's default choice, made explicit so that the hosts-file lookup below uses the same. */
    private static final ResolvedAddressTypes ADDRESS_TYPES = NetUtil.isIpV4StackPreferred()
            ? ResolvedAddressTypes.IPV4_ONLY
            : NetUtil.isIpV6AddressesPreferred() ? ResolvedAddressTypes.IPV6_PREFERRED
                    : ResolvedAddressTypes.IPV4_PREFERRED;

    /**
     * @param group the group whose loops will call {@link #dial} (selects the channel and resolver transports)
     * @param maxReadSize largest single socket read, which becomes the largest DATA payload
     * @param writeHighWaterMark bytes pending towards a target before its channel reports unwritable
     */
    public EndpointDialer(EventLoopGroup group, DialPolicy policy, Duration timeout, int maxReadSize,
            int writeHighWaterMark) {
        this.policy = requireNonNull(policy, "policy");
        this.timeout = requireNonNull(timeout, "timeout");
        this.maxReadSize = maxReadSize;
        this.waterMark = new WriteBufferWaterMark(Math.max(1, writeHighWaterMark / 2), writeHighWaterMark);
        this.group = requireNonNull(group, "group");
    }

    /** The DNS resolvers, made on first use; after {@link #close()} an {@link IllegalStateException}. */
    private DnsAddressResolverGroup resolvers() {
        DnsAddressResolverGroup made = resolvers;
        if (made != null) {
            return made;
        }
        synchronized (resolversLock) {
            if (closed) {
                throw new IllegalStateException("endpoint dialer closed");
            }
            if (resolvers == null) {
                resolvers = new DnsAddressResolverGroup(new DnsNameResolverBuilder()
                        .resolvedAddressTypes(ADDRESS_TYPES)
                        .hostsFileEntriesResolver(hostsFile)
                        .datagramChannelType(Transports.datagramChannel(group))
                        .socketChannelType(Transports.socketChannel(group)));
            }
            return resolvers;
        }
    }

    public DialPolicy policy() {
        return policy;
    }

    /** Judges every later dial by {@code value}; dials in flight finish under the policy they started with. */
    public void policy(DialPolicy value) {
        policy = requireNonNull(value, "policy");
    }

    /**
     * Dials {@code address} ({@code host:port}, IPv6 hosts in brackets) on {@code loop}, with {@code handler}
     * installed on the new channel. Must be called on {@code loop}; the result completes there. Cancelling the
     * result aborts the dial and closes a channel that connected meanwhile.
     *
     * <p>Failures are {@link DialFailure}s whose message is ready for DIAL_RSP.
     */
    public Future<Channel> dial(EventLoop loop, String address, ChannelHandler handler) {
        Promise<Channel> promise = loop.newPromise();
        String host;
        int port;
        try {
            int colon = address.lastIndexOf(':');
            if (colon <= 0 || colon == address.length() - 1) {
                throw new IllegalArgumentException("missing port");
            }
            host = address.substring(0, colon); // brackets stay: TargetHost allows them around IPv6 only
            port = Integer.parseInt(address.substring(colon + 1));
            if (port < 1 || port > 65535 || host.isEmpty()) {
                throw new IllegalArgumentException("port out of range");
            }
        } catch (IllegalArgumentException e) {
            promise.setFailure(new DialFailure(DialFailure.Reason.UNKNOWN, "dial tcp " + address
                    + ": address " + address + ": invalid address (expected: host:port)", e));
            return promise;
        }
        TargetHost target = TargetHost.parse(host);
        DialPolicy policy = this.policy;
        Decision decision = policy.check(target, port);
        if (decision.verdict() == Verdict.DENY) {
            return denied(promise, address, target, decision);
        }
        ScheduledFuture<?> timer = loop.schedule(() -> {
            promise.tryFailure(new DialFailure(DialFailure.Reason.TIMEOUT, "dial tcp " + address + ": i/o timeout",
                    null));
        }, timeout.toNanos(), TimeUnit.NANOSECONDS);
        promise.addListener(f -> timer.cancel(false));
        long deadline = System.nanoTime() + timeout.toNanos();

        if (target instanceof TargetHost.Literal literal) {
            InetAddress connectTo;
            try {
                connectTo = scoped(literal);
            } catch (UnknownHostException | SocketException e) {
                promise.tryFailure(new DialFailure(DialFailure.Reason.UNKNOWN, "dial tcp " + address
                        + ": no such network interface", e));
                return promise;
            }
            connect(loop, new InetSocketAddress(connectTo, port), handler, promise, address, deadline);
            return promise;
        }
        String name = target.text();
        int targetPort = port;
        // Every address is judged and the connect gets one of them as an InetAddress: no second lookup, so a
        // rebinding DNS answer cannot swap in an address that was not judged.
        resolveAll(loop, name, port).addListener(f -> {
            if (promise.isDone()) {
                return;
            }
            if (!f.isSuccess()) {
                promise.tryFailure(new DialFailure(DialFailure.Reason.UNKNOWN, "dial tcp: lookup " + name + ": "
                        + (f.cause() instanceof UnknownHostException ? "no such host" : message(f.cause())),
                        f.cause()));
                return;
            }
            @SuppressWarnings("unchecked")
            List<InetSocketAddress> resolved = (List<InetSocketAddress>) f.getNow();
            List<InetAddress> addresses = resolved.stream().map(InetSocketAddress::getAddress).toList();
            if (decision.verdict() == Verdict.NEEDS_ADDRESS) {
                Decision second = policy.afterResolution(name, addresses, targetPort);
                if (second.verdict() == Verdict.DENY) {
                    denied(promise, address, target, second);
                    return;
                }
            }
            connect(loop, new InetSocketAddress(addresses.get(0), targetPort), handler, promise, address, deadline);
        });
        return promise;
    }

    /**
     * All addresses for {@code name}, hosts file first. Netty looks a name up in the hosts file only as written, so
     * an absolute name ({@code localhost.}) would skip it and go to DNS; hosts-file names carry no trailing dot,
     * so it is looked up there without the dot (as glibc does), and in DNS as written (still absolute).
     */
    private Future<List<InetSocketAddress>> resolveAll(EventLoop loop, String name, int port) {
        if (name.endsWith(".") && name.length() > 1) {
            List<InetAddress> fromHosts = hostsFile.addresses(name.substring(0, name.length() - 1), ADDRESS_TYPES);
            if (fromHosts != null && !fromHosts.isEmpty()) {
                return loop.newSucceededFuture(fromHosts.stream().map(a -> new InetSocketAddress(a, port)).toList());
            }
        }
        return resolvers().getResolver(loop).resolveAll(InetSocketAddress.createUnresolved(name, port));
    }

    /** The literal's address, with its IPv6 zone (interface name or index) applied. */
    private static InetAddress scoped(TargetHost.Literal literal) throws UnknownHostException, SocketException {
        String zone = literal.zone();
        if (zone == null || !(literal.address() instanceof Inet6Address)) {
            return literal.address();
        }
        byte[] bytes = literal.address().getAddress();
        int index = TargetHost.zoneIndex(zone);
        if (index == TargetHost.BAD_ZONE_INDEX) {
            throw new UnknownHostException("IPv6 zone index " + zone + " out of range"); // TargetHost refuses these
        }
        if (index >= 0) {
            return Inet6Address.getByAddress(null, bytes, index);
        }
        NetworkInterface nic = NetworkInterface.getByName(zone);
        if (nic == null) {
            throw new UnknownHostException("no network interface " + zone);
        }
        return Inet6Address.getByAddress(null, bytes, nic);
    }

    private Promise<Channel> denied(Promise<Channel> promise, String address, TargetHost target, Decision decision) {
        String judged = decision.judged() != null ? decision.judged().getHostAddress()
                : target instanceof TargetHost.Literal literal ? literal.address().getHostAddress() : "";
        String detail = target instanceof TargetHost.Malformed malformed ? " problem=\"" + malformed.problem() + "\""
                : "";
        log.info("dial denied by policy address={} judged={} rule=\"{}\"{}", address, judged, decision.rule(),
                detail);
        promise.tryFailure(new DialFailure(DialFailure.Reason.DENIED, decision.rule(),
                decision.malformed() ? "dial tcp " + address + ": address " + target.text()
                        + ": malformed host (expected: a host name, a.b.c.d without leading zeros, or an IPv6"
                        + " address)" : DialPolicy.deniedMessage(address, decision.rule()), null));
        return promise;
    }

    private void connect(EventLoop loop, InetSocketAddress target, ChannelHandler handler, Promise<Channel> promise,
            String address, long deadline) {
        long remainingMillis = Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()));
        ChannelFuture connect = new Bootstrap().group(loop)
                .channel(Transports.socketChannel(loop))
                .resolver(NoopAddressResolverGroup.INSTANCE)
                .option(ChannelOption.AUTO_READ, false)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.min(Integer.MAX_VALUE, remainingMillis))
                .option(ChannelOption.WRITE_BUFFER_WATER_MARK, waterMark)
                .option(ChannelOption.RCVBUF_ALLOCATOR,
                        new AdaptiveRecvByteBufAllocator(Math.min(1024, maxReadSize), Math.min(16384, maxReadSize),
                                maxReadSize))
                .handler(handler)
                .connect(target);
        connect.addListener(f -> {
            if (f.isSuccess()) {
                if (!promise.trySuccess(connect.channel())) {
                    connect.channel().close();
                }
            } else {
                promise.tryFailure(classify(address, f.cause()));
            }
        });
        promise.addListener(f -> {
            // A channel that could not even be created (no file descriptor left) is Netty's FailedChannel, which has
            // no event loop: closing it throws inside this listener, and Netty logs that with a stack trace per
            // dial. A channel not registered yet is closed by the connect listener above when it completes.
            if (!f.isSuccess() && connect.channel().isRegistered()) {
                connect.channel().close();
            }
        });
    }

    /** What the kernel says when a process runs out of something a socket needs (errno texts, lower case). */
    private static final List<String> EXHAUSTED = List.of("too many open files", "too many open files in system",
            "no buffer space available", "cannot assign requested address", "cannot allocate memory");
    /** One WARN per this interval for exhausted resources; the rest at DEBUG (each dial still gets its DIAL_RSP). */
    private static final long EXHAUSTED_WARN_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(60);
    private static final java.util.concurrent.atomic.AtomicLong lastExhaustedWarn =
            new java.util.concurrent.atomic.AtomicLong(System.nanoTime() - EXHAUSTED_WARN_INTERVAL_NANOS);

    /**
     * The resource a failure ran out of, in the kernel's words ({@code too many open files}), looked up through the
     * cause chain (Netty wraps the socket's error in {@code ChannelException: Unable to create Channel from class
     * …}), or {@code null}.
     */
    static String exhausted(Throwable cause) {
        String found = null;
        for (Throwable t = cause; t != null && found == null; t = t.getCause()) {
            String text = t.getMessage();
            if (text != null) {
                String lower = text.toLowerCase(Locale.ROOT);
                for (String known : EXHAUSTED) {
                    if (lower.contains(known)) {
                        found = known; // the longest match wins: "… in system" is listed after its prefix
                    }
                }
            }
            if (t.getCause() == t) {
                break;
            }
        }
        return found;
    }

    static DialFailure classify(String address, Throwable cause) {
        if (cause instanceof ConnectTimeoutException) {
            return new DialFailure(DialFailure.Reason.TIMEOUT, "dial tcp " + address + ": i/o timeout", cause);
        }
        String exhausted = exhausted(cause);
        if (exhausted != null) {
            // Go's wording: "dial tcp 10.0.0.1:443: socket: too many open files" when the socket could not be made.
            boolean socket = cause instanceof io.netty.channel.ChannelException
                    || !exhausted.equals("cannot assign requested address");
            String text = "dial tcp " + address + ": " + (socket ? "socket: " : "connect: ") + exhausted;
            long now = System.nanoTime();
            long last = lastExhaustedWarn.get();
            if (now - last >= EXHAUSTED_WARN_INTERVAL_NANOS && lastExhaustedWarn.compareAndSet(last, now)) {
                log.warn("dials fail: the agent ran out of a resource ({}); every dial fails until tunnels close or"
                        + " the limit is raised (ulimit -n, sysctl); further failures within 60s are logged at DEBUG"
                        + " address={}", exhausted, address);
            } else {
                log.debug("dial failed: {} address={}", exhausted, address);
            }
            return new DialFailure(DialFailure.Reason.UNKNOWN, text, null);
        }
        String text = message(cause);
        if (cause instanceof ConnectException && text.toLowerCase(Locale.ROOT).contains("refused")) {
            text = "connection refused";
        }
        return new DialFailure(DialFailure.Reason.UNKNOWN, "dial tcp " + address + ": connect: " + text, cause);
    }

    private static String message(Throwable cause) {
        String text = cause.getMessage();
        if (text == null) {
            return cause.getClass().getSimpleName();
        }
        int detail = text.indexOf(": /");
        return (detail > 0 ? text.substring(0, detail) : text).toLowerCase(Locale.ROOT);
    }

    @Override
    public void close() {
        DnsAddressResolverGroup made;
        synchronized (resolversLock) {
            closed = true;
            made = resolvers;
        }
        if (made != null) {
            made.close();
        }
    }
}
