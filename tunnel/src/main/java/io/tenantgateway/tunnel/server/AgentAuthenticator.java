package io.tenantgateway.tunnel.server;

import static java.util.Objects.requireNonNull;

import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Checks an agent's bearer token (upstream: a TokenReview whose user must be
 * {@code system:serviceaccount:<ns>:<sa>}). Called on an event loop, so implementations must not block: return a
 * stage completed later by whatever does the I/O.
 */
@FunctionalInterface
public interface AgentAuthenticator {
    /**
     * Completes normally when the token belongs to an allowed agent; completes exceptionally otherwise, with a
     * message that is sent to the agent in the UNAUTHENTICATED status (never echo the token).
     */
    CompletionStage<Void> authenticate(String agentId, String bearerToken);

    /** Accepts exactly the given tokens (tests, the lab). */
    static AgentAuthenticator staticTokens(Set<String> tokens) {
        Set<String> allowed = Set.copyOf(requireNonNull(tokens, "tokens"));
        return (agentId, token) -> allowed.contains(token)
                ? CompletableFuture.completedFuture(null)
                : CompletableFuture.failedFuture(new SecurityException("token rejected for agent " + agentId));
    }
}
