package io.tenantgateway.tunnel.e2e;

import static io.tenantgateway.tunnel.testing.TunnelHarness.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import io.grpc.Metadata;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.tenantgateway.tunnel.TunnelConfig;
import io.tenantgateway.tunnel.client.TunnelClientSet;
import io.tenantgateway.tunnel.proto.CloseRequest;
import io.tenantgateway.tunnel.proto.Data;
import io.tenantgateway.tunnel.proto.Packet;
import io.tenantgateway.tunnel.proto.PacketType;
import io.tenantgateway.tunnel.protocol.AgentIdentifiers;
import io.tenantgateway.tunnel.protocol.Packets;
import io.tenantgateway.tunnel.testing.RawAgentServer;
import io.tenantgateway.tunnel.testing.TargetServer;
import io.tenantgateway.tunnel.testing.TunnelHarness;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Random;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A server that sends garbage: the agent stays connected, answers per spec (CLOSE_RSP for unknown ids, DIAL_RSP
 * errors) or counts and ignores, and the tunnel that was open keeps working.
 */
@Timeout(90)
class MalformedServerIT {
    @RegisterExtension
    final TunnelHarness harness = new TunnelHarness();
    private final PrometheusRegistry registry = new PrometheusRegistry();
    private RawAgentServer server;
    private TargetServer echo;

    @BeforeEach
    void start() throws Exception {
        server = harness.track(new RawAgentServer("raw"));
        echo = harness.track(TargetServer.echo());
        TunnelClientSet agent = harness.startAgent(TunnelConfig.builder().proxyServerHost("127.0.0.1")
                .proxyServerPort(server.port()).agentId("raw-agent")
                .agentIdentifiers(AgentIdentifiers.parse("host=node-a"))
                .syncInterval(Duration.ofMillis(50)).syncIntervalCap(Duration.ofMillis(200)).build(), true, registry);
        await().atMost(WAIT).until(agent::isReady);
    }


    @Test
    void sendsTheConnectMetadata() {
        assertThat(server.agentHeaders().get(key("agentid"))).isEqualTo("raw-agent");
        assertThat(server.agentHeaders().get(key("agentidentifiers"))).isEqualTo("host=node-a");
        assertThat(server.agentHeaders().get(key("x-tenant-gateway-flow-control"))).startsWith("v1;window=");
        assertThat(server.agentHeaders().get(key("authorization"))).isNull();
    }

    @Test
    void survivesMalformedPacketsAndKeepsOtherTunnelsWorking() throws Exception {
        long c1 = dial(1);
        assertEcho(c1, "hello");

        server.send(Packet.newBuilder().setType(PacketType.DATA)
                .setCloseRequest(CloseRequest.newBuilder().setConnectID(c1)).build()); // type/oneof mismatch
        server.send(Packet.newBuilder().setType(PacketType.DATA).build()); // missing payload
        server.send(Packet.newBuilder().setTypeValue(77).setData(Data.newBuilder().setConnectID(c1)
                .setData(ByteString.copyFromUtf8("x"))).build()); // unknown type
        server.send(Packets.credit(c1, 1000)); // extension type on a stream that did not negotiate it
        server.send(Packets.data(0, ByteString.copyFromUtf8("nobody"))); // connectID 0
        server.send(Packets.drain()); // a server→agent DRAIN means nothing
        server.send(Packets.dialResponse(5, 5)); // wrong direction
        server.send(Packets.data(999, ByteString.copyFromUtf8("stray"))); // unknown connectID
        // Everything above was ignored: the next packet is the answer to the unknown connectID.
        assertThat(server.next()).isEqualTo(Packets.closeResponse(999, "Unknown connectID"));
        server.send(Packets.closeRequest(998));
        assertThat(server.next()).isEqualTo(Packets.closeResponse(998, "Unknown connectID"));
        server.send(Packets.dialRequest("udp", echo.hostPort(), 2));
        assertThat(server.next()).isEqualTo(Packets.dialFailure(2, "protocol \"udp\" not supported (expected: tcp)"));

        long c2 = dial(3);
        byte[] huge = new byte[4 * 1024 * 1024 + 1];
        server.send(Packets.data(c2, ByteString.copyFrom(huge)));
        assertThat(server.next()).isEqualTo(Packets.closeResponse(c2, "DATA of 4194305 bytes exceeds 4194304"));

        // A large but legal DATA on the first tunnel still goes through, byte for byte.
        byte[] large = new byte[3 * 1024 * 1024];
        new Random(7).nextBytes(large);
        server.send(Packets.data(c1, ByteString.copyFrom(large)));
        assertThat(collect(c1, large.length)).isEqualTo(ByteString.copyFrom(large));
        assertEcho(c1, "still alive");

        long c3 = dial(4);
        server.send(Packets.closeDial(4)); // DIAL_CLS after DIAL_RSP: the agent closes and reports it
        assertThat(server.next()).isEqualTo(Packets.closeResponse(c3));
        server.send(Packets.closeRequest(c1));
        assertThat(server.next()).isEqualTo(Packets.closeResponse(c1));

        assertThat(server.connected()).isTrue();
        assertThat(malformed("payload_mismatch")).isEqualTo(1);
        assertThat(malformed("missing_payload")).isEqualTo(1);
        assertThat(malformed("unknown_type")).isEqualTo(2);
        assertThat(malformed("connect_id_0")).isEqualTo(1);
        assertThat(malformed("unknown_connect_id")).isEqualTo(1);
        assertThat(malformed("oversized_data")).isEqualTo(1);
        await().atMost(WAIT).until(() -> echo.openConnections() == 0);
    }

    private long dial(long random) throws InterruptedException {
        server.send(Packets.dialRequest(echo.hostPort(), random));
        Packet response = server.next();
        assertThat(response.getType()).isEqualTo(PacketType.DIAL_RSP);
        assertThat(response.getDialResponse().getRandom()).isEqualTo(random);
        assertThat(response.getDialResponse().getError()).isEmpty();
        return response.getDialResponse().getConnectID();
    }

    private void assertEcho(long connectId, String text) throws Exception {
        server.send(Packets.data(connectId, ByteString.copyFromUtf8(text)));
        assertThat(collect(connectId, text.length()).toString(StandardCharsets.UTF_8)).isEqualTo(text);
    }

    private ByteString collect(long connectId, int size) throws Exception {
        ByteString.Output out = ByteString.newOutput(size);
        while (out.size() < size) {
            Packet packet = server.next();
            assertThat(packet.getType()).as(Packets.describe(packet)).isEqualTo(PacketType.DATA);
            assertThat(packet.getData().getConnectID()).isEqualTo(connectId);
            packet.getData().getData().writeTo(out);
        }
        return out.toByteString();
    }

    private double malformed(String reason) {
        return registry.scrape().stream()
                .filter(m -> m.getMetadata().getName().equals("tenant_gateway_tunnel_malformed_packets"))
                .flatMap(m -> ((CounterSnapshot) m).getDataPoints().stream())
                .filter(p -> reason.equals(p.getLabels().get("reason")))
                .mapToDouble(CounterSnapshot.CounterDataPointSnapshot::getValue).sum();
    }

    private static Metadata.Key<String> key(String name) {
        return Metadata.Key.of(name, Metadata.ASCII_STRING_MARSHALLER);
    }
}
