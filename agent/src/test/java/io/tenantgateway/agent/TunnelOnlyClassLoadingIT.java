package io.tenantgateway.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tenantgateway.agent.testing.AgentProcess;
import io.tenantgateway.agent.testing.AgentProcessTestBase;
import io.tenantgateway.agent.testing.LoopbackHttp;
import io.tenantgateway.agent.testing.TunnelTestbed;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Load only what is used (issue 18): {@code run} as a pure konnectivity-agent (Kamaji's arguments: no webhook, no
 * device source, no lock controller, no kubeconfig), started through {@code bin/tenant-gateway} as the image starts
 * it, connects, carries a tunnel, answers every path of its health and admin ports and drains on SIGTERM — and the
 * JVM's class-load log ({@code -Xlog:class+load}, added with {@code JAVA_OPTS}) shows not one Vert.x, fabric8 or
 * webhook class, from start to exit.
 */
@Timeout(120)
class TunnelOnlyClassLoadingIT extends AgentProcessTestBase {
    /** What a tunnel-only agent must never load. */
    static final List<String> FORBIDDEN = List.of("io.vertx.", "io.fabric8.", "io.tenantgateway.webhook.");
    /** {@code [0.123s][info][class,load] io.vertx.core.Vertx source: jar:file:…}. */
    private static final Pattern LOADED = Pattern.compile("\\[class,load\\s*\\] (\\S+) source: ");

    @Test
    void aTunnelOnlyAgentLoadsNoVertxKubernetesClientOrWebhookClass() throws Exception {
        testbed = new TunnelTestbed(dir);
        Path classLog = dir.resolve("class-load.log");
        List<String> args = new ArrayList<>(testbed.kamajiArgs());
        args.add(TunnelTestbed.DIAL_LOOPBACK); // dials the echo target / its webhook on 127.0.0.1
        args.addAll(List.of("--health-server-host=127.0.0.1", "--shutdown-grace=10s"));
        agent = AgentProcess.launch(args, Map.of("JAVA_OPTS", "-Xlog:class+load=info:file=" + classLog));
        int health = agent.healthPort();
        int admin = agent.adminPort();

        await().atMost(Duration.ofSeconds(60)).until(() -> testbed.server.agentCount() == 1);
        try (TunnelTestbed.Tunnel tunnel = testbed.dialEcho()) {
            assertThat(tunnel.echo("through the tunnel")).isEqualTo("through the tunnel");

            // Every path of both ports, so that what answering them loads is in the log too.
            await().atMost(Duration.ofSeconds(30)).until(() -> LoopbackHttp.status(health, "/readyz") == 200);
            assertThat(LoopbackHttp.get(health, "/readyz?verbose").body())
                    .isEqualTo("[+]shutdown ok\n[+]server-connected ok\nreadyz check passed\n");
            assertThat(LoopbackHttp.get(health, "/healthz").body()).isEqualTo("ok");
            assertThat(LoopbackHttp.get(health, "/livez").body()).isEqualTo("ok");
            assertThat(LoopbackHttp.get(health, "/ready").statusCode()).isEqualTo(200);
            HttpResponse<String> metrics = LoopbackHttp.get(health, "/metrics");
            assertThat(metrics.headers().firstValue("content-type")).hasValue(
                    "text/plain; version=0.0.4; charset=utf-8");
            assertThat(metrics.body()).contains("konnectivity_network_proxy_agent_open_server_connections ");
            assertThat(LoopbackHttp.get(health, "/nope").statusCode()).isEqualTo(404);

            HttpResponse<String> page = LoopbackHttp.get(admin, "/ui");
            assertThat(page.statusCode()).isEqualTo(200);
            assertThat(page.body()).contains("webhook off");
            for (String path : List.of("/debug", "/debug/config", "/debug/readiness", "/debug/tunnels")) {
                assertThat(LoopbackHttp.get(admin, path).statusCode()).as(path).isEqualTo(200);
            }
            for (String part : List.of("devices", "locks", "admissions")) {
                assertThat(LoopbackHttp.get(admin, "/debug/" + part).body()).as(part).contains("\"enabled\" : false");
            }
            assertThat(LoopbackHttp.get(admin, "/metrics").statusCode()).isEqualTo(301);
            assertThat(LoopbackHttp.get(admin, "/debug/jfr").statusCode()).as("profiling off").isEqualTo(404);
        }
        agent.signal("TERM");
        assertThat(agent.awaitExit(Duration.ofSeconds(60))).as("exit code; log:%n%s", String.join("\n", agent.log))
                .isZero();

        List<String> loaded = new ArrayList<>();
        for (String line : Files.readAllLines(classLog, StandardCharsets.UTF_8)) {
            Matcher matcher = LOADED.matcher(line);
            if (matcher.find()) {
                loaded.add(matcher.group(1));
            }
        }
        // The log is the real one: it has the agent, the HTTP codec the ports run on and the status page.
        assertThat(loaded).as("classes in %s", classLog).contains("io.tenantgateway.agent.Agent",
                "io.tenantgateway.agent.http.RequestDecoder", "io.tenantgateway.agent.admin.StatusPage",
                "io.tenantgateway.tunnel.client.TunnelClientSet");
        List<String> offending = loaded.stream().filter(name -> FORBIDDEN.stream().anyMatch(name::startsWith))
                .toList();
        assertThat(offending).as("%d classes of %s loaded by a tunnel-only agent (of %d in all); the first: %s",
                offending.size(), FORBIDDEN, loaded.size(), offending.subList(0, Math.min(20, offending.size())))
                .isEmpty();
        System.out.printf("tunnel-only agent loaded %d classes, none of %s%n", loaded.size(), FORBIDDEN);
    }
}
