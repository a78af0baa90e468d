package io.tenantgateway.tunnel.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.util.NetUtil;
import java.net.Inet4Address;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The strict parser, with Netty's NetUtil as the oracle for what each accepted literal means. */
class IpLiteralTest {
    private static final List<String> STRICT = List.of("0.0.0.0", "127.0.0.1", "255.255.255.255", "10.96.0.1", "::",
            "::1", "0:0:0:0:0:0:0:1", "0000:0000:0000:0000:0000:0000:0000:0001", "FE80::1", "fe80::AbCd",
            "2001:db8::1:2", "1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7::", "::2:3:4:5:6:7:8", "1::8",
            "::ffff:127.0.0.1", "::FFFF:7f00:1", "::ffff:0.0.0.0", "[::1]", "[fe80::1]");

    /** NetUtil accepts these; the strict parser does not. */
    private static final List<String> NETUTIL_LAXER = List.of("127.000.000.001", "010.0.0.1", "::ffff:127.000.0.1",
            "::1%");

    /** Neither accepts these. */
    private static final List<String> BOTH_REJECT = List.of("127.1", "2130706433", "0x7f.0.0.1", "0127.0.0.1",
            "127.0.0.1.", "256.1.1.1", "1.2.3", "1.2.3.4.5", " 1.2.3.4", "[127.0.0.1]", "1::2::3", "00001::1", ":::1",
            "1:2:3:4:5:6:7:8:9", "1:2:3:4:5:6:7", "g::1", "::1.2.3", "localhost", "");

    @Test
    void everyStrictLiteralMeansTheSameBytesToNetUtil() {
        for (String text : STRICT) {
            var address = IpLiteral.parseOrNull(text);
            assertThat(address).as(text).isNotNull();
            byte[] netty = NetUtil.createByteArrayFromIpAddressString(text);
            assertThat(netty).as(text).isNotNull();
            byte[] ours = address.getAddress();
            if (ours.length == 4 && netty.length == 16) {
                // Mapped: NetUtil keeps 16 bytes, we judge it as IPv4.
                assertThat(IpLiteral.canonical(NetUtil.getByName(text)).getAddress()).as(text).isEqualTo(ours);
            } else {
                assertThat(ours).as(text).isEqualTo(netty);
            }
        }
        assertThat(IpLiteral.parseOrNull("::ffff:127.0.0.1")).isInstanceOf(Inet4Address.class);
    }

    @Test
    void netUtilIsLaxerThanPolicyNeeds() {
        for (String text : NETUTIL_LAXER) {
            assertThat(NetUtil.createByteArrayFromIpAddressString(text)).as("NetUtil " + text).isNotNull();
            assertThat(TargetHost.parse(text)).as(text).isInstanceOf(TargetHost.Malformed.class);
        }
        // NetUtil turns IPv4-compatible ::a.b.c.d into mapped ::ffff:a.b.c.d, which the kernel does not; we keep
        // the bytes and let the policy judge the embedded IPv4 address as well.
        assertThat(NetUtil.createByteArrayFromIpAddressString("::127.0.0.1")[10]).isEqualTo((byte) 0xff);
        assertThat(IpLiteral.parseOrNull("::127.0.0.1").getAddress()[10]).isZero();
        assertThat(IpLiteral.embeddedIpv4(IpLiteral.parseOrNull("::127.0.0.1")).getHostAddress())
                .isEqualTo("127.0.0.1");
        // RFC 4291 allows a dotted tail after any six groups; NetUtil only after "::" or "::ffff:".
        assertThat(NetUtil.createByteArrayFromIpAddressString("1:2:3:4:5:6:1.2.3.4")).isNull();
        assertThat(IpLiteral.parseOrNull("1:2:3:4:5:6:1.2.3.4").getHostAddress()).isEqualTo("1:2:3:4:5:6:102:304");
        assertThat(NetUtil.createByteArrayFromIpAddressString("64:ff9b::10.0.0.1")).isNull();
        assertThat(IpLiteral.parseOrNull("64:ff9b::10.0.0.1")).isEqualTo(IpLiteral.parseOrNull("64:ff9b::a00:1"));
        for (String text : BOTH_REJECT) {
            assertThat(IpLiteral.parseOrNull(text)).as(text).isNull();
            assertThat(NetUtil.createByteArrayFromIpAddressString(text)).as("NetUtil " + text).isNull();
        }
    }

    @Test
    void hostsAreClassifiedOnce() {
        assertThat(TargetHost.parse("fe80::1%eth0")).isEqualTo(new TargetHost.Literal("fe80::1%eth0",
                IpLiteral.parseOrNull("fe80::1"), "eth0"));
        assertThat(TargetHost.parse("[::1]")).isInstanceOf(TargetHost.Literal.class);
        assertThat(((TargetHost.Name) TargetHost.parse("LocalHost.")).normalized()).isEqualTo("localhost");
        assertThat(TargetHost.parse("1.2.3.4.nip.io")).isInstanceOf(TargetHost.Name.class);
        assertThat(TargetHost.parse("_sip._tcp.example.com")).isInstanceOf(TargetHost.Name.class);
        for (String malformed : List.of("127.1", "0x7f.1", "a..b", "a b", "*.svc", "a/b", "%eth0", "[localhost]")) {
            assertThat(TargetHost.parse(malformed)).as(malformed).isInstanceOf(TargetHost.Malformed.class);
        }
        assertThat(IpLiteral.isUnspecified(IpLiteral.parseOrNull("::ffff:0.0.0.0"))).isTrue();
        assertThat(IpLiteral.embeddedIpv4(IpLiteral.parseOrNull("::1"))).isNull();
        assertThat(IpLiteral.embeddedIpv4(IpLiteral.parseOrNull("::"))).isNull();
    }

    @Test
    void zoneIndicesThatDoNotFitAnIntAreMalformedNotExceptions() {
        assertThat(TargetHost.parse("fe80::1%2")).isEqualTo(new TargetHost.Literal("fe80::1%2",
                IpLiteral.parseOrNull("fe80::1"), "2"));
        assertThat(TargetHost.zoneIndex("2147483647")).isEqualTo(Integer.MAX_VALUE);
        assertThat(TargetHost.zoneIndex("0002")).isEqualTo(2);
        assertThat(TargetHost.zoneIndex("eth0")).isEqualTo(-1);
        for (String host : List.of("[fe80::1%99999999999]", "fe80::1%2147483648", "fe80::1%99999999999999999999999")) {
            assertThat(TargetHost.parse(host)).as(host).isInstanceOfSatisfying(TargetHost.Malformed.class,
                    m -> assertThat(m.problem()).contains("(expected: an interface name or an index 0..2147483647)"));
        }
    }
}
