package io.tenantgateway.tools.bench;

import static java.util.Objects.requireNonNull;

import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.SslProvider;
import io.tenantgateway.agent.Version;
import io.tenantgateway.tunnel.transport.TlsProviders;
import java.lang.management.ManagementFactory;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the configured scenarios on one {@link BenchRig} and collects the report. The scale scenario runs last:
 * it replaces the in-process agent with one in a child JVM. Blocking; call from the command's thread.
 */
final class Bench {
    private static final Logger log = LoggerFactory.getLogger(Bench.class);

    private final BenchConfig config;
    private final Clock clock;

    Bench(BenchConfig config, Clock clock) {
        this.config = requireNonNull(config, "config");
        this.clock = requireNonNull(clock, "clock");
    }

    BenchReport run() throws Exception {
        Instant startedAt = clock.instant();
        long start = System.nanoTime();
        double loadBefore = loadAverage();
        BenchSizes sizes = config.sizes();
        List<ScenarioResult> results = new ArrayList<>();
        String server;
        try (BenchRig rig = BenchRig.start(config, clock)) {
            server = rig.serverDescription();
            ThroughputScenarios throughput = new ThroughputScenarios(rig, sizes);
            List<Scenario> order = new ArrayList<>(List.of(Scenario.values()));
            order.remove(Scenario.SCALE);
            order.add(Scenario.SCALE);
            order.remove(Scenario.FOOTPRINT);
            order.add(Scenario.FOOTPRINT);
            for (Scenario scenario : order) {
                if (!config.runs(scenario)) {
                    continue;
                }
                log.info("bench: running {}", scenario.cliName());
                long scenarioStart = System.nanoTime();
                ScenarioResult result = switch (scenario) {
                    case BULK -> throughput.bulk();
                    case PARALLEL -> throughput.parallel();
                    case DIAL -> new DialScenario(rig, sizes).run();
                    case ISOLATION -> throughput.isolation();
                    case ADMISSION -> new AdmissionScenario(rig, sizes).run();
                    case SCALE -> new ScaleScenario(rig, sizes).run();
                    case FOOTPRINT -> new FootprintScenario(rig, sizes, config.launcher(),
                            config.footprintJavaOptions()).run();
                };
                log.info("bench: {} done in {} ms", scenario.cliName(), (System.nanoTime() - scenarioStart) / 1_000_000);
                results.add(result);
            }
        }
        results.sort(Comparator.comparing(ScenarioResult::scenario));
        return new BenchReport(Version.version(), startedAt,
                Duration.ofNanos(System.nanoTime() - start), config.quick(), server,
                Runtime.getRuntime().availableProcessors(), loadBefore, loadAverage(),
                "Java " + System.getProperty("java.version") + " " + String.join(" ", jvmFlags()), tunnelTls(), sizes,
                results);
    }

    /** Which TLS the agent leg uses: it decides most of the agent's CPU per byte (see BENCHMARKS.md). */
    private static String tunnelTls() {
        return TlsProviders.preferred() == SslProvider.OPENSSL ? OpenSsl.versionString() : "JDK";
    }

    private static double loadAverage() {
        return ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
    }

    /** The JVM options that change performance figures (GC, JIT tiers, heap). */
    private static List<String> jvmFlags() {
        return ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
                .filter(arg -> arg.startsWith("-XX:") || arg.startsWith("-Xm")).toList();
    }
}
