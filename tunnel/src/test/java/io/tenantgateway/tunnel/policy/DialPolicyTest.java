package io.tenantgateway.tunnel.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tenantgateway.tunnel.policy.DialPolicy.Verdict;
import io.tenantgateway.tunnel.protocol.IpLiteral;
import java.util.List;
import org.junit.jupiter.api.Test;

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
                IpLiteral.parseOrNull("10.96.0.1"), 443).verdict()).isEqualTo(Verdict.DENY);
        assertThat(SERVICES_ONLY.afterResolution("hami.kube-system.svc.cluster.local",
                IpLiteral.parseOrNull("172.16.0.9"), 443).verdict()).isEqualTo(Verdict.ALLOW);
        // Not allowed by name, but resolving into an allowed network is fine.
        assertThat(SERVICES_ONLY.afterResolution("example.com", IpLiteral.parseOrNull("10.100.0.1"), 443)
                .verdict()).isEqualTo(Verdict.ALLOW);
        assertThat(SERVICES_ONLY.afterResolution("example.com", IpLiteral.parseOrNull("1.1.1.1"), 443).verdict())
                .isEqualTo(Verdict.DENY);
    }

    @Test
    void hostAllowListWithoutCidrsDeniesOtherNamesUpFront() {
        DialPolicy names = DialPolicy.of(List.of(), List.of(), List.of("*.svc"), List.of(), List.of(), List.of());
        assertThat(names.beforeResolution("a.ns.svc", 443).verdict()).isEqualTo(Verdict.ALLOW);
        assertThat(names.beforeResolution("svc", 443).rule()).isEqualTo("host not in allow list");
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
