package io.tenantgateway.tunnel.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class AddressesTest {
    @Test
    void parsesLiteralsWithoutDns() {
        assertThat(IpLiteral.parseOrNull("10.0.0.1").getHostAddress()).isEqualTo("10.0.0.1");
        assertThat(IpLiteral.parseOrNull("[::1]").getHostAddress()).isEqualTo("0:0:0:0:0:0:0:1");
        assertThat(IpLiteral.parseOrNull("fd00::5")).isNotNull();
        assertThat(IpLiteral.parseOrNull("256.0.0.1")).isNull();
        assertThat(IpLiteral.parseOrNull("01.2.3.4")).isNull();
        assertThat(IpLiteral.parseOrNull("kubernetes.default.svc")).isNull();
        assertThat(IpLiteral.parseOrNull("zz::1")).isNull();
        assertThat(IpLiteral.isIpv4("1.2.3.4")).isTrue();
        assertThat(IpLiteral.isIpv6("1.2.3.4")).isFalse();
    }

    @Test
    void cidrsContainTheirAddresses() {
        Cidr services = Cidr.parse("10.96.0.0/12");
        assertThat(services.contains(IpLiteral.parseOrNull("10.96.0.1"))).isTrue();
        assertThat(services.contains(IpLiteral.parseOrNull("10.111.255.255"))).isTrue();
        assertThat(services.contains(IpLiteral.parseOrNull("10.112.0.0"))).isFalse();
        assertThat(services.contains(IpLiteral.parseOrNull("fd00::1"))).isFalse();
        assertThat(Cidr.parse("fd00::/8").contains(IpLiteral.parseOrNull("fd12::1"))).isTrue();
        assertThat(Cidr.parse("192.168.1.7").toString()).isEqualTo("192.168.1.7/32");
        assertThat(Cidr.parse("0.0.0.0/0").contains(IpLiteral.parseOrNull("8.8.8.8"))).isTrue();
        assertThatThrownBy(() -> Cidr.parse("10.0.0.0/33"))
                .hasMessage("CIDR: \"10.0.0.0/33\" (expected: a prefix length 0..32)");
        assertThatThrownBy(() -> Cidr.parse("example.com/8"))
                .hasMessageStartingWith("CIDR: \"example.com/8\" (expected: an IP network");
    }

    @Test
    void agentIdentifiersParseValidateAndEncodeLikeGo() {
        AgentIdentifiers ids = AgentIdentifiers.parse("ipv4=10.0.0.5&host=node-1&default-route=true&cidr=10.0.0.0/24");
        assertThat(ids.hosts()).containsExactly("node-1");
        assertThat(ids.defaultRoute()).isTrue();
        assertThat(ids.encode()).isEqualTo("cidr=10.0.0.0%2F24&default-route=true&host=node-1&ipv4=10.0.0.5");
        assertThat(AgentIdentifiers.parse(ids.encode())).isEqualTo(ids);
        assertThat(ids.matchesHost("10.0.0.5")).isTrue();
        assertThat(ids.matchesHost("NODE-1")).isTrue();
        assertThat(ids.matchesHost("10.0.0.6")).isFalse();
        assertThat(AgentIdentifiers.parse("")).isEqualTo(AgentIdentifiers.NONE);
        assertThatThrownBy(() -> AgentIdentifiers.parse("host=a&zone=b"))
                .hasMessage("--agent-identifiers: unknown key \"zone\" in \"host=a&zone=b\" (expected: one of host,"
                        + " ipv4, ipv6, cidr, default-route)");
        assertThatThrownBy(() -> AgentIdentifiers.parse("ipv4=fd00::1"))
                .hasMessage("--agent-identifiers: ipv4=fd00::1 (expected: an IPv4 address)");
        assertThatThrownBy(() -> AgentIdentifiers.parse("default-route=yes"))
                .hasMessage("--agent-identifiers: default-route=yes (expected: true or false)");
    }
}
