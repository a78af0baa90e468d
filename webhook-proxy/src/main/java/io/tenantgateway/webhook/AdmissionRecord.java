package io.tenantgateway.webhook;

import static java.util.Objects.requireNonNull;

import java.time.Duration;
import java.time.Instant;
import java.util.Locale;

/**
 * One admission as the webhook answered it, without the pod spec (which can carry secrets in env values).
 *
 * @param time when the request arrived
 * @param uid the AdmissionReview request uid ({@code ""} when the request was not a readable AdmissionReview)
 * @param namespace the request's namespace
 * @param name the pod's name (or {@code generateName} prefix)
 * @param operation {@code CREATE}, {@code UPDATE}, ...
 * @param route who decided
 * @param decision {@code allowed}, {@code denied} or {@code errored}
 * @param code the status code of the answer
 * @param message the status message ({@code ""} for a plain allow)
 * @param patchOperations how many JSON patch operations the answer carried
 * @param warnings how many admission warnings the answer carried
 * @param duration time from arrival to answer
 */
public record AdmissionRecord(Instant time, String uid, String namespace, String name, String operation,
        Route route, String decision, int code, String message, int patchOperations, int warnings,
        Duration duration) {

    /** Who produced the answer. */
    public enum Route {
        /** The built-in HAMi mutator. */
        BUILT_IN,
        /** The upstream webhook's answer, passed through. */
        UPSTREAM,
        /** The upstream failed; the built-in mutator answered (policy {@code fallback}). */
        FALLBACK,
        /** The upstream failed; allowed unchanged with a warning (policy {@code fail-open}). */
        FAIL_OPEN,
        /** The upstream failed; errored 503 (policy {@code fail-closed}). */
        FAIL_CLOSED,
        /** Not an admission request we could read: rejected before any decision. */
        REJECTED;

        public String label() {
            return name().toLowerCase(Locale.ROOT).replace('_', '-');
        }
    }

    public AdmissionRecord {
        requireNonNull(time, "time");
        requireNonNull(route, "route");
        requireNonNull(duration, "duration");
        uid = uid == null ? "" : uid;
        namespace = namespace == null ? "" : namespace;
        name = name == null ? "" : name;
        operation = operation == null ? "" : operation;
        decision = requireNonNull(decision, "decision");
        message = message == null ? "" : message;
    }
}
