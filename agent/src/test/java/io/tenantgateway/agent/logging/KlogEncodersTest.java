package io.tenantgateway.agent.logging;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.LoggingEvent;
import ch.qos.logback.core.spi.FilterReply;
import io.tenantgateway.common.logging.Verbosity;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneId;
import org.junit.jupiter.api.Test;
import org.slf4j.event.KeyValuePair;

class KlogEncodersTest {
    private static final LoggerContext CONTEXT = new LoggerContext();
    private static final Logger LOGGER = CONTEXT.getLogger("io.tenantgateway.tunnel.client.TunnelClient");
    private static final Instant AT = LocalDateTime.of(2026, 12, 1, 7, 9, 36, 824_702_123)
            .atZone(ZoneId.systemDefault()).toInstant();

    private static LoggingEvent event(Level level, String message, Object... args) {
        LoggingEvent event = new LoggingEvent(Logger.class.getName(), LOGGER, level, message, null, args);
        event.setInstant(AT);
        event.setCallerData(new StackTraceElement[] {
            new StackTraceElement("io.tenantgateway.tunnel.client.TunnelClient", "onHeaders", "TunnelClient.java", 335)});
        return event;
    }

    /** Upstream's "Connect to server" at V2 with serverID and serverCount. */
    private static LoggingEvent connectToServer() {
        LoggingEvent event = event(Level.INFO, "Connect to server");
        event.addMarker(Verbosity.marker(2));
        event.addKeyValuePair(new KeyValuePair("serverID", "srv-1"));
        event.addKeyValuePair(new KeyValuePair("serverCount", 3));
        return event;
    }

    private static String text(LoggingEvent event) {
        return new KlogTextEncoder().format(event);
    }

    @Test
    void textIsKlogsHeaderQuotedMessageAndPairs() {
        LoggingEvent event = connectToServer();
        event.addKeyValuePair(new KeyValuePair("flowControl", true));
        String pid = String.format("%7d", ProcessHandle.current().pid());
        assertThat(text(event)).isEqualTo("I1201 07:09:36.824702 " + pid
                + " TunnelClient.java:335] \"Connect to server\" serverID=\"srv-1\" serverCount=3 flowControl=true\n");
    }

    @Test
    void quotingFollowsKlog() {
        LoggingEvent event = event(Level.WARN, "say \"hi\"\tnow");
        event.addKeyValuePair(new KeyValuePair("path", "C:\\x"));
        event.addKeyValuePair(new KeyValuePair("nothing", null));
        event.addKeyValuePair(new KeyValuePair("lines", "a\nb"));
        KlogTextEncoder encoder = new KlogTextEncoder();
        encoder.setSkipHeaders(true);
        assertThat(encoder.format(event))
                .isEqualTo("\"say \\\"hi\\\"\\tnow\" path=\"C:\\\\x\" nothing=<nil> lines=<\n\ta\n\tb\n >\n");
        assertThat(text(event)).startsWith("W1201 ");
        assertThat(text(event(Level.ERROR, "x"))).startsWith("E1201 ");
    }

    /** A peer's value with a line feed, a carriage return, ESC, BEL and OSC 52: nothing starts a line or reaches a tty. */
    @Test
    void noValueMessageOrStackCanForgeALineOrReachATerminalRaw() {
        String hostile = "gpu-1\nI1201 07:09:36.000000       1 Fake.java:1] \"forged\"\r\u001b[2J\u001b]52;c;aGk=\u0007\u009b";
        LoggingEvent event = event(Level.WARN, "node name {} refused", hostile);
        event.addKeyValuePair(new KeyValuePair("node", hostile));
        LoggingEvent failed = new LoggingEvent(Logger.class.getName(), LOGGER, Level.ERROR, "start failed",
                new IllegalArgumentException(hostile), null);
        failed.setInstant(AT);
        failed.setCallerData(event.getCallerData());
        KlogTextEncoder encoder = new KlogTextEncoder();
        encoder.setSkipHeaders(true);
        for (String line : (encoder.format(event) + encoder.format(failed) + new KlogJsonEncoder().format(event)
                + new KlogJsonEncoder().format(failed)).split("\n")) {
            assertThat(line).doesNotContain("\r", "\u001b", "\u0007", "\u009b");
            assertThat(line).as("a line of its own starts as the encoder starts one")
                    .matches("(\"|\\t| >|\\{\"ts\").*");
        }
        assertThat(encoder.format(event)).isEqualTo("\"node name gpu-1\\nI1201 07:09:36.000000       1 Fake.java:1]"
                + " \\\"forged\\\"\\r\\x1b[2J\\x1b]52;c;aGk=\\a\\u009b refused\" node=<\n\tgpu-1\n\tI1201 07:09:36.000000"
                + "       1 Fake.java:1] \"forged\"\\r\\x1b[2J\\x1b]52;c;aGk=\\a\\u009b\n >\n");
        assertThat(new KlogJsonEncoder().format(event)).contains("\"node\":\"gpu-1\\nI1201", "\\r\\u001B[2J",
                "\\u0007\\u009b\"");
    }

