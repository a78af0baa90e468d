package io.tenantgateway.agent.logging;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.core.status.ErrorStatus;
import ch.qos.logback.core.status.InfoStatus;
import ch.qos.logback.core.status.StatusUtil;
import ch.qos.logback.core.status.WarnStatus;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class StderrStatusListenerTest {
    @Test
    void writesWarningsAndErrorsThatCameBeforeAndAfterItWasInstalledAndNothingElse() {
        LoggerContext context = new LoggerContext();
        context.getStatusManager().add(new InfoStatus("configured in code", this));
        context.getStatusManager().add(new WarnStatus("appender [file] has no encoder", this));
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);

        StderrStatusListener.install(context, out);
        // Logback skips its own StatusPrinter (and the java.time classes it loads) only for a context with a listener.
        assertThat(StatusUtil.contextHasStatusListener(context)).isTrue();
        context.getStatusManager().add(new InfoStatus("started", this));
        context.getStatusManager().add(new ErrorStatus("could not open /var/log/agent.log", this,
                new IOException("permission denied")));

        String written = bytes.toString(StandardCharsets.UTF_8);
        assertThat(written).startsWith("logback: WARN: appender [file] has no encoder\n"
                + "logback: ERROR: could not open /var/log/agent.log\n"
                + "java.io.IOException: permission denied\n");
        assertThat(written).doesNotContain("configured in code", "started");
    }
}
