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
 *   <li>A deny entry (CIDR, host pattern or port) always wins. When any allow list for destinations
 *       ({@code allowCidrs}, {@code allowHosts}) is non-empty, the destination must match one of its entries; when
 *       {@code allowPorts} is non-empty the port must be in it. The default allows everything, like upstream.
 *   <li>CIDRs judge the address that will be connected to: literals at once, names on every address they resolve
 *       to (one denied address denies the name). A deny-only policy allows a name whose addresses are all allowed.
 *   <li>IPv4-mapped addresses are judged as IPv4; IPv4-compatible and NAT64 ({@code 64:ff9b::/96}) addresses are
 *       also judged by their embedded IPv4 address (denied if either is denied).
 *   <li>The unspecified address ({@code 0.0.0.0}, {@code ::}, in any spelling) is the local host: the kernel
 *       connects it to loopback. It is denied when any deny CIDR overlaps loopback ({@code 127.0.0.0/8} or
 *       {@code ::1/128}) or contains it, and under allow lists it needs an allow CIDR that contains it.
 *   <li>Only strict literals are addresses ({@link IpLiteral}); a numeric-looking host that is not one
 *       ({@code 127.1}, {@code 0x7f.0.0.1}, {@code 127.000.000.001}) is malformed and refused, never resolved.
 * </ul>
 *
 * <p>Decisions are made in two steps: {@link #check} on the requested host, then (when it answers
 * {@link Verdict#NEEDS_ADDRESS}) {@link #afterResolution} on every resolved address.
 */
public record DialPolicy(List<Cidr> allowCidrs, List<Cidr> denyCidrs, List<HostPattern> allowHosts,
        List<HostPattern> denyHosts, List<PortRange> allowPorts, List<PortRange> denyPorts) {

    public static final DialPolicy ALLOW_ALL = new DialPolicy(List.of(), List.of(), List.of(), List.of(), List.of(),
            List.of());

    /** Rule names that are not configured entries (metric label values). */
    public static final String MALFORMED = "malformed host";
    public static final String HOST_NOT_ALLOWED = "host not in allow list";
    public static final String NOT_ALLOWED = "destination not in allow lists";
    public static final String PORT_NOT_ALLOWED = "port not in allow list";

    private static final List<Cidr> LOOPBACK = List.of(Cidr.parse("127.0.0.0/8"), Cidr.parse("::1/128"));

    public DialPolicy {
        allowCidrs = List.copyOf(requireNonNull(allowCidrs, "allowCidrs"));
        denyCidrs = List.copyOf(requireNonNull(denyCidrs, "denyCidrs"));
        allowHosts = List.copyOf(requireNonNull(allowHosts, "allowHosts"));
        denyHosts = List.copyOf(requireNonNull(denyHosts, "denyHosts"));
        allowPorts = List.copyOf(requireNonNull(allowPorts, "allowPorts"));
        denyPorts = List.copyOf(requireNonNull(denyPorts, "denyPorts"));
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

    public boolean allowsAll() {
        return this.equals(ALLOW_ALL);
    }

    /** The error text sent back in DIAL_RSP for a denied dial. */
    public static String deniedMessage(String address) {
        return "dial to " + address + " denied by policy";
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
        Decision portDecision = checkPort(port);
        if (portDecision != null) {
            return portDecision;
        }
        if (host instanceof TargetHost.Literal literal) {
            return judge(null, literal.address());
        }
        String name = ((TargetHost.Name) host).normalized();
        for (HostPattern pattern : denyHosts) {
            if (pattern.matches(name)) {
                return Decision.deny("deny host " + pattern);
            }
        }
        boolean hostAllowed = allowHosts.stream().anyMatch(p -> p.matches(name));
        boolean allowLists = !allowHosts.isEmpty() || !allowCidrs.isEmpty();
        if (!allowLists || hostAllowed) {
            // Allowed by name (or nothing to be allowed by): only deny CIDRs can still refuse it.
            return denyCidrs.isEmpty() ? Decision.ALLOW : Decision.NEEDS_ADDRESS;
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
        if (allowCidrs.isEmpty() && allowHosts.isEmpty()) {
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
