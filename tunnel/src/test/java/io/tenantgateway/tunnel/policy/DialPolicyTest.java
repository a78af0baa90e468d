package io.tenantgateway.tunnel.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tenantgateway.tunnel.policy.DialPolicy.Defaults;
import io.tenantgateway.tunnel.policy.DialPolicy.Verdict;
import io.tenantgateway.tunnel.protocol.IpLiteral;
import java.net.InetAddress;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class DialPolicyTest {
    private static final DialPolicy SERVICES_ONLY = DialPolicy.of(List.of("10.96.0.0/12"), List.of("10.96.0.1/32"),
            List.of("*.svc.cluster.local"), List.of("metadata.google.internal"), List.of("443", "8443-8445"),
            List.of("8444"));

    @Test
    void defaultAllowsEverything() {
        assertThat(DialPolicy.ALLOW_ALL.allowsAll()).isTrue();
        assertThat(DialPolicy.ALLOW_ALL.beforeResolution("anything", 1).verdict()).isEqualTo(Verdict.ALLOW);
        assertThat(DialPolicy.ALLOW_ALL.beforeResolution("10.0.0.1", 22).verdict()).isEqualTo(Verdict.ALLOW);
    }

    @Test
    void literalsAreDecidedAtOnce() {
        assertThat(SERVICES_ONLY.beforeResolution("10.96.0.10", 443).verdict()).isEqualTo(Verdict.ALLOW);
        assertThat(SERVICES_ONLY.beforeResolution("10.96.0.1", 443).rule()).isEqualTo("deny cidr 10.96.0.1/32");
        assertThat(SERVICES_ONLY.beforeResolution("192.168.0.1", 443).rule())
                .isEqualTo("destination not in allow lists");
    }

    @Test
    void portsAreCheckedFirst() {
        assertThat(SERVICES_ONLY.beforeResolution("10.96.0.10", 22).rule()).isEqualTo("port not in allow list");
        assertThat(SERVICES_ONLY.beforeResolution("10.96.0.10", 8444).rule()).isEqualTo("deny port 8444");
        assertThat(SERVICES_ONLY.beforeResolution("10.96.0.10", 8445).verdict()).isEqualTo(Verdict.ALLOW);
    }

    @Test
    void namesAreCheckedBeforeAndAfterResolution() {
        assertThat(SERVICES_ONLY.beforeResolution("metadata.google.internal", 443).rule())
                .isEqualTo("deny host metadata.google.internal");
        // Allowed by name, but a deny CIDR exists: the resolved address decides.
        assertThat(SERVICES_ONLY.beforeResolution("hami.kube-system.svc.cluster.local", 443).verdict())
                .isEqualTo(Verdict.NEEDS_ADDRESS);
        assertThat(SERVICES_ONLY.afterResolution("hami.kube-system.svc.cluster.local",
                List.of(IpLiteral.parseOrNull("10.96.0.1")), 443).verdict()).isEqualTo(Verdict.DENY);
        assertThat(SERVICES_ONLY.afterResolution("hami.kube-system.svc.cluster.local",
                List.of(IpLiteral.parseOrNull("172.16.0.9")), 443).verdict()).isEqualTo(Verdict.ALLOW);
        // Not allowed by name, but resolving into an allowed network is fine.
        assertThat(SERVICES_ONLY.afterResolution("example.com", List.of(IpLiteral.parseOrNull("10.100.0.1")), 443)
                .verdict()).isEqualTo(Verdict.ALLOW);
        assertThat(SERVICES_ONLY.afterResolution("example.com", List.of(IpLiteral.parseOrNull("1.1.1.1")), 443).verdict())
                .isEqualTo(Verdict.DENY);
    }

    @Test
    void hostAllowListWithoutCidrsDeniesOtherNamesUpFront() {
        DialPolicy names = DialPolicy.of(List.of(), List.of(), List.of("*.svc"), List.of(), List.of(), List.of());
        assertThat(names.beforeResolution("a.ns.svc", 443).verdict()).isEqualTo(Verdict.ALLOW);
        assertThat(names.beforeResolution("svc", 443).rule()).isEqualTo("host not in allow list");
    }

    /** Loopback denied, everything else allowed (the issue #16 set-up). */
    private static final DialPolicy NO_LOOPBACK = DialPolicy.of(List.of(), List.of("127.0.0.0/8", "::1/128"),
            List.of(), List.of(), List.of(), List.of());

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource(delimiter = '|', textBlock = """
            127.0.0.1                 | deny cidr 127.0.0.0/8
            127.255.255.254           | deny cidr 127.0.0.0/8
            ::1                       | deny cidr 0:0:0:0:0:0:0:1/128
            [::1]                     | deny cidr 0:0:0:0:0:0:0:1/128
            0:0:0:0:0:0:0:1           | deny cidr 0:0:0:0:0:0:0:1/128
            0000:0000::0001           | deny cidr 0:0:0:0:0:0:0:1/128
            ::ffff:127.0.0.1          | deny cidr 127.0.0.0/8
            ::FFFF:7F00:1             | deny cidr 127.0.0.0/8
            [::ffff:127.0.0.2]        | deny cidr 127.0.0.0/8
            ::127.0.0.1               | deny cidr 127.0.0.0/8 (embedded IPv4)
            64:ff9b::127.0.0.1        | deny cidr 127.0.0.0/8 (embedded IPv4)
            0.0.0.0                   | unspecified address is the local host: deny cidr 127.0.0.0/8
            ::                        | unspecified address is the local host: deny cidr 127.0.0.0/8
            [::]                      | unspecified address is the local host: deny cidr 127.0.0.0/8
            0:0:0:0:0:0:0:0           | unspecified address is the local host: deny cidr 127.0.0.0/8
            ::ffff:0.0.0.0            | unspecified address is the local host: deny cidr 127.0.0.0/8
            ::ffff:0:0                | unspecified address is the local host: deny cidr 127.0.0.0/8
            ::0.0.0.0                 | unspecified address is the local host: deny cidr 127.0.0.0/8
            127.1                     | malformed host
            2130706433                | malformed host
            0x7f.0.0.1                | malformed host
            0x7f000001                | malformed host
            127.000.000.001           | malformed host
            0127.0.0.1                | malformed host
            127.0.0.1.                | malformed host
            017700000001              | malformed host
            256.0.0.1                 | malformed host
            [127.0.0.1]               | malformed host
            127.0.0.1%lo              | malformed host
            ::ffff:127.000.0.1        | malformed host
            ::1%                      | malformed host
            1::2::3                   | malformed host
            00001::1                  | malformed host
            :::1                      | malformed host
            ::1]                      | malformed host
            local host                | malformed host
            -localhost                | malformed host
            10.0.0.1                  | ALLOW
            ::2                       | ALLOW
            fe80::1%eth0              | ALLOW
            ::ffff:10.0.0.1           | ALLOW
            0.0.0.1                   | ALLOW
            """)
    void everySpellingIsJudgedAsTheAddressItConnectsTo(String host, String expected) {
        DialPolicy.Decision decision = NO_LOOPBACK.beforeResolution(host, 80);
        assertThat(decision.verdict() == Verdict.ALLOW ? "ALLOW" : decision.rule()).as(host).isEqualTo(expected);
    }

    @Test
    void denyOnlyPoliciesAllowNamesWhoseAddressesAreAllAllowed() {
        DialPolicy denyOne = DialPolicy.of(List.of(), List.of("127.0.0.2/32"), List.of(), List.of(), List.of(),
                List.of());
        for (String name : List.of("localhost", "LOCALHOST", "localhost.", "node-1")) {
            assertThat(denyOne.beforeResolution(name, 10250).verdict()).as(name).isEqualTo(Verdict.NEEDS_ADDRESS);
        }
        assertThat(denyOne.afterResolution("localhost", List.of(IpLiteral.parseOrNull("127.0.0.1"),
                IpLiteral.parseOrNull("::1")), 10250).verdict()).isEqualTo(Verdict.ALLOW);
        DialPolicy.Decision mixed = denyOne.afterResolution("rebind.example", List.of(
                IpLiteral.parseOrNull("10.0.0.1"), IpLiteral.parseOrNull("::ffff:127.0.0.2")), 443);
        assertThat(mixed.rule()).isEqualTo("deny cidr 127.0.0.2/32");
        assertThat(mixed.judged().getHostAddress()).isEqualTo("127.0.0.2");
        assertThat(NO_LOOPBACK.afterResolution("zero.example", List.of(IpLiteral.parseOrNull("::")), 80).rule())
                .isEqualTo("unspecified address is the local host: deny cidr 127.0.0.0/8");
        // Deny-only, without loopback rules: the unspecified address is as allowed as loopback itself.
        assertThat(denyOne.beforeResolution("0.0.0.0", 80).rule())
                .isEqualTo("unspecified address is the local host: deny cidr 127.0.0.2/32");
        DialPolicy denyRemote = DialPolicy.of(List.of(), List.of("10.0.0.0/8"), List.of(), List.of(), List.of(),
                List.of());
        assertThat(denyRemote.beforeResolution("::", 80).verdict()).isEqualTo(Verdict.ALLOW);
    }

    @Test
    void allowListsNeedAnExplicitEntryForTheUnspecifiedAddress() {
        DialPolicy loopbackOnly = DialPolicy.of(List.of("127.0.0.0/8", "::1/128"), List.of(), List.of(), List.of(),
                List.of(), List.of());
        assertThat(loopbackOnly.beforeResolution("127.0.0.9", 80).verdict()).isEqualTo(Verdict.ALLOW);
        assertThat(loopbackOnly.beforeResolution("::ffff:127.0.0.9", 80).verdict()).isEqualTo(Verdict.ALLOW);
        assertThat(loopbackOnly.beforeResolution("0.0.0.0", 80).rule())
                .isEqualTo("unspecified address is the local host: destination not in allow lists");
        assertThat(loopbackOnly.beforeResolution("10.0.0.1", 80).rule()).isEqualTo("destination not in allow lists");
        DialPolicy everything = DialPolicy.of(List.of("0.0.0.0/0", "::/0"), List.of(), List.of(), List.of(),
                List.of(), List.of());
        assertThat(everything.beforeResolution("::", 80).verdict()).isEqualTo(Verdict.ALLOW);
        // Mapped CIDRs are IPv4 CIDRs.
        assertThat(DialPolicy.of(List.of("::ffff:10.0.0.0/104"), List.of(), List.of(), List.of(), List.of(),
                List.of()).beforeResolution("10.1.2.3", 80).verdict()).isEqualTo(Verdict.ALLOW);
    }

    @Test
    void hostPatternsIgnoreCaseAndATrailingDot() {
        DialPolicy names = DialPolicy.of(List.of(), List.of(), List.of("*.SVC."), List.of("Metadata.Internal"),
                List.of(), List.of());
        assertThat(names.beforeResolution("A.NS.svc.", 443).verdict()).isEqualTo(Verdict.ALLOW);
        assertThat(names.beforeResolution("metadata.internal.", 443).rule()).isEqualTo("deny host metadata.internal");
        assertThat(names.beforeResolution("METADATA.INTERNAL", 443).rule()).isEqualTo("deny host metadata.internal");
        assertThat(names.beforeResolution("svc.", 443).rule()).isEqualTo("host not in allow list");
    }

    @Test
    void denialMessageAndBadInput() {
        assertThat(DialPolicy.deniedMessage("10.0.0.1:22", "deny port 22"))
                .isEqualTo("dial to 10.0.0.1:22 denied by policy (deny port 22)");
        assertThatThrownBy(() -> PortRange.parse("70000"))
                .hasMessage("port range: 70000-70000 (expected: 1 <= first <= last <= 65535)");
        assertThatThrownBy(() -> PortRange.parse("http"))
                .hasMessage("port range: \"http\" (expected: a port such as 443 or a range such as 30000-32767)");
        assertThatThrownBy(() -> new HostPattern("a*.b"))
                .hasMessage("host pattern: \"a*.b\" (expected: a host name, optionally starting with *.)");
    }

    // The agent's default (Defaults.agent): admin port 8094, one interface address 10.0.0.5 (the pod/node IP).

    private static final int ADMIN = 8094;
    private static final Defaults AGENT_DEFAULTS = Defaults.agent(ADMIN).withHostAddresses(List.of(ip("10.0.0.5")));

    private static DialPolicy agent(String... allow) {
        return agent(List.of(allow), List.of());
    }

    /** {@code --dial-allow}/{@code --dial-deny} as the agent splits them: CIDRs, host names, port:N. */
    private static DialPolicy agent(List<String> allow, List<String> deny) {
        return DialPolicy.of(cidrs(allow), cidrs(deny), hosts(allow), hosts(deny), ports(allow), ports(deny))
                .withDefaults(AGENT_DEFAULTS);
    }

    private static List<String> cidrs(List<String> rules) {
        return rules.stream().filter(r -> !r.startsWith("port:") && (r.contains("/") || r.contains(":")
                || r.matches("[0-9.]+"))).map(r -> r.contains("/") ? r : r + (r.contains(":") ? "/128" : "/32"))
                .toList();
    }

    private static List<String> hosts(List<String> rules) {
        return rules.stream().filter(r -> !r.startsWith("port:") && !r.contains("/") && !r.contains(":")
                && !r.matches("[0-9.]+")).toList();
    }

    private static List<String> ports(List<String> rules) {
        return rules.stream().filter(r -> r.startsWith("port:")).map(r -> r.substring(5)).toList();
    }

    private static InetAddress ip(String text) {
        return IpLiteral.parseOrNull(text);
    }

    private static String outcome(DialPolicy policy, String host, int port) {
        DialPolicy.Decision decision = policy.beforeResolution(host, port);
        return decision.verdict() == Verdict.DENY ? decision.rule() : decision.verdict().name();
    }

    private static String resolved(DialPolicy policy, String name, int port, String... addresses) {
        DialPolicy.Decision decision = policy.afterResolution(name,
                Arrays.stream(addresses).map(DialPolicyTest::ip).toList(), port);
        return decision.verdict() == Verdict.DENY ? decision.rule() : decision.verdict().name();
    }

    @ParameterizedTest(name = "{0}:{1} -> {2}")
    @CsvSource(delimiter = '|', textBlock = """
            127.0.0.1                 | 8094 | agent admin port
            127.0.0.9                 | 8094 | agent admin port
            0.0.0.0                   | 8094 | agent admin port
            ::                        | 8094 | agent admin port
            ::1                       | 8094 | agent admin port
            [::ffff:127.0.0.1]        | 8094 | agent admin port
            ::127.0.0.1               | 8094 | agent admin port
            localhost                 | 8094 | agent admin port
            LOCALHOST.                | 8094 | agent admin port
            10.0.0.5                  | 8094 | agent admin port
            127.0.0.1                 | 8093 | default: loopback
            127.255.255.254           | 80   | default: loopback
            ::1                       | 80   | default: loopback
            [::1]                     | 80   | default: loopback
            ::ffff:127.0.0.1          | 80   | default: loopback
            ::127.0.0.1               | 80   | default: loopback
            64:ff9b::7f00:1           | 80   | default: loopback
            0.0.0.0                   | 80   | default: loopback
            ::                        | 80   | default: loopback
            ::ffff:0.0.0.0            | 80   | default: loopback
            localhost                 | 80   | default: loopback
            Localhost.                | 80   | default: loopback
            api.localhost             | 80   | default: loopback
            169.254.169.254           | 80   | default: link-local
            169.254.0.1               | 443  | default: link-local
            ::ffff:169.254.169.254    | 80   | default: link-local
            64:ff9b::169.254.169.254  | 80   | default: link-local
            fe80::1                   | 80   | default: link-local
            FE80::a:b                 | 80   | default: link-local
            fe80::1%eth0              | 80   | default: link-local
            febf:ffff::1              | 80   | default: link-local
            127.1                     | 80   | malformed host
            10.0.0.5                  | 9443 | ALLOW
            10.0.0.5                  | 8093 | ALLOW
            10.0.0.6                  | 8094 | ALLOW
            10.96.0.10                | 443  | ALLOW
            192.168.1.1               | 80   | ALLOW
            169.253.255.255           | 80   | ALLOW
            fec0::1                   | 80   | ALLOW
            fd00::1                   | 8094 | ALLOW
            hami.kube-system.svc      | 443  | NEEDS_ADDRESS
            node-1                    | 8094 | NEEDS_ADDRESS
            """)
    void agentDefaultDeniesItsAdminPortLoopbackAndLinkLocal(String host, int port, String expected) {
        assertThat(outcome(agent(), host, port)).as(host + ":" + port).isEqualTo(expected);
    }

    @Test
    void agentDefaultJudgesNamesByTheirAddresses() {
        DialPolicy policy = agent();
        assertThat(resolved(policy, "metadata.google.internal", 80, "169.254.169.254"))
                .isEqualTo("default: link-local");
        assertThat(resolved(policy, "node-1", ADMIN, "10.0.0.5")).isEqualTo("agent admin port");
        assertThat(resolved(policy, "node-1", 9443, "10.0.0.5")).isEqualTo("ALLOW");
        assertThat(resolved(policy, "rebind.example", 80, "10.0.0.1", "127.0.0.1")).isEqualTo("default: loopback");
        assertThat(resolved(policy, "v6.example", 80, "2001:db8::1", "fe80::1")).isEqualTo("default: link-local");
        assertThat(resolved(policy, "hami.kube-system.svc", 443, "10.96.0.10")).isEqualTo("ALLOW");
        // A name allowed by a pattern does not lift the defaults: an ExternalName Service can point anywhere.
        DialPolicy services = agent("*.svc.cluster.local");
        assertThat(resolved(services, "evil.ns.svc.cluster.local", 80, "169.254.169.254"))
                .isEqualTo("default: link-local");
        assertThat(resolved(services, "hami.kube-system.svc.cluster.local", 443, "10.96.0.10")).isEqualTo("ALLOW");
        assertThat(outcome(services, "example.com", 443)).isEqualTo("host not in allow list");
    }

    @Test
    void namingLoopbackOpensLoopbackOnlyAndNeverTheAdminPort() {
        DialPolicy loopback = agent("127.0.0.0/8");
        assertThat(loopback.allowListed()).as("no allow list: everything else stays as the default has it").isFalse();
        assertThat(outcome(loopback, "127.0.0.1", 8080)).isEqualTo("ALLOW");
        assertThat(outcome(loopback, "127.0.0.2", 8093)).isEqualTo("ALLOW");
        assertThat(outcome(loopback, "::ffff:127.0.0.1", 8080)).isEqualTo("ALLOW");
        assertThat(outcome(loopback, "127.0.0.1", ADMIN)).isEqualTo("agent admin port");
        assertThat(outcome(loopback, "localhost", ADMIN)).isEqualTo("agent admin port");
        assertThat(outcome(loopback, "0.0.0.0", ADMIN)).isEqualTo("agent admin port");
        assertThat(outcome(loopback, "10.0.0.5", ADMIN)).isEqualTo("agent admin port");
        assertThat(outcome(loopback, "10.96.0.10", 443)).isEqualTo("ALLOW");
        assertThat(outcome(loopback, "::1", 8080)).as("IPv6 loopback is not in 127.0.0.0/8")
                .isEqualTo("default: loopback");
        assertThat(outcome(loopback, "0.0.0.0", 8080)).as("the unspecified address needs its own entry")
                .isEqualTo("default: loopback");
        assertThat(outcome(loopback, "169.254.169.254", 80)).isEqualTo("default: link-local");
        // localhost: judged by its addresses once an allow entry opens part of loopback.
        assertThat(outcome(loopback, "localhost", 8080)).isEqualTo("NEEDS_ADDRESS");
        assertThat(resolved(loopback, "localhost", 8080, "127.0.0.1")).isEqualTo("ALLOW");
        assertThat(resolved(loopback, "localhost", 8080, "127.0.0.1", "::1")).isEqualTo("default: loopback");
        assertThat(resolved(loopback, "localhost", ADMIN, "127.0.0.1")).isEqualTo("agent admin port");
        DialPolicy both = agent("127.0.0.0/8", "::1");
        assertThat(resolved(both, "localhost", 8080, "127.0.0.1", "::1")).isEqualTo("ALLOW");
        assertThat(outcome(both, "[::1]", ADMIN)).isEqualTo("agent admin port");
        DialPolicy name = agent("localhost");
        assertThat(name.allowListed()).isFalse();
        assertThat(resolved(name, "localhost", 8080, "127.0.0.1", "::1")).isEqualTo("ALLOW");
        assertThat(outcome(name, "127.0.0.1", 8080)).as("the name, not the addresses").isEqualTo("default: loopback");
        assertThat(outcome(name, "localhost", ADMIN)).isEqualTo("agent admin port");
    }

    @Test
    void liftingEntriesJoinAnAllowListWhenThereIsOne() {
        DialPolicy services = agent("10.96.0.0/12", "127.0.0.1");
        assertThat(services.allowListed()).isTrue();
        assertThat(outcome(services, "10.96.0.10", 443)).isEqualTo("ALLOW");
        assertThat(outcome(services, "127.0.0.1", 8080)).isEqualTo("ALLOW");
        assertThat(outcome(services, "127.0.0.2", 8080)).isEqualTo("default: loopback");
        assertThat(outcome(services, "192.168.0.1", 443)).isEqualTo("destination not in allow lists");
        assertThat(outcome(services, "127.0.0.1", ADMIN)).isEqualTo("agent admin port");
        // Deny still wins over a lifting entry.
        assertThat(outcome(agent(List.of("127.0.0.0/8"), List.of("127.0.0.2")), "127.0.0.2", 80))
                .isEqualTo("deny cidr 127.0.0.2/32");
        // The lab's rule: its webhook Service on loopback, one port.
        DialPolicy lab = agent("127.0.0.1", "port:30443");
        assertThat(outcome(lab, "127.0.0.1", 30443)).isEqualTo("ALLOW");
        assertThat(outcome(lab, "127.0.0.1", 30444)).isEqualTo("port not in allow list");
        assertThat(outcome(lab, "127.0.0.1", ADMIN)).isEqualTo("agent admin port");
    }

    @Test
    void linkLocalOpensOnlyWhereNamed() {
        DialPolicy metadata = agent("169.254.169.254");
        assertThat(metadata.allowListed()).isFalse();
        assertThat(outcome(metadata, "169.254.169.254", 80)).isEqualTo("ALLOW");
        assertThat(outcome(metadata, "169.254.0.1", 80)).isEqualTo("default: link-local");
        assertThat(outcome(metadata, "fe80::1", 80)).isEqualTo("default: link-local");
        assertThat(outcome(metadata, "127.0.0.1", 80)).isEqualTo("default: loopback");
        assertThat(outcome(agent("fe80::/10"), "fe80::1%eth0", 80)).isEqualTo("ALLOW");
    }

    @Test
    void upstreamBehaviourIsOneFlagAwayExceptTheAdminPort() {
        DialPolicy upstream = agent("0.0.0.0/0", "::/0");
        for (String host : List.of("127.0.0.1", "::1", "0.0.0.0", "::", "169.254.169.254", "fe80::1", "10.0.0.5",
                "192.168.1.1", "2001:db8::1")) {
            assertThat(outcome(upstream, host, 80)).as(host).isEqualTo("ALLOW");
        }
        assertThat(resolved(upstream, "localhost", 80, "127.0.0.1", "::1")).isEqualTo("ALLOW");
        for (String host : List.of("127.0.0.1", "::1", "0.0.0.0", "localhost", "10.0.0.5")) {
            assertThat(outcome(upstream, host, ADMIN)).as(host).isEqualTo("agent admin port");
        }
    }

    @Test
    void theLibraryDefaultHasNoDefaults() {
        assertThat(DialPolicy.ALLOW_ALL.defaults()).isEqualTo(Defaults.NONE);
        assertThat(outcome(DialPolicy.ALLOW_ALL, "169.254.169.254", 80)).isEqualTo("ALLOW");
        assertThat(outcome(DialPolicy.ALLOW_ALL, "127.0.0.1", ADMIN)).isEqualTo("ALLOW");
        assertThat(outcome(DialPolicy.ALLOW_ALL, "localhost", 80)).isEqualTo("ALLOW");
        // Without defaults, a loopback allow entry is an allow list, as before.
        DialPolicy loopbackOnly = DialPolicy.of(List.of("127.0.0.0/8"), List.of(), List.of(), List.of(), List.of(),
                List.of());
        assertThat(loopbackOnly.allowListed()).isTrue();
        assertThat(outcome(loopbackOnly, "10.0.0.1", 80)).isEqualTo("destination not in allow lists");
        // Admin port unknown yet (--admin-server-port=0 before the bind): loopback is still denied.
        DialPolicy unbound = DialPolicy.of(List.of(), List.of(), List.of(), List.of(), List.of(), List.of())
                .withDefaults(Defaults.agent(0));
        assertThat(outcome(unbound, "127.0.0.1", ADMIN)).isEqualTo("default: loopback");
        assertThat(outcome(unbound.withDefaults(unbound.defaults().withAdminPort(ADMIN)), "127.0.0.1", ADMIN))
                .isEqualTo("agent admin port");
        assertThatThrownBy(() -> Defaults.agent(70000)).hasMessage("admin port: 70000 (expected: 0..65535)");
    }

    @Test
    void describeSaysWhatTheDefaultsAndEntriesDo() {
        assertThat(DialPolicy.ALLOW_ALL.describe()).isEqualTo("allow-all");
        assertThat(agent().describe()).isEqualTo("denied: agent admin port 8094 on this host (loopback, unspecified,"
                + " localhost, 10.0.0.5); default: loopback (127.0.0.0/8, ::1, localhost, 0.0.0.0, ::) and link-local"
                + " (169.254.0.0/16, fe80::/10) denied unless allowed; no allow list");
        assertThat(agent("127.0.0.0/8").describe()).endsWith("unless allowed; no allow list, opened: [127.0.0.0/8]");
        assertThat(agent(List.of("10.96.0.0/12", "*.svc", "port:443"), List.of("10.96.0.1")).describe())
                .endsWith("unless allowed; allow list: [10.96.0.0/12, *.svc]; deny: [10.96.0.1/32]; allow ports:"
                        + " [443]");
    }
}
