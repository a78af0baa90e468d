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
 * Load only what is used (issues 18 and 35): {@code run} as a pure konnectivity-agent (Kamaji's arguments: no webhook,
 * no device source, no lock controller, no kubeconfig), started through {@code bin/tenant-gateway} as the image starts
 * it, connects, carries a tunnel, answers every path of its health and admin ports and drains on SIGTERM — and the
 * JVM's class-load log ({@code -Xlog:class+load}, added with {@code JAVA_OPTS}) shows not one class of
 * {@link #FORBIDDEN} from start to exit, and none of {@link #BEFORE_SCRAPE} until {@code /metrics} is first scraped.
 */
@Timeout(120)
class TunnelOnlyClassLoadingIT extends AgentProcessTestBase {
    /**
     * What a tunnel-only agent must never load: the other parts (Vert.x, the Kubernetes client, the webhook); Bouncy
     * Castle (plain PEM is read with the JDK); the platform MBean server and what registering its beans loads (JMX's
     * server, JFR's management bean and diagnostic commands; Netty's own {@code FlightRecorder.isAvailable()} check
     * loads a few {@code jdk.jfr} classes and {@code java.lang.management} every bean provider, JFR's too: allowed); picocli's usage-help layout (no help is printed);
     * logback's configuration machinery (the agent configures it in code); picocli's reflective converters for
     * {@code java.sql} and the {@code java.time} types no option has (Main excludes them); the Prometheus client's
     * exemplar sampling and its OpenTelemetry look-ups (Main turns exemplars off); Netty's DNS resolver and codec
     * (made at the first dial of a name; this agent dials an IP literal); logback's {@code StatusPrinter}, whose date
     * formatter loads about 40 {@code java.time} classes (the agent's configurator installs its own status listener);
     * the method handles a record's {@code equals} is made with ({@code DialPolicy.allowsAll} compares fields); the
     * JDK's TLS handshake (BoringSSL runs it; Netty's question about the JDK's TLS versions is answered by
     * {@code JdkTlsVersionProbe}).
     */
    static final List<String> FORBIDDEN = List.of("io.vertx.", "io.fabric8.", "io.tenantgateway.webhook.",
            "org.bouncycastle.", "javax.management.MBeanServer", "com.sun.jmx.interceptor.", "jdk.management.jfr.FlightRecorderMXBeanImpl",
            "jdk.jfr.internal.dcmd.", "jdk.jfr.Recording", "picocli.CommandLine$Help$TextTable",
            "picocli.CommandLine$Help$Layout", "picocli.CommandLine$Help$Column", "ch.qos.logback.classic.joran.",
            "ch.qos.logback.core.model.", "java.sql.", "picocli.CommandLine$BuiltIn$ISO8601TimeConverter",
            "io.prometheus.metrics.core.exemplars.", "io.prometheus.metrics.tracer.", "io.netty.resolver.dns.",
            "io.netty.handler.codec.dns.", "ch.qos.logback.core.util.StatusPrinter",
            "ch.qos.logback.core.util.CachingDateFormatter", "java.lang.runtime.ObjectMethods",
            "sun.security.ssl.SSLSocketImpl", "sun.security.ssl.SSLHandshake");
    /**
     * What it loads only once {@code /metrics} is scraped: the {@code jvm_*} and {@code process_*} families read the
     * JDK's management beans (JvmInstrumentation), and the text format's writer is made then (HealthServer).
     */
    static final List<String> BEFORE_SCRAPE = List.of("java.lang.management.", "javax.management.", "sun.management.",
            "com.sun.management.", "io.prometheus.metrics.instrumentation.", "io.prometheus.metrics.expositionformats.");
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
        List<String> beforeScrape;
        try (TunnelTestbed.Tunnel tunnel = testbed.dialEcho()) {
            assertThat(tunnel.echo("through the tunnel")).isEqualTo("through the tunnel");

            // Every path of both ports, so that what answering them loads is in the log too.
            await().atMost(Duration.ofSeconds(30)).until(() -> LoopbackHttp.status(health, "/readyz") == 200);
            assertThat(LoopbackHttp.get(health, "/readyz?verbose").body())
                    .isEqualTo("[+]shutdown ok\n[+]server-connected ok\nreadyz check passed\n");
            assertThat(LoopbackHttp.get(health, "/healthz").body()).isEqualTo("ok");
            assertThat(LoopbackHttp.get(health, "/livez").body()).isEqualTo("ok");
            assertThat(LoopbackHttp.get(health, "/ready").statusCode()).isEqualTo(200);
            assertThat(LoopbackHttp.get(health, "/nope").statusCode()).isEqualTo(404);
            // Connected, a tunnel carried, readiness answered: nothing of the management beans yet. (The log is
            // written line by line as classes load.)
            beforeScrape = loaded(classLog);
            assertThat(beforeScrape).as("the log so far").contains("io.tenantgateway.tunnel.client.TunnelClientSet");
            List<String> early = matching(beforeScrape, BEFORE_SCRAPE);
            assertThat(early).as("%d classes of %s loaded before the first scrape; the first: %s", early.size(),
                    BEFORE_SCRAPE, early.subList(0, Math.min(20, early.size()))).isEmpty();

            HttpResponse<String> metrics = LoopbackHttp.get(health, "/metrics");
            assertThat(metrics.headers().firstValue("content-type")).hasValue(
                    "text/plain; version=0.0.4; charset=utf-8");
            assertThat(metrics.body()).contains("konnectivity_network_proxy_agent_open_server_connections ",
                    "jvm_memory_used_bytes{", "process_resident_memory_bytes ");
            // The memory budget read the launcher's -XX:MaxDirectMemorySize=32m without the management beans:
            // tunnel-target-buffers is 3/8 of it.
            Matcher budget = Pattern.compile("tenant_gateway_memory_budget_limit_bytes"
                    + "\\{account=\"tunnel-target-buffers\",pool=\"direct\"\\} (\\S+)").matcher(metrics.body());
            assertThat(budget.find()).as("budget limit in%n%s", metrics.body()).isTrue();
            assertThat(Double.parseDouble(budget.group(1))).isEqualTo(12.0 * 1024 * 1024);

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

        List<String> loaded = loaded(classLog);
        // The log is the real one: it has the agent, the HTTP codec the ports run on and the status page.
        assertThat(loaded).as("classes in %s", classLog).contains("io.tenantgateway.agent.Agent",
                "io.tenantgateway.agent.http.RequestDecoder", "io.tenantgateway.agent.admin.StatusPage",
                "io.tenantgateway.tunnel.client.TunnelClientSet");
        List<String> offending = matching(loaded, FORBIDDEN);
        assertThat(offending).as("%d classes of %s loaded by a tunnel-only agent (of %d in all); the first: %s",
                offending.size(), FORBIDDEN, loaded.size(), offending.subList(0, Math.min(20, offending.size())))
                .isEmpty();
        System.out.printf("tunnel-only agent loaded %d classes (%d before the first scrape), none of %s%n",
                loaded.size(), beforeScrape.size(), FORBIDDEN);
    }

    private static List<String> loaded(Path classLog) throws java.io.IOException {
        List<String> loaded = new ArrayList<>();
        for (String line : Files.readAllLines(classLog, StandardCharsets.UTF_8)) {
            Matcher matcher = LOADED.matcher(line);
            if (matcher.find()) {
                loaded.add(matcher.group(1));
            }
        }
        return loaded;
    }

    private static List<String> matching(List<String> names, List<String> prefixes) {
        return names.stream().filter(name -> prefixes.stream().anyMatch(name::startsWith)).toList();
    }
}
