package io.tenantgateway.common.net;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tenantgateway.common.config.ConfigException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class HostPortTest {
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "127.0.0.1:9443      | 127.0.0.1       | 9443",
        "webhook.local:0     | webhook.local   | 0",
        "[::]:9443           | ::              | 9443",
        "[fd00::1]:65535     | fd00::1         | 65535",
        ":9443               | 0.0.0.0         | 9443",
        "9443                | 0.0.0.0         | 9443",
        "' 0.0.0.0:8443 '    | 0.0.0.0         | 8443"})
    void readsEveryForm(String text, String host, int port) {
        assertThat(HostPort.parse("--listen", text)).isEqualTo(new HostPort(host, port));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "nine", "host:", "host:port", "fd00::1:9443", "[]:80", "[::1]", "[::1]:", "[a[b]:1",
        "host:-1", "host:+1", "host:1234567890", "x]:1"})
    void rejectsTheRestNamingTheFlag(String text) {
        assertThatThrownBy(() -> HostPort.parse("--webhook-listen", text)).isInstanceOf(ConfigException.class)
                .hasMessage("--webhook-listen: " + text + " (expected: HOST:PORT, [IPv6]:PORT, :PORT or PORT, e.g."
                        + " 0.0.0.0:9443)")
                .satisfies(e -> assertThat(((ConfigException) e).flag()).isEqualTo("--webhook-listen"));
    }

    @Test
    void aPortAboveTheRangeIsNamed() {
        assertThatThrownBy(() -> HostPort.parse("--listen", "0.0.0.0:99999")).isInstanceOf(ConfigException.class)
                .hasMessage("--listen: port 99999 (expected: 0..65535)");
        assertThatThrownBy(() -> HostPort.parse("--listen", "65536")).hasMessage("--listen: port 65536 (expected:"
                + " 0..65535)");
    }

    @Test
    void formatBracketsIpv6AndReadsBack() {
        assertThat(HostPort.format("::1", 9443)).isEqualTo("[::1]:9443");
        assertThat(HostPort.format("10.0.0.1", 80)).isEqualTo("10.0.0.1:80");
        for (HostPort address : new HostPort[] {new HostPort("::", 0), new HostPort("example.com", 443)}) {
            assertThat(HostPort.parse("--listen", address.toString())).isEqualTo(address);
        }
        assertThat(AddressInUseException.format("fd00::2", 1)).isEqualTo("[fd00::2]:1");
    }

    @Test
    void theRecordChecksItsParts() {
        assertThatThrownBy(() -> new HostPort("", 1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new HostPort("h", 65536)).isInstanceOf(IllegalArgumentException.class);
    }
}
