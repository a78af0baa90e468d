package io.tenantgateway.agent;

import static org.assertj.core.api.Assertions.assertThat;

import io.tenantgateway.agent.cli.ExitCodes;
import io.tenantgateway.agent.health.HealthCheck;
import io.tenantgateway.agent.node.NodeIdentity;
import io.tenantgateway.agent.part.Part;
import io.tenantgateway.agent.part.PartContext;
import io.tenantgateway.agent.part.Plan;
import io.tenantgateway.certs.testing.TestPki;
import io.tenantgateway.common.config.ConfigException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * What a part's failure does to the process, through the real runner and the CLI's exit-code mapping: a bad value
 * (a {@link ConfigException}) exits 2 with one line, wherever it is found (here: in a background start, after the
 * agent started and the tunnel runs); anything else is a bug and exits 70 with its stack trace. The agent runs for
 * real (tunnel, health and admin ports on loopback); only the failing part is the test's.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PartFailureExitCodesTest {
    @TempDir
    Path dir;

    @Test
    void aBadValueFoundByABackgroundPartExitsTwoWithOneLine() throws Exception {
        Run run = run(context -> context.inBackground("failing-ready", "failing part", () -> {
            throw new ConfigException("--failing-threshold", "-3", ">= 0");
        }, started -> HealthCheck.Result.OK));

        assertThat(run.exitCode).as(run.err).isEqualTo(ExitCodes.USAGE);
        assertThat(run.err.strip()).isEqualTo("error: --failing-threshold: -3 (expected: >= 0)");
    }

    @Test
    void anUnexpectedIllegalArgumentExceptionInsideAPartExitsSeventyWithItsStackTrace() throws Exception {
        Run run = run(context -> {
            throw new IllegalArgumentException("index -1 out of the table");
        });

        assertThat(run.exitCode).as(run.err).isEqualTo(ExitCodes.INTERNAL);
        assertThat(run.err).contains("internal error: java.lang.IllegalArgumentException: index -1 out of the table")
                .contains("\tat " + PartFailureExitCodesTest.class.getName());
    }

    @Test
    void aBugInABackgroundStartExitsSeventyToo() throws Exception {
        Run run = run(context -> context.inBackground("failing-ready", "failing part", () -> {
            AutoCloseable missing = null;
            missing.close(); // NullPointerException: a bug, not the API away
            return missing;
        }, started -> HealthCheck.Result.OK));

        assertThat(run.exitCode).as(run.err).isEqualTo(ExitCodes.INTERNAL);
        assertThat(run.err).contains("internal error: java.lang.NullPointerException").contains("\tat ");
    }

    private record Run(int exitCode, String err) {
    }

    @FunctionalInterface
    private interface Start {
        void start(PartContext context) throws Exception;
    }

    /** {@code run} as the CLI runs it (ExitCodes' handlers), with one extra part that starts with {@code start}. */
    private Run run(Start start) throws Exception {
        TestPki.Files pki = TestPki.create("part-failure").writeTo(dir.resolve("pki"));
        AgentConfig config = AgentCommand.parse("--ca-cert=" + pki.caCert(), "--proxy-server-host=127.0.0.1",
                "--proxy-server-port=1", "--health-server-host=127.0.0.1", "--health-server-port=0",
                "--admin-bind-address=127.0.0.1", "--admin-server-port=0", "--shutdown-grace=1s").toConfig();
        Part failing = new FailingPart(start);
        @Command(name = "run")
        class RunWithFailingPart implements Callable<Integer> {
            @Override
            public Integer call() {
                Agent agent = new Agent(config, Clock.systemUTC(), NodeIdentity.of(config.nodeName()),
                        List.of(failing));
                return AgentRunner.run(agent, new PrintWriter(new StringWriter())) ? ExitCodes.OK : ExitCodes.FAILED;
            }
        }
        StringWriter err = new StringWriter();
        CommandLine commandLine = ExitCodes.configure(new CommandLine(new RunWithFailingPart()));
        commandLine.setErr(new PrintWriter(err, true));
        int code = commandLine.execute();
        return new Run(code, err.toString());
    }

    private record FailingPart(Start start) implements Part {
        @Override
        public Plan plan() {
            return Plan.of("failing").check("failing-ready");
        }

        @Override
        public void start(PartContext context) throws Exception {
            start.start(context);
        }
    }
}
