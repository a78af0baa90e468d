package io.tenantgateway.agent.ops;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ListeningLogTest {
    @Test
    void readsThePortsFromKlogTextAndJsonLinesAndNothingFromOtherLines() {
        String text = "I1208 03:05:01.123456   4113 HealthServer.java:91] \"health server listening\" "
                + "address=\"127.0.0.1:41235\" paths=\"/healthz,/readyz,/metrics\"";
        String json = "{\"ts\":1765163101123.456,\"caller\":\"AdminServer.java:92\",\"msg\":\"admin server listening\","
                + "\"v\":0,\"address\":\"[::1]:39001\"}";
        assertThat(ListeningLog.healthPort(text)).hasValue(41235);
        assertThat(ListeningLog.adminPort(text)).isEmpty();
        assertThat(ListeningLog.adminPort(json)).hasValue(39001);
        assertThat(ListeningLog.healthPort(json)).isEmpty();
        assertThat(ListeningLog.healthPort("I1208 03:05:01.123456   4113 Agent.java:118] \"starting tenant-gateway\""))
                .isEmpty();
    }
}
