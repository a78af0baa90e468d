package io.tenantgateway.agent.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.tenantgateway.certs.CertificateFileException;
import io.tenantgateway.common.config.ConfigException;
import io.tenantgateway.common.net.PortInUseException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * One rule for every command: a {@link ConfigException} anywhere in a failure's causes is the user's to fix (exit 2,
 * one line); anything else is a bug (exit 70, with the stack trace).
 */
class ExitCodesTest {

    /** A command whose call() throws what the test gives it. */
    @Command(name = "fails")
    static final class Fails implements Callable<Integer> {
        private final RuntimeException failure;

        Fails(RuntimeException failure) {
            this.failure = failure;
        }

        @Override
        public Integer call() {
            throw failure;
        }
    }

    private record Run(int exitCode, String err) {
    }

    private static Run run(RuntimeException failure) {
        StringWriter err = new StringWriter();
        CommandLine cli = ExitCodes.configure(new CommandLine(new Fails(failure)));
        cli.setErr(new PrintWriter(err, true));
        cli.setOut(new PrintWriter(new StringWriter(), true));
        return new Run(cli.execute(), err.toString());
    }

    @Test
    void aConfigExceptionExitsTwoWithOneLineAndNoStackTrace() {
        Run run = run(new ConfigException("--sync-interval", "soon", "a duration such as 5m, 90s, 1h30m, 250ms"));

        assertThat(run.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(run.err()).isEqualTo("error: --sync-interval: soon (expected: a duration such as 5m, 90s,"
                + " 1h30m, 250ms)" + System.lineSeparator());
    }

    @Test
    void aConfigExceptionWrappedInAnotherExitsTwoWithTheInnerMessage() {
        // A part that undoes its start wraps what failed it (Lifecycle: "webhook: start failed: ...").
        Run run = run(new IllegalStateException("webhook: start failed",
                new RuntimeException("bind", new PortInUseException("--webhook-listen", "0.0.0.0", 9443, null))));

        assertThat(run.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(run.err().strip()).isEqualTo("error: --webhook-listen: 0.0.0.0:9443 is in use");
        assertThat(run.err()).doesNotContain("\tat ", "Exception");
    }

    @Test
    void aPlainIllegalArgumentExceptionIsABugExitingSeventyWithItsStackTrace() {
        Run run = run(new IllegalArgumentException("index: -1 (expected: >= 0)"));

        assertThat(run.exitCode()).isEqualTo(ExitCodes.INTERNAL);
        assertThat(run.err()).startsWith("internal error: java.lang.IllegalArgumentException: index: -1"
                + " (expected: >= 0)" + System.lineSeparator());
        assertThat(run.err()).contains("\tat " + ExitCodesTest.class.getName() + ".");
    }

    @Test
    void anyOtherExceptionIsABugToo() {
        Run run = run(new IllegalStateException("must be called on the event loop"));

        assertThat(run.exitCode()).isEqualTo(ExitCodes.INTERNAL);
        assertThat(run.err()).startsWith("internal error: java.lang.IllegalStateException: must be called on the"
                + " event loop").contains("\tat ");
    }

    @Test
    void aCertificateFileThatCannotBeUsedIsAConfigException() {
        Run run = run(new CertificateFileException(Path.of("/etc/tg/ca.crt"), "file not found"));

        assertThat(run.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(run.err().strip()).isEqualTo("error: /etc/tg/ca.crt: file not found");
    }

    @Test
    void aMalformedCommandLineExitsTwo() {
        StringWriter err = new StringWriter();
        CommandLine cli = ExitCodes.configure(new CommandLine(new Fails(new IllegalStateException("not reached"))));
        cli.setErr(new PrintWriter(err, true));

        int code = cli.execute("--no-such-flag");

        assertThat(code).isEqualTo(ExitCodes.USAGE);
        assertThat(err.toString().strip()).isEqualTo("error: unknown flag: --no-such-flag");
    }

    /** Parses another command's flags inside call(), as {@code doctor} parses {@code run}'s. */
    @Command(name = "nested")
    static final class ParsesInside implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Override
        public Integer call() {
            try {
                new CommandLine(new Fails(null)).parseArgs("--proxy-server-prot=8132");
            } catch (CommandLine.ParameterException e) {
                throw new CommandLine.ExecutionException(spec.commandLine(), GoFlags.message(e), e);
            }
            return ExitCodes.OK;
        }
    }

    @Test
    void aParameterExceptionFromACommandLineParsedInsideACommandExitsTwoWithOneLine() {
        StringWriter err = new StringWriter();
        CommandLine cli = ExitCodes.configure(new CommandLine(new ParsesInside()));
        cli.setErr(new PrintWriter(err, true));

        int code = cli.execute();

        assertThat(code).isEqualTo(ExitCodes.USAGE);
        assertThat(err.toString()).isEqualTo("error: unknown flag: --proxy-server-prot" + System.lineSeparator());
    }

    @Test
    void theExitCodeMapperAgrees() {
        assertThat(ExitCodes.forException(ConfigException.of("--config", "/x: file not found")))
                .isEqualTo(ExitCodes.USAGE);
        assertThat(ExitCodes.forException(new IllegalStateException("start failed",
                ConfigException.of("--config", "/x: file not found")))).isEqualTo(ExitCodes.USAGE);
        assertThat(ExitCodes.forException(new CommandLine.ParameterException(new CommandLine(
                new Fails(null)), "Missing required option: '--out=<out>'"))).isEqualTo(ExitCodes.USAGE);
        assertThat(ExitCodes.forException(new IllegalArgumentException("no"))).isEqualTo(ExitCodes.INTERNAL);
        assertThat(ExitCodes.forException(new NullPointerException("x"))).isEqualTo(ExitCodes.INTERNAL);
    }
}
