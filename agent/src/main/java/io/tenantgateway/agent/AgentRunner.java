package io.tenantgateway.agent;

import java.io.PrintWriter;
import java.time.Clock;
import java.time.Instant;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sun.misc.Signal;
import sun.misc.SignalHandler;

/**
 * Runs an {@link Agent} until SIGTERM/SIGINT: the first signal drains (readiness off, DRAIN to servers, open
 * tunnels may finish) and exits within {@code --shutdown-grace}; a second signal exits at once.
 */
final class AgentRunner {
    private static final Logger log = LoggerFactory.getLogger(AgentRunner.class);
    /** Exit status of a process ended by a second signal, as a shell reports SIGTERM. */
    private static final int FORCED_EXIT = 143;

    private AgentRunner() {
    }

    /** @return whether the agent drained every tunnel before the grace period ended */
    static boolean run(AgentConfig config, PrintWriter err) {
        return run(config, io.tenantgateway.agent.node.NodeIdentity.of(config.nodeName()), err);
    }

    /**
     * @param node this node; when {@linkplain io.tenantgateway.agent.node.NodeIdentity#discovered() discovered}, the
     *        agent reads it through the API in the background, after the tunnel started
     */
    static boolean run(AgentConfig config, io.tenantgateway.agent.node.NodeIdentity node, PrintWriter err) {
        return run(new Agent(config, Clock.systemUTC(), node), err);
    }

    /**
     * Runs {@code agent} until a signal (drained, then closed) or a fatal error a part found after start, which is
     * rethrown for the CLI: a {@link io.tenantgateway.common.config.ConfigException} exits 2, anything else 70.
     */
    static boolean run(Agent agent, PrintWriter err) {
        Clock clock = Clock.systemUTC();
        AgentConfig config = agent.config();
        CountDownLatch stopRequested = new CountDownLatch(1);
        AtomicInteger signals = new AtomicInteger();
        SignalHandler handler = signal -> {
            if (signals.incrementAndGet() == 1) {
                log.info("received SIG{}: draining (send it again to exit at once)", signal.getName());
                stopRequested.countDown();
            } else {
                log.warn("received SIG{} again: exiting now", signal.getName());
                Runtime.getRuntime().halt(FORCED_EXIT);
            }
        };
        Signal.handle(new Signal("TERM"), handler);
        Signal.handle(new Signal("INT"), handler);
        // Other ways out (System.exit elsewhere, an OOM exit) still release sockets and registrations.
        Thread hook = new Thread(agent::close, "agent-shutdown-hook");
        Runtime.getRuntime().addShutdownHook(hook);

        try {
            agent.start();
        } catch (RuntimeException e) {
            // start() closed what it had started; the hook would only log a second "stopped" after the error.
            removeShutdownHook(hook);
            throw e;
        }
        // A configuration error a background part finds later (say, the webhook's port taken once its Secret was
        // read) ends the process like one found at start: exit 2 with the message.
        agent.fatalError().thenRun(stopRequested::countDown);
        try {
            stopRequested.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        RuntimeException fatal = agent.fatalError().getNow(null);
        if (fatal != null) {
            agent.close();
            removeShutdownHook(hook);
            throw fatal;
        }
        Instant deadline = clock.instant().plus(config.shutdownGrace());
        boolean drained = agent.drain(deadline);
        agent.close();
        removeShutdownHook(hook);
        err.flush();
        return drained;
    }

    private static void removeShutdownHook(Thread hook) {
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException alreadyShuttingDown) {
            // The JVM is exiting anyway; the hook's close() is idempotent.
        }
    }
}
