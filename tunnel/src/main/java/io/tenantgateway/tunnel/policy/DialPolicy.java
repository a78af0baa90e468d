package io.tenantgateway.tunnel.policy;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.tunnel.protocol.Cidr;
import io.tenantgateway.tunnel.protocol.IpLiteral;
import io.tenantgateway.tunnel.protocol.TargetHost;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.util.List;

/**
 * Which destinations the agent may dial on behalf of the control plane. The rules, by kind of spelling, are the
 * table in {@code tunnel/README.md}; in short:
 *
 * <ul>
 *   <li>A deny entry (CIDR, host pattern or port) always wins. When an allow list for destinations
 *       ({@code allowCidrs}, {@code allowHosts}) is in force ({@link #allowListed}: any entry, or with
 *       {@link Defaults} any entry outside the default ranges), the destination must match one of its entries; when
 *       {@code allowPorts} is non-empty the port must be in it. {@link #ALLOW_ALL} allows everything, like upstream.
 *   <li>CIDRs judge the address that will be connected to: literals at once, names on every address they resolve
 *       to (one denied address denies the name). A deny-only policy allows a name whose addresses are all allowed.
 *   <li>IPv4-mapped addresses are judged as IPv4; IPv4-compatible and NAT64 ({@code 64:ff9b::/96}) addresses are
 *       also judged by their embedded IPv4 address (denied if either is denied).
 *   <li>The unspecified address ({@code 0.0.0.0}, {@code ::}, in any spelling) is the local host: the kernel
 *       connects it to loopback. It is denied when any deny CIDR overlaps loopback ({@code 127.0.0.0/8} or
 *       {@code ::1/128}) or contains it, and under allow lists it needs an allow CIDR that contains it.
 *   <li>Only strict literals are addresses ({@link IpLiteral}); a numeric-looking host that is not one
 *       ({@code 127.1}, {@code 0x7f.0.0.1}, {@code 127.000.000.001}) is malformed and refused, never resolved.
 *   <li>{@link Defaults} (the agent's {@code run} turns them on; the library default {@link #ALLOW_ALL} and
 *       {@link #of} have none): the agent's own admin port on any address of this host is always denied
 *       ({@value #ADMIN_PORT}); loopback ({@value #DEFAULT_LOOPBACK}: {@code 127.0.0.0/8}, {@code ::1},
 *       {@code localhost}, the unspecified address) and link-local ({@value #DEFAULT_LINK_LOCAL}:
 *       {@code 169.254.0.0/16}, {@code fe80::/10}) are denied unless an allow entry names them. An allow entry that
 *       lies inside those ranges ({@code 127.0.0.0/8}, {@code ::1}, {@code 169.254.169.254}, {@code localhost})
 *       only lifts the default where it covers it: it does not make an allow list. Any other allow entry does, as
 *       above, and then the lifting entries are members of it too.
 * </ul>
 *
 * <p>Decisions are made in two steps: {@link #check} on the requested host, then (when it answers
 * {@link Verdict#NEEDS_ADDRESS}) {@link #afterResolution} on every resolved address.
 */
