package io.tenantgateway.tunnel.policy;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.tunnel.protocol.Cidr;
import io.tenantgateway.tunnel.protocol.IpLiteral;
import java.net.InetAddress;
import java.util.List;

/**
 * Which destinations the agent may dial on behalf of the control plane.
 *
 * <p>Rules: a deny entry (CIDR, host pattern or port) always wins. When any allow list for destinations
 * ({@code allowCidrs}, {@code allowHosts}) is non-empty, the destination must match one of its entries; when
 * {@code allowPorts} is non-empty the port must be in it. CIDRs are checked against the address actually dialled,
 * after DNS resolution, so a name cannot smuggle a denied address past the policy. The default allows everything,
 * like upstream.
 *
 * <p>Decisions are made in two steps: {@link #beforeResolution} on the requested host, then (when it answers
 * {@link Verdict#NEEDS_ADDRESS}) {@link #afterResolution} on the resolved address.
 */
public record DialPolicy(List<Cidr> allowCidrs, List<Cidr> denyCidrs, List<HostPattern> allowHosts,
        List<HostPattern> denyHosts, List<PortRange> allowPorts, List<PortRange> denyPorts) {

    public static final DialPolicy ALLOW_ALL = new DialPolicy(List.of(), List.of(), List.of(), List.of(), List.of(),
            List.of());

    public DialPolicy {
        allowCidrs = List.copyOf(requireNonNull(allowCidrs, "allowCidrs"));
        denyCidrs = List.copyOf(requireNonNull(denyCidrs, "denyCidrs"));
        allowHosts = List.copyOf(requireNonNull(allowHosts, "allowHosts"));
        denyHosts = List.copyOf(requireNonNull(denyHosts, "denyHosts"));
        allowPorts = List.copyOf(requireNonNull(allowPorts, "allowPorts"));
        denyPorts = List.copyOf(requireNonNull(denyPorts, "denyPorts"));
    }

    public enum Verdict { ALLOW, DENY, NEEDS_ADDRESS }

    /** A decision and, for denials, which rule decided (for logs; the peer only sees the generic message). */
    public record Decision(Verdict verdict, String rule) {
        static final Decision ALLOW = new Decision(Verdict.ALLOW, "");
        static final Decision NEEDS_ADDRESS = new Decision(Verdict.NEEDS_ADDRESS, "");

        static Decision deny(String rule) {
            return new Decision(Verdict.DENY, rule);
        }
    }

    public boolean allowsAll() {
        return this.equals(ALLOW_ALL);
    }

    /** The error text sent back in DIAL_RSP for a denied dial. */
    public static String deniedMessage(String address) {
        return "dial to " + address + " denied by policy";
    }

    /** Decides on the requested host (name or literal) and port, before any DNS lookup. */
    public Decision beforeResolution(String host, int port) {
        Decision portDecision = checkPort(port);
        if (portDecision != null) {
            return portDecision;
        }
        InetAddress literal = IpLiteral.parseOrNull(host);
        if (literal != null) {
            return afterResolution(host, literal, port);
        }
        for (HostPattern pattern : denyHosts) {
            if (pattern.matches(host)) {
                return Decision.deny("deny host " + pattern);
            }
        }
        boolean hostAllowed = allowHosts.stream().anyMatch(p -> p.matches(host));
        if (denyCidrs.isEmpty() && (hostAllowed || (allowHosts.isEmpty() && allowCidrs.isEmpty()))) {
            return Decision.ALLOW;
        }
        if (!hostAllowed && allowCidrs.isEmpty()) {
            return Decision.deny("host not in allow list");
        }
        return Decision.NEEDS_ADDRESS;
    }

    /** Decides on the address that will be dialled ({@code host} is the requested name or literal). */
    public Decision afterResolution(String host, InetAddress address, int port) {
        Decision portDecision = checkPort(port);
        if (portDecision != null) {
            return portDecision;
        }
        for (Cidr cidr : denyCidrs) {
            if (cidr.contains(address)) {
                return Decision.deny("deny cidr " + cidr);
            }
        }
        boolean isLiteral = IpLiteral.parseOrNull(host) != null;
        for (HostPattern pattern : denyHosts) {
            if (!isLiteral && pattern.matches(host)) {
                return Decision.deny("deny host " + pattern);
            }
        }
        if (allowCidrs.isEmpty() && allowHosts.isEmpty()) {
            return Decision.ALLOW;
        }
        if (allowCidrs.stream().anyMatch(c -> c.contains(address))) {
            return Decision.ALLOW;
        }
        if (!isLiteral && allowHosts.stream().anyMatch(p -> p.matches(host))) {
            return Decision.ALLOW;
        }
        return Decision.deny("destination not in allow lists");
    }

    private Decision checkPort(int port) {
        for (PortRange range : denyPorts) {
            if (range.contains(port)) {
                return Decision.deny("deny port " + range);
            }
        }
        if (!allowPorts.isEmpty() && allowPorts.stream().noneMatch(r -> r.contains(port))) {
            return Decision.deny("port not in allow list");
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
