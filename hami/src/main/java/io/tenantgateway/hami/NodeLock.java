package io.tenantgateway.hami;

import static java.util.Objects.requireNonNull;

import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoUnit;

/**
 * The value of HAMi's node lock annotation {@code hami.io/mutex.lock}:
 * {@code <RFC3339 time>,<namespace>,<pod>}, or the legacy bare RFC3339 time (no owner).
 *
 * <p>Parsing follows the scheduler: a value without a comma is a bare time; a value with commas must
 * have exactly three parts ({@code "malformed lock annotation: expected 3 parts, got N"}). The time is read with
 * or without fractional seconds: HAMi v2.10 and earlier write Go's {@code time.RFC3339} (seconds), later releases
 * {@code time.RFC3339Nano} (hami/README.md, "Node lock").
 *
 * @param lockedAt when the lock was taken (as precise as the writer wrote it)
 * @param namespace the holder's namespace; empty for a legacy value
 * @param podName the holder's name; empty for a legacy value
 */
public record NodeLock(Instant lockedAt, String namespace, String podName) {
    private static final String SEPARATOR = ",";
    /** The most characters of a part of the value an error text quotes (escaped, as Go's {@code %q}). */
    private static final int QUOTED = 200;
    /** Go's time.RFC3339 layout as the scheduler writes it: seconds, numeric offset or {@code Z}. */
    private static final DateTimeFormatter RFC3339 = DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ssXXX");

    public NodeLock {
        requireNonNull(lockedAt, "lockedAt");
        requireNonNull(namespace, "namespace");
        requireNonNull(podName, "podName");
        if (namespace.isEmpty() != podName.isEmpty()) {
            throw new IllegalArgumentException("namespace/podName: \"" + namespace + "\"/\"" + podName
                    + "\" (expected: both set or both empty)");
        }
    }

    /** A lock held by {@code namespace/podName}, taken at {@code lockedAt} (truncated to seconds, as on the wire). */
    public static NodeLock heldBy(Instant lockedAt, String namespace, String podName) {
        requireNonNull(namespace, "namespace");
        requireNonNull(podName, "podName");
        if (namespace.isEmpty() || podName.isEmpty()) {
            throw new IllegalArgumentException("holder: \"" + namespace + "/" + podName
                    + "\" (expected: non-empty namespace and pod name)");
        }
        return new NodeLock(lockedAt.truncatedTo(ChronoUnit.SECONDS), namespace, podName);
    }

    /**
     * Parses an annotation value.
     *
     * @throws MalformedNodeLockException with the scheduler's message for a wrong part count, or a
     *         message naming the time that is not RFC3339
     */
    public static NodeLock parse(String value) throws MalformedNodeLockException {
        requireNonNull(value, "value");
        if (Annotations.exceedsSizeLimit(value)) {
            throw new MalformedNodeLockException(value, Annotations.sizeLimitMessage(Annotations.NODE_LOCK, value));
        }
        if (!value.contains(SEPARATOR)) {
            return new NodeLock(parseTime(value, value), "", "");
        }
        String[] parts = value.split(SEPARATOR, -1);
        if (parts.length != 3) {
            throw new MalformedNodeLockException(value,
                    "malformed lock annotation: expected 3 parts, got " + parts.length);
        }
        Instant time = parseTime(value, parts[0]);
        if (parts[1].isEmpty() != parts[2].isEmpty()) {
            throw new MalformedNodeLockException(value, "malformed lock annotation: holder "
                    + GoStrconv.quoteAbbreviated(parts[1] + "/" + parts[2], QUOTED) + " (expected: <namespace>,<pod>)");
        }
        return new NodeLock(time, parts[1], parts[2]);
    }

    private static Instant parseTime(String value, String time) throws MalformedNodeLockException {
        try {
            return OffsetDateTime.parse(time, DateTimeFormatter.ISO_OFFSET_DATE_TIME).toInstant();
        } catch (DateTimeParseException e) {
            throw new MalformedNodeLockException(value,
                    "malformed lock annotation: time " + GoStrconv.quoteAbbreviated(time, QUOTED)
                            + " (expected: RFC3339)");
        }
    }

    /**
     * The wire form: {@code <RFC3339 UTC>,<ns>,<pod>}, or the bare time for a legacy lock; seconds, as every
     * release {@code --hami-compat} names (v2.9, v2.10) writes it.
     */
    public String encode() {
        String time = RFC3339.format(lockedAt.truncatedTo(ChronoUnit.SECONDS).atOffset(ZoneOffset.UTC));
        return hasHolder() ? time + SEPARATOR + namespace + SEPARATOR + podName : time;
    }

    /** False for a legacy bare-time value, which names no pod. */
    public boolean hasHolder() {
        return !podName.isEmpty();
    }

    /** True when this lock names exactly {@code namespace/podName} (the value ends with {@code ,<ns>,<pod>}). */
    public boolean isHeldBy(String namespace, String podName) {
        return hasHolder() && this.namespace.equals(namespace) && this.podName.equals(podName);
    }

    /** {@code namespace/pod}, or {@code -} for a legacy lock; for logs and events. */
    public String holder() {
        return hasHolder() ? namespace + "/" + podName : "-";
    }
}