public record DialPolicy(List<Cidr> allowCidrs, List<Cidr> denyCidrs, List<HostPattern> allowHosts,
        List<HostPattern> denyHosts, List<PortRange> allowPorts, List<PortRange> denyPorts, Defaults defaults) {

    public static final DialPolicy ALLOW_ALL = new DialPolicy(List.of(), List.of(), List.of(), List.of(), List.of(),
            List.of());

    /** Rule names that are not configured entries (metric label values). */
    public static final String MALFORMED = "malformed host";
    public static final String HOST_NOT_ALLOWED = "host not in allow list";
    public static final String NOT_ALLOWED = "destination not in allow lists";
    public static final String PORT_NOT_ALLOWED = "port not in allow list";
    /** {@link Defaults}: the agent's own admin port on an address of this host (never lifted). */
    public static final String ADMIN_PORT = "agent admin port";
    /** {@link Defaults}: loopback, {@code localhost} or the unspecified address, not named by an allow entry. */
    public static final String DEFAULT_LOOPBACK = "default: loopback";
    /** {@link Defaults}: link-local (cloud metadata at 169.254.169.254), not named by an allow entry. */
    public static final String DEFAULT_LINK_LOCAL = "default: link-local";

    private static final List<Cidr> LOOPBACK = List.of(Cidr.parse("127.0.0.0/8"), Cidr.parse("::1/128"));
    private static final List<Cidr> LINK_LOCAL = List.of(Cidr.parse("169.254.0.0/16"), Cidr.parse("fe80::/10"));
    private static final List<Cidr> UNSPECIFIED = List.of(Cidr.parse("0.0.0.0/32"), Cidr.parse("::/128"));

    public DialPolicy {
        allowCidrs = List.copyOf(requireNonNull(allowCidrs, "allowCidrs"));
        denyCidrs = List.copyOf(requireNonNull(denyCidrs, "denyCidrs"));
        allowHosts = List.copyOf(requireNonNull(allowHosts, "allowHosts"));
        denyHosts = List.copyOf(requireNonNull(denyHosts, "denyHosts"));
        allowPorts = List.copyOf(requireNonNull(allowPorts, "allowPorts"));
        denyPorts = List.copyOf(requireNonNull(denyPorts, "denyPorts"));
        requireNonNull(defaults, "defaults");
    }

    /** Exactly these rules, without {@link Defaults}. */
    public DialPolicy(List<Cidr> allowCidrs, List<Cidr> denyCidrs, List<HostPattern> allowHosts,
            List<HostPattern> denyHosts, List<PortRange> allowPorts, List<PortRange> denyPorts) {
        this(allowCidrs, denyCidrs, allowHosts, denyHosts, allowPorts, denyPorts, Defaults.NONE);
    }

    /**
     * What is denied before any configured rule is consulted: the agent's default. The agent's {@code run} builds
     * {@link #agent}; a library user who builds a {@link DialPolicy} gets {@link #NONE} (upstream's allow-all).
     *
     * @param denyLocal deny loopback ({@code 127.0.0.0/8}, {@code ::1}, {@code localhost}, {@code *.localhost}, the
     *     unspecified address) and link-local ({@code 169.254.0.0/16}, {@code fe80::/10}) unless an allow entry
     *     names them
     * @param adminPort the agent's admin port, denied on every address of this host whatever the allow entries
     *     say; 0: none (yet: the agent sets the bound port once its admin server listens)
     * @param hostAddresses this host's own addresses besides loopback and the unspecified address (which always
     *     count), e.g. its interfaces' addresses and the admin bind address
     */
    public record Defaults(boolean denyLocal, int adminPort, List<InetAddress> hostAddresses) {
        public static final Defaults NONE = new Defaults(false, 0, List.of());

        /** Whether these are {@link #NONE}'s (field by field, see {@link DialPolicy#allowsAll}). */
        public boolean isNone() {
            return !denyLocal && adminPort == 0 && hostAddresses.isEmpty();
        }

        public Defaults {
            if (adminPort < 0 || adminPort > 65535) {
                throw new IllegalArgumentException("admin port: " + adminPort + " (expected: 0..65535)");
            }
            // Compared by address only: an interface's IPv6 address carries its scope, a dialled one may not.
            hostAddresses = requireNonNull(hostAddresses, "hostAddresses").stream().map(Defaults::unscoped)
                    .map(IpLiteral::canonical).distinct().toList();
        }

        private static InetAddress unscoped(InetAddress address) {
            try {
                return InetAddress.getByAddress(address.getAddress());
            } catch (java.net.UnknownHostException e) {
                throw new IllegalStateException("4 or 16 bytes are always an address", e);
            }
        }

        /** The agent's default: loopback and link-local denied, {@code adminPort} denied on this host. */
        public static Defaults agent(int adminPort) {
            return new Defaults(true, adminPort, List.of());
        }

        public Defaults withAdminPort(int port) {
            return new Defaults(denyLocal, port, hostAddresses);
        }

        public Defaults withHostAddresses(List<InetAddress> addresses) {
            return new Defaults(denyLocal, adminPort, addresses);
        }

        /** Whether {@code address} (canonical) reaches this host: loopback, unspecified or a host address. */
        boolean isThisHost(InetAddress address) {
            return LOOPBACK.stream().anyMatch(c -> c.contains(address)) || IpLiteral.isUnspecified(address)
                    || hostAddresses.contains(unscoped(address));
        }
    }

    /** This policy with {@code value} as its defaults. */
    public DialPolicy withDefaults(Defaults value) {
        return new DialPolicy(allowCidrs, denyCidrs, allowHosts, denyHosts, allowPorts, denyPorts, value);
    }

    public enum Verdict { ALLOW, DENY, NEEDS_ADDRESS }

    /**
     * A decision and, for denials, which rule decided and on which address ({@code judged}, {@code null} when the
     * name or port decided). For logs and the metric; the peer only sees the generic message.
     */
    public record Decision(Verdict verdict, String rule, InetAddress judged) {
        static final Decision ALLOW = new Decision(Verdict.ALLOW, "", null);
        static final Decision NEEDS_ADDRESS = new Decision(Verdict.NEEDS_ADDRESS, "", null);

        static Decision deny(String rule) {
            return new Decision(Verdict.DENY, rule, null);
        }

        static Decision deny(String rule, InetAddress judged) {
            return new Decision(Verdict.DENY, rule, judged);
        }

        public boolean malformed() {
            return verdict == Verdict.DENY && MALFORMED.equals(rule);
        }
    }

    /**
     * Whether this policy is {@link #ALLOW_ALL}'s: no entries and no defaults. Compared field by field, not with the
     * record's {@code equals}, whose first call makes the JDK spin method handles (about 40 classes at the agent's
     * start, where {@code describe} asks).
     */
    public boolean allowsAll() {
        return allowCidrs.isEmpty() && denyCidrs.isEmpty() && allowHosts.isEmpty() && denyHosts.isEmpty()
                && allowPorts.isEmpty() && denyPorts.isEmpty() && defaults.isNone();
    }

    /** The error text sent back in DIAL_RSP for a denied dial: the address and the rule that denied it. */
    public static String deniedMessage(String address, String rule) {
        return "dial to " + address + " denied by policy (" + rule + ")";
    }

    /** Decides on the requested host text (see {@link TargetHost#parse}) and port, before any DNS lookup. */
    public Decision beforeResolution(String host, int port) {
        return check(TargetHost.parse(host), port);
    }

    /** Decides on the classified host and port, before any DNS lookup. */
    public Decision check(TargetHost host, int port) {
        if (host instanceof TargetHost.Malformed) {
            return Decision.deny(MALFORMED);
        }
        if (host instanceof TargetHost.Literal literal) {
            InetAddress address = IpLiteral.canonical(literal.address());
            if (isAdminPort(address, port)) {
                return Decision.deny(ADMIN_PORT, address);
            }
            Decision portDecision = checkPort(port);
            return portDecision != null ? portDecision : judge(null, address);
        }
        String name = ((TargetHost.Name) host).normalized();
        boolean localhost = isLocalhostName(name);
        if (localhost && defaults.adminPort() != 0 && port == defaults.adminPort()) {
            return Decision.deny(ADMIN_PORT);
        }
        Decision portDecision = checkPort(port);
        if (portDecision != null) {
            return portDecision;
        }
        for (HostPattern pattern : denyHosts) {
            if (pattern.matches(name)) {
                return Decision.deny("deny host " + pattern);
            }
        }
        if (localhost && defaults.denyLocal() && !localhostLifted(name)) {
            return Decision.deny(DEFAULT_LOOPBACK);
        }
        boolean hostAllowed = allowHosts.stream().anyMatch(p -> p.matches(name));
        if (!allowListed() || hostAllowed) {
            // Allowed by name (or nothing to be allowed by): only deny CIDRs and the defaults can still refuse it.
            return denyCidrs.isEmpty() && defaults.isNone() ? Decision.ALLOW : Decision.NEEDS_ADDRESS;
        }
        return allowCidrs.isEmpty() ? Decision.deny(HOST_NOT_ALLOWED) : Decision.NEEDS_ADDRESS;
    }

    /**
     * Decides on the addresses {@code name} resolved to: denied if any one is denied (the first denial is returned),
     * so whichever of them is connected to was judged.
     */
    public Decision afterResolution(String name, List<InetAddress> addresses, int port) {
        requireNonNull(name, "name");
        if (addresses.isEmpty()) {
            return Decision.deny(NOT_ALLOWED);
        }
        for (InetAddress address : addresses) {
            if (isAdminPort(IpLiteral.canonical(address), port)) {
                return Decision.deny(ADMIN_PORT, IpLiteral.canonical(address));
            }
        }
        Decision portDecision = checkPort(port);
        if (portDecision != null) {
            return portDecision;
        }
        TargetHost host = TargetHost.parse(name);
        String normalized = host instanceof TargetHost.Name n ? n.normalized() : null;
        for (HostPattern pattern : denyHosts) {
            if (normalized != null && pattern.matches(normalized)) {
                return Decision.deny("deny host " + pattern);
            }
        }
        for (InetAddress address : addresses) {
            Decision decision = judge(normalized, address);
            if (decision.verdict() == Verdict.DENY) {
                return decision;
            }
        }
        return Decision.ALLOW;
    }

    /** Whether {@code address} (canonical) and {@code port} are the agent's admin port on this host. */
    private boolean isAdminPort(InetAddress address, int port) {
        if (defaults.adminPort() == 0 || port != defaults.adminPort()) {
            return false;
        }
        Inet4Address embedded = IpLiteral.embeddedIpv4(address);
        return defaults.isThisHost(address) || (embedded != null && defaults.isThisHost(embedded));
    }

    /** Judges one address to be connected to; {@code name} is the normalized host name it came from, or null. */
    private Decision judge(String name, InetAddress raw) {
        InetAddress address = IpLiteral.canonical(raw);
        for (Cidr cidr : denyCidrs) {
            if (cidr.contains(address)) {
                return Decision.deny("deny cidr " + cidr, address);
            }
        }
        Inet4Address embedded = IpLiteral.embeddedIpv4(address);
        if (embedded != null) {
            for (Cidr cidr : denyCidrs) {
                if (cidr.contains(embedded)) {
                    return Decision.deny("deny cidr " + cidr + " (embedded IPv4)", address);
                }
            }
        }
        boolean unspecified = IpLiteral.isUnspecified(address);
        if (unspecified) {
            for (Cidr cidr : denyCidrs) {
                if (LOOPBACK.stream().anyMatch(cidr::overlaps)) {
                    return Decision.deny("unspecified address is the local host: deny cidr " + cidr, address);
                }
            }
        }
        if (defaults.denyLocal()) {
            Decision local = judgeLocal(name, address, unspecified);
            if (local == null && embedded != null) {
                local = judgeLocal(name, embedded, false);
            }
            if (local != null) {
                return Decision.deny(local.rule(), address);
            }
        }
        if (!allowListed()) {
            return Decision.ALLOW;
        }
        if (allowCidrs.stream().anyMatch(c -> c.contains(address))) {
            return Decision.ALLOW;
        }
        if (name != null && allowHosts.stream().anyMatch(p -> p.matches(name))) {
            return Decision.ALLOW;
        }
        return Decision.deny(unspecified ? "unspecified address is the local host: " + NOT_ALLOWED : NOT_ALLOWED,
                address);
    }

    /**
     * The default denial of {@code address} (loopback, unspecified or link-local) unless an allow CIDR contains it
     * (or, for loopback, {@code name} matches an allow entry {@code localhost}/{@code *.localhost}); {@code null}
     * when the defaults let it through.
     */
    private Decision judgeLocal(String name, InetAddress address, boolean unspecified) {
        String rule = unspecified || LOOPBACK.stream().anyMatch(c -> c.contains(address)) ? DEFAULT_LOOPBACK
                : LINK_LOCAL.stream().anyMatch(c -> c.contains(address)) ? DEFAULT_LINK_LOCAL : null;
        if (rule == null || allowCidrs.stream().anyMatch(c -> c.contains(address))) {
            return null;
        }
        if (rule.equals(DEFAULT_LOOPBACK) && !unspecified && name != null && localhostNamed(name)) {
            return null;
        }
        return Decision.deny(rule);
    }

    /** {@code localhost} and names below it (RFC 6761: always loopback). */
    private static boolean isLocalhostName(String normalized) {
        return normalized.equals("localhost") || normalized.endsWith(".localhost");
    }

    /** {@code localhost}, {@code *.localhost} and the like: patterns that only match loopback names. */
    private static boolean isLocalhostPattern(HostPattern pattern) {
        String text = pattern.pattern();
        return isLocalhostName(text.startsWith("*.") ? text.substring(2) : text);
    }

    /**
     * Whether the name {@code localhost} ({@code normalized}) passes the default before resolution: an allow entry
     * names it ({@code localhost}, {@code *.localhost}) or an allow CIDR opens part of loopback (its addresses are
     * then judged one by one).
     */
    private boolean localhostLifted(String normalized) {
        return localhostNamed(normalized) || allowCidrs.stream().anyMatch(c -> LOOPBACK.stream().anyMatch(c::overlaps));
    }

    /** Whether an allow entry {@code localhost}/{@code *.localhost} matches {@code normalized}. */
    private boolean localhostNamed(String normalized) {
        return allowHosts.stream().anyMatch(p -> isLocalhostPattern(p) && p.matches(normalized));
    }

    /**
     * Whether an allow list is in force: some allow CIDR or host pattern that does not merely lift a default (one
     * that lies inside loopback, the unspecified address or link-local, or {@code localhost}). Without defaults
     * every entry makes the list.
     */
    public boolean allowListed() {
        if (!defaults.denyLocal()) {
            return !allowCidrs.isEmpty() || !allowHosts.isEmpty();
        }
        return allowCidrs.stream().anyMatch(c -> !liftsOnly(c))
                || allowHosts.stream().anyMatch(p -> !isLocalhostPattern(p));
    }

    /** Whether {@code cidr} lies inside loopback, the unspecified address or link-local. */
    private static boolean liftsOnly(Cidr cidr) {
        return java.util.stream.Stream.of(LOOPBACK, UNSPECIFIED, LINK_LOCAL).flatMap(List::stream)
                .anyMatch(range -> range.contains(cidr.network()) && cidr.prefixLength() >= range.prefixLength());
    }

    /**
     * One line for {@code /debug/config} and the start log: the defaults, what the allow entries do, the lists.
     */
    public String describe() {
        if (allowsAll()) {
            return "allow-all";
        }
        StringBuilder out = new StringBuilder();
        if (defaults.adminPort() != 0) {
            out.append("denied: agent admin port ").append(defaults.adminPort()).append(" on this host (loopback,")
                    .append(" unspecified, localhost");
            if (!defaults.hostAddresses().isEmpty()) {
                out.append(", ").append(defaults.hostAddresses().stream().map(InetAddress::getHostAddress)
                        .collect(java.util.stream.Collectors.joining(", ")));
            }
            out.append("); ");
        }
        if (defaults.denyLocal()) {
            out.append("default: loopback (127.0.0.0/8, ::1, localhost, 0.0.0.0, ::) and link-local")
                    .append(" (169.254.0.0/16, fe80::/10) denied unless allowed; ");
        }
        out.append(allowListed() ? "allow list: " + list(allowCidrs, allowHosts) : allowCidrs.isEmpty()
                && allowHosts.isEmpty() ? "no allow list" : "no allow list, opened: " + list(allowCidrs, allowHosts));
        if (!denyCidrs.isEmpty() || !denyHosts.isEmpty()) {
            out.append("; deny: ").append(list(denyCidrs, denyHosts));
        }
        if (!allowPorts.isEmpty()) {
            out.append("; allow ports: ").append(allowPorts);
        }
        if (!denyPorts.isEmpty()) {
            out.append("; deny ports: ").append(denyPorts);
        }
        return out.toString();
    }

    private static String list(List<Cidr> cidrs, List<HostPattern> hosts) {
        return java.util.stream.Stream.concat(cidrs.stream().map(Cidr::toString), hosts.stream()
                .map(HostPattern::toString)).collect(java.util.stream.Collectors.joining(", ", "[", "]"));
    }

    private Decision checkPort(int port) {
        for (PortRange range : denyPorts) {
            if (range.contains(port)) {
                return Decision.deny("deny port " + range);
            }
        }
        if (!allowPorts.isEmpty() && allowPorts.stream().noneMatch(r -> r.contains(port))) {
            return Decision.deny(PORT_NOT_ALLOWED);
        }
        return null;
    }

    /** Builds a policy from flag-style strings. */
    public static DialPolicy of(List<String> allowCidrs, List<String> denyCidrs, List<String> allowHosts,
            List<String> denyHosts, List<String> allowPorts, List<String> denyPorts) {
        return new DialPolicy(allowCidrs.stream().map(Cidr::parse).toList(),
                denyCidrs.stream().map(Cidr::parse).toList(),
                allowHosts.stream().map(HostPattern::new).toList(),
                denyHosts.stream().map(HostPattern::new).toList(),
                allowPorts.stream().map(PortRange::parse).toList(),
                denyPorts.stream().map(PortRange::parse).toList());
    }
}
