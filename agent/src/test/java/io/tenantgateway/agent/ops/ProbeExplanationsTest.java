package io.tenantgateway.agent.ops;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Each failure text that servers, agents (upstream's and ours), TLS stacks and webhooks produce gets its own story. */
@Timeout(60)
class ProbeExplanationsTest {
    private static final ProbeExplanations.Context UDS = new ProbeExplanations.Context(
            "unix:/run/konnectivity/konnectivity-server.socket", true, "10.96.0.20:443",
            "hami-scheduler.kube-system.svc", Duration.ofSeconds(30), "/webhook", false);
    private static final ProbeExplanations.Context TCP = new ProbeExplanations.Context("kas.example:8090", false,
            "10.96.0.20:443", "hami-scheduler.kube-system.svc", Duration.ofSeconds(30), "/webhook", true);

    @Test
    void serverStage() {
        assertThat(ProbeExplanations.server("/run/x.socket: no such file", UDS).why())
                .contains("does not exist: konnectivity-server is not running");
        assertThat(ProbeExplanations.server("Connection refused", UDS).why()).contains("stale socket");
        assertThat(ProbeExplanations.server("Connection refused", TCP).why()).isEqualTo("nothing listens on"
                + " kas.example:8090");
        assertThat(ProbeExplanations.server("Permission denied", UDS).next()).contains("user kube-apiserver runs as");
        assertThat(ProbeExplanations.server("connect: no answer within 10s", TCP).next()).contains("firewall");
        assertThat(ProbeExplanations.server("certificate 'CN=x' does not match the name 'kas.example'", TCP).next())
                .contains("--server-ca must be the CA");
        ProbeExplanations.Context withoutClientCert = new ProbeExplanations.Context("kas.example:8090", false,
                "10.96.0.20:443", "n", Duration.ofSeconds(30), "/webhook", false);
        assertThat(ProbeExplanations.server("the peer rejected our certificate (alert bad_certificate)",
                withoutClientCert).next()).startsWith("pass --client-cert/--client-key");
        assertThat(ProbeExplanations.server("the server answered HTTP/1.1, not HTTP/2: it runs --mode http-connect",
                UDS).next()).contains("--mode the server runs with");
    }

    @Test
    void dialStageMatchesUpstreamTexts() {
        assertThat(ProbeExplanations.dial("No agent available", UDS).why()).contains("no agent is connected to this"
                + " server replica");
        assertThat(ProbeExplanations.dial("dial timeout, backstop", UDS).why()).startsWith("no DIAL_RSP within 30s")
                .contains("not at the target");
        assertThat(ProbeExplanations.dial("dial tcp 10.96.0.20:443: connect: connection refused", UDS).why())
                .contains("nothing listens on port 443 there");
        assertThat(ProbeExplanations.dial("dial tcp 10.96.0.20:443: i/o timeout", UDS).next())
                .contains("nc -vz 10.96.0.20 443");
        assertThat(ProbeExplanations.dial("dial tcp: lookup hami.svc: no such host", UDS).why())
                .contains("node's DNS");
        assertThat(ProbeExplanations.dial("dial to 10.96.0.20:443 denied by policy", UDS).next())
                .contains("--dial-allow");
        assertThat(ProbeExplanations.dial("dial to 10.96.0.20:443 denied by policy (deny cidr 10.96.0.0/12)", UDS)
                .why()).endsWith("(rule: deny cidr 10.96.0.0/12)");
        assertThat(ProbeExplanations.dial("dial to 127.0.0.1:443 denied by policy (default: loopback)", UDS).next())
                .contains("--dial-allow=127.0.0.0/8").contains("admin port stays closed");
        assertThat(ProbeExplanations.dial("dial to 127.0.0.1:8094 denied by policy (agent admin port)", UDS).why())
                .contains("never dials its own admin port");
        assertThat(ProbeExplanations.dial("dial to [fe80::1%eth0]:80 denied by policy (default: link-local)",
                new ProbeExplanations.Context(UDS.server(), true, "[fe80::1%eth0]:80", UDS.tlsName(),
                        UDS.dialTimeout(), UDS.webhookPath(), false)).next())
                .endsWith("--dial-allow=fe80::1 (only that address opens)");
        assertThat(ProbeExplanations.dial("ssl exception", TCP).next()).contains("--client-cert/--client-key");
        assertThat(ProbeExplanations.dial("invalid version format: \u0000\u0000", TCP).why()).contains("--mode grpc");
        assertThat(ProbeExplanations.dial("agent disconnected", UDS).why()).contains("disconnected before it"
                + " answered");
        assertThat(ProbeExplanations.dial("something new", UDS).why()).isEqualTo("the dial failed: something new");
    }

    @Test
    void tlsStage() {
        assertThat(ProbeExplanations.tls(ChainCheck.Problem.NAME_MISMATCH, "certificate 'CN=w' does not match", UDS)
                .next()).contains("--webhook-dns hami-scheduler.kube-system.svc");
        assertThat(ProbeExplanations.tls(ChainCheck.Problem.UNTRUSTED, "not signed by a trusted CA", UDS).next())
                .contains("inject-ca-bundle");
        assertThat(ProbeExplanations.tls(ChainCheck.Problem.EXPIRED, "expired", UDS).next()).contains("renew");
        assertThat(ProbeExplanations.tls(null, "not an SSL/TLS record: 485454502f", UDS).why())
                .isEqualTo("the target does not speak TLS on 10.96.0.20:443");
        assertThat(ProbeExplanations.tls(null, "client certificate required but none was presented", UDS).why())
                .contains("--webhook-client-ca");
    }

    @Test
    void webhookStage() {
        assertThat(ProbeExplanations.webhook("HTTP 404 Not Found", UDS).why()).isEqualTo("nothing serves /webhook on"
                + " the target");
        assertThat(ProbeExplanations.webhook("POST /webhook: no answer within 10s", UDS).why())
                .contains("admits the pod un-mutated");
        assertThat(ProbeExplanations.webhook("HTTP 503 Service Unavailable: upstream down", UDS).why())
                .isEqualTo("the webhook answered HTTP 503 Service Unavailable: upstream down");
        assertThat(ProbeExplanations.refused(403, "exceeding resource quota").next()).contains("ResourceQuota");
        assertThat(ProbeExplanations.refused(403, "container cuda is privileged").next()).contains("--hami-compat");
        assertThat(ProbeExplanations.refused(503, "upstream https://hami: timeout").why())
                .startsWith("the webhook errored (code 503)");
    }
}
