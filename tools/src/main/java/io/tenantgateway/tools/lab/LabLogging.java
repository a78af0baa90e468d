package io.tenantgateway.tools.lab;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.FileAppender;
import io.tenantgateway.agent.logging.LogSetup;
import java.nio.file.Path;
import org.slf4j.LoggerFactory;

/**
 * Sends the lab's logs (four servers, two agents, the simulator: a lot of lines) to a file, so the terminal shows
 * only the lab's progress and table. Levels are {@link LogSetup}'s for the same {@code -v}.
 */
final class LabLogging {
    /** Held here: java.util.logging keeps loggers weakly, and a collected logger forgets its level. */
    private static final java.util.logging.Logger MOCK_WEB_SERVER =
            java.util.logging.Logger.getLogger("io.fabric8.mockwebserver");

    private LabLogging() {
    }

    static void toFile(Path file, int verbosity) {
        LogSetup.configure(LogSetup.Format.TEXT, verbosity);
        LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
        Logger root = context.getLogger(Logger.ROOT_LOGGER_NAME);
        root.detachAndStopAllAppenders();

        FileAppender<ILoggingEvent> appender = new FileAppender<>();
        appender.setContext(context);
        appender.setName("lab-file");
        appender.setFile(file.toString());
        appender.setAppend(true);
        appender.setEncoder(LogSetup.encoder(LogSetup.Format.TEXT, false));
        appender.start();
        root.addAppender(appender);
        // fabric8's mock web server logs every request through java.util.logging, which would reach the terminal.
        MOCK_WEB_SERVER.setLevel(verbosity >= 4 ? java.util.logging.Level.INFO : java.util.logging.Level.WARNING);
    }
}
