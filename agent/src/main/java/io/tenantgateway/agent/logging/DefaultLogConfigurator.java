package io.tenantgateway.agent.logging;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.Configurator;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.spi.ContextAwareBase;

/**
 * Logback's configuration until the CLI applies the klog and log-format flags ({@link LogSetup}): klog text on
 * stderr, libraries quiet. Found by logback through {@code META-INF/services}; it replaces a {@code logback.xml},
 * whose XML configurator alone loads several hundred classes (Joran and the JDK's XML parser) into every process:
 * the agent's footprint (agent/REFERENCE.md, "Memory budget").
 *
 * <p>A {@code logback.configurationFile} system property or a {@code logback-test.xml} on the class path (the
 * modules' tests) still wins: this configurator then hands over to logback's own.
 *
 * <p>Threading: called once by logback while its context initialises.
 */
public final class DefaultLogConfigurator extends ContextAwareBase implements Configurator {
    @Override
    public ExecutionStatus configure(LoggerContext context) {
        if (System.getProperty("logback.configurationFile") != null
                || DefaultLogConfigurator.class.getClassLoader().getResource("logback-test.xml") != null) {
            return ExecutionStatus.INVOKE_NEXT_IF_ANY;
        }
        StderrStatusListener.install(context, System.err);
        ConsoleAppender<ILoggingEvent> stderr = new ConsoleAppender<>();
        stderr.setContext(context);
        stderr.setName("stderr");
        stderr.setTarget("System.err");
        KlogTextEncoder encoder = new KlogTextEncoder();
        encoder.setContext(context);
        encoder.start();
        stderr.setEncoder(encoder);
        stderr.start();
        Logger root = context.getLogger(Logger.ROOT_LOGGER_NAME);
        root.addAppender(stderr);
        root.setLevel(Level.INFO);
        LogSetup.quietLibraries(context, 0);
        return ExecutionStatus.DO_NOT_INVOKE_NEXT_IF_ANY;
    }
}
