package io.tenantgateway.tunnel.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tenantgateway.tunnel.policy.DialPolicy.Verdict;
import io.tenantgateway.tunnel.protocol.IpLiteral;
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
        assertThat(DialPolicy.deniedMessage("10.0.0.1:22")).isEqualTo("dial to 10.0.0.1:22 denied by policy");
        assertThatThrownBy(() -> PortRange.parse("70000"))
                .hasMessage("port range: 70000-70000 (expected: 1 <= first <= last <= 65535)");
        assertThatThrownBy(() -> PortRange.parse("http"))
                .hasMessage("port range: \"http\" (expected: a port such as 443 or a range such as 30000-32767)");
        assertThatThrownBy(() -> new HostPattern("a*.b"))
                .hasMessage("host pattern: \"a*.b\" (expected: a host name, optionally starting with *.)");
    }
}
