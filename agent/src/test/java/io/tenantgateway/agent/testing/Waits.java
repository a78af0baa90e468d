package io.tenantgateway.agent.testing;

import java.time.Duration;

/**
 * How long the agent's tests (and tools', through the test-jar) wait for what should happen. One generous ceiling,
 * because a busy two-core CI machine runs a cold TLS handshake, a child JVM's first request or an informer's first
 * list many times slower than a laptop: a wait that passes on a quiet machine must not fail on a loaded one. A test
 * that proves a timeout gives the product a short one and makes the peer never answer, so that only the timeout can
 * end the wait; it never relies on the machine being fast.
 */
public final class Waits {
    /** The ceiling for anything a test expects to happen: an answer, a connection, a line logged, a state reached. */
    public static final Duration WAIT = Duration.ofSeconds(30);

    private Waits() {
    }
}
