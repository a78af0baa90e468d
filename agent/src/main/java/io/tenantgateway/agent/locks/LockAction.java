package io.tenantgateway.agent.locks;

import static java.util.Objects.requireNonNull;

import java.time.Instant;

/**
 * One thing the controller did or saw, for the {@code /debug/locks} snapshot.
 *
 * @param at when (the controller's clock)
 * @param kind what: {@code allocated}, {@code allocation-failed}, {@code lock-released},
 *        {@code lock-malformed}, {@code observed}, {@code waiting}
 * @param subject the pod ({@code ns/name}) or node it concerns
 * @param detail why, in words (includes the release reason for {@code lock-released})
 */
public record LockAction(Instant at, String kind, String subject, String detail) {
    public LockAction {
        requireNonNull(at, "at");
        requireNonNull(kind, "kind");
        requireNonNull(subject, "subject");
        requireNonNull(detail, "detail");
    }
}