    @Test
    void aHugeFieldIsCutWithANote() {
        KlogTextEncoder encoder = new KlogTextEncoder();
        encoder.setSkipHeaders(true);
        String line = encoder.format(event(Level.WARN, "Allocate refused: {}", "a".repeat(100_000)));
        assertThat(line).hasSizeLessThan(KlogRecord.FIELD_LIMIT + 100)
                .endsWith("… (truncated, 100018 bytes, limit " + KlogRecord.FIELD_LIMIT + ")\"\n");
        assertThat(new KlogJsonEncoder().format(event(Level.WARN, "x {}", "b".repeat(100_000))))
                .hasSizeLessThan(KlogRecord.FIELD_LIMIT + 200);
    }

    @Test
    void placeholderMessagesAreSplitIntoPairs() {
        KlogTextEncoder encoder = new KlogTextEncoder();
        encoder.setSkipHeaders(true);
        assertThat(encoder.format(event(Level.INFO, "sent DRAIN serverID={}", "kas-0")))
                .isEqualTo("\"sent DRAIN\" serverID=\"kas-0\"\n");
        assertThat(encoder.format(event(Level.INFO, "server connection closed serverID={} status={} description=\"{}\"",
                "kas-0", io.grpc.Status.Code.OK, "bye"))).isEqualTo(
                "\"server connection closed\" serverID=\"kas-0\" status=\"OK\" description=\"bye\"\n");
        // Anything else stays one message, formatted.
        assertThat(encoder.format(event(Level.INFO, "received SIG{}: draining (send it again to exit at once)",
                "TERM"))).isEqualTo("\"received SIGTERM: draining (send it again to exit at once)\"\n");
        assertThat(encoder.format(event(Level.INFO, "agent draining agentID={}; no new dials are routed to it",
                "a"))).isEqualTo("\"agent draining agentID=a; no new dials are routed to it\"\n");
    }

    @Test
    void jsonIsComponentBasesShape() {
        LoggingEvent event = connectToServer();
        String micros = KlogJsonEncoder.timestamp(AT);
        assertThat(micros).endsWith(".702");
        assertThat(new KlogJsonEncoder().format(event)).isEqualTo("{\"ts\":" + micros
                + ",\"caller\":\"TunnelClient.java:335\",\"msg\":\"Connect to server\",\"v\":2,\"serverID\":\"srv-1\","
                + "\"serverCount\":3}\n");

        LoggingEvent debug = event(Level.DEBUG, "DIAL_CLS dialID={}", 7L);
        assertThat(new KlogJsonEncoder().format(debug)).contains("\"msg\":\"DIAL_CLS\",\"v\":5,\"dialID\":7}");

        LoggingEvent error = new LoggingEvent(Logger.class.getName(), LOGGER, Level.ERROR, "cannot connect once",
                new IllegalStateException("refused"), null);
        error.setInstant(AT);
        assertThat(new KlogJsonEncoder().format(error))
                .contains("\"msg\":\"cannot connect once\",\"level\":\"error\","
                        + "\"err\":\"java.lang.IllegalStateException: refused\"}");
    }

    @Test
    void verbosityFiltersInfoByVLevelAndVmodule() {
        VerbosityFilter filter = new VerbosityFilter(4, VerbosityFilter.parseVmodule("TunnelClient=9,Endpoint*=1,"
                + "io.tenantgateway.agent.*=0"));
        Logger client = LOGGER;
        Logger set = CONTEXT.getLogger("io.tenantgateway.tunnel.client.TunnelClientSet");
        Logger dialer = CONTEXT.getLogger("io.tenantgateway.tunnel.endpoint.EndpointDialer$Inner");
        Logger agent = CONTEXT.getLogger("io.tenantgateway.agent.Agent");
        Logger netty = CONTEXT.getLogger("io.netty.channel.Foo");
        assertThat(filter.decide(null, client, Level.TRACE, null, null, null)).isEqualTo(FilterReply.ACCEPT);
        assertThat(filter.decide(Verbosity.marker(4), set, Level.INFO, null, null, null)).isEqualTo(FilterReply.ACCEPT);
        assertThat(filter.decide(Verbosity.marker(5), set, Level.INFO, null, null, null)).isEqualTo(FilterReply.DENY);
        assertThat(filter.decide(null, set, Level.DEBUG, null, null, null)).isEqualTo(FilterReply.DENY);
        assertThat(filter.decide(Verbosity.marker(2), dialer, Level.INFO, null, null, null))
                .isEqualTo(FilterReply.DENY);
        assertThat(filter.decide(Verbosity.marker(1), agent, Level.INFO, null, null, null))
                .isEqualTo(FilterReply.DENY);
        assertThat(filter.decide(null, agent, Level.WARN, null, null, null)).isEqualTo(FilterReply.ACCEPT);
        assertThat(filter.decide(null, netty, Level.DEBUG, null, null, null)).isEqualTo(FilterReply.NEUTRAL);
        assertThatThrownBy(() -> VerbosityFilter.parseVmodule("client")).hasMessage(
                "--vmodule: client (expected: pattern=N)");
    }
}
