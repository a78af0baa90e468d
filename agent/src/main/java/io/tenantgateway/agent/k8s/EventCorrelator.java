package io.tenantgateway.agent.k8s;

import static java.util.Objects.requireNonNull;

import io.fabric8.kubernetes.api.model.ObjectReference;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * What client-go's {@code EventCorrelator} does for kubelet and controllers, for every Event this agent records
 * (one instance per agent, shared by every {@link EventRecorder}): the same Event again bumps the count of the one
 * already written instead of creating another, many different messages for one object and reason are combined into
 * one Event, and a token bucket per source and object drops what is still too much. Without it, a ConfigMap changed
 * 100 times a second made one Event per rejected version on every node (issue 31).
 *
 * <ol>
 *   <li><b>Aggregation</b>, keyed by source (component, host), involved object (kind, namespace, name, uid,
 *       apiVersion), type and reason: once {@value #MAX_DISTINCT_MESSAGES} different messages were seen for a key
 *       within {@link #AGGREGATION_WINDOW} of each other, the message becomes {@value #COMBINED} plus the newest
 *       one, and all such Events are one Event.</li>
 *   <li><b>Deduplication</b>, keyed as above plus the field path and message: an Event seen before is a count
 *       bump (count + 1, lastTimestamp, message) on the Event written for it.</li>
 *   <li><b>Spam filter</b>, keyed by source and involved object: a bucket of {@value #SPAM_BURST} tokens, one more
 *       every {@link #SPAM_REFILL}; an Event (new or a count bump) that finds the bucket empty is dropped.</li>
 * </ol>
 * So one object gets at most {@value #SPAM_BURST} Event writes in a burst and one per 5 minutes after that, and at
 * most {@value #MAX_DISTINCT_MESSAGES} Events per reason in 10 minutes (9 distinct, then the combined one).
 *
 * <p>Each of the three caches keeps the {@value #MAX_KEYS} most recently used keys (client-go: 4,096; this agent's
 * heap is 48 to 64 MiB): at most about 2.5 MiB with the longest names and messages, a few KiB in practice. An
 * evicted key starts afresh. Messages are kept as hashes for aggregation.
 *
 * <p>Thread-safe: every method is synchronized and quick (no I/O).
 */
public final class EventCorrelator {
    /** Events a source may write about one object at once (client-go's {@code defaultSpamBurst}). */
    public static final int SPAM_BURST = 25;
    /** One more token per this interval (client-go's {@code defaultSpamQPS}, 1/300). */
    public static final Duration SPAM_REFILL = Duration.ofMinutes(5);
    /** Distinct messages per object and reason before they are combined (client-go's default). */
    public static final int MAX_DISTINCT_MESSAGES = 10;
    /** How long an aggregation record lives without a new Event (client-go: 600 s). */
    public static final Duration AGGREGATION_WINDOW = Duration.ofMinutes(10);
    /** Keys kept by each cache. */
    public static final int MAX_KEYS = 1024;
    /** client-go's prefix of a combined Event's message. */
    public static final String COMBINED = "(combined from similar events): ";

    /** {@code tenant_gateway_events_total}'s {@code result} label. */
    enum Result {
        CREATED, COUNTED, DROPPED, FAILED;

        String label() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    private final Clock clock;
    private final Counter events;
    private final Map<String, Aggregation> aggregations = lru();
    private final Map<String, Observation> observations = lru();
    private final Map<String, Bucket> buckets = lru();

    /** Without metrics (a component's own recorder in tests). */
    public EventCorrelator(Clock clock) {
        this(clock, null);
    }

    /** @param registry where {@code tenant_gateway_events_total{result}} goes; {@code null}: nowhere */
    public EventCorrelator(Clock clock, PrometheusRegistry registry) {
        this.clock = requireNonNull(clock, "clock");
        Counter.Builder builder = Counter.builder().name("tenant_gateway_events_total")
                .help("Kubernetes Events this agent recorded, by result: created (a new Event), counted (the count of"
                        + " one already written bumped), dropped (the spam filter: too many about one object),"
                        + " failed (the API did not take it)")
                .labelNames("result");
        this.events = registry == null ? builder.build() : builder.register(registry);
        for (Result result : Result.values()) {
            events.initLabelValues(result.label());
        }
    }

    private static <V> Map<String, V> lru() {
        return new LinkedHashMap<>(16, 0.75f, true) {
            private static final long serialVersionUID = 1L;

            @Override
            protected boolean removeEldestEntry(Map.Entry<String, V> eldest) {
                return size() > MAX_KEYS;
            }
        };
    }

    /** What to write for one Event. */
    public sealed interface Correlation {
        /** Write nothing: the spam filter dropped it. */
        record Drop() implements Correlation {
        }

        /** Create a new Event with {@code message} (perhaps combined) and count 1. */
        record Create(String key, String message) implements Correlation {
        }

        /**
         * Bump the Event {@code name} (created at {@code firstTimestamp}) to {@code count}, with {@code message}; if
         * it is gone, create it again under that name with that count.
         */
        record Bump(String key, String name, int count, String firstTimestamp, String message)
                implements Correlation {
        }
    }

    /**
     * Decides what an Event becomes.
     *
     * @param host {@code source.host}
     */
    public synchronized Correlation correlate(String host, ObjectReference involved, String type, String reason,
            String message) {
        Instant now = clock.instant();
        String object = String.join("\u0000", EventRecorder.COMPONENT, host, nonNull(involved.getKind()),
                nonNull(involved.getNamespace()), nonNull(involved.getName()), nonNull(involved.getUid()),
                nonNull(involved.getApiVersion()));
        String aggregateKey = String.join("\u0000", object, type, reason);

        Aggregation aggregation = aggregations.get(aggregateKey);
        if (aggregation == null || Duration.between(aggregation.last, now).compareTo(AGGREGATION_WINDOW) > 0) {
            aggregation = new Aggregation();
        }
        aggregation.messages.add(message.hashCode());
        aggregation.last = now;
        aggregations.put(aggregateKey, aggregation);
        String key;
        String written;
        if (aggregation.messages.size() < MAX_DISTINCT_MESSAGES) {
            key = String.join("\u0000", aggregateKey, nonNull(involved.getFieldPath()), message);
            written = message;
        } else {
            aggregation.messages.remove(aggregation.messages.iterator().next()); // stays at the threshold
            key = aggregateKey; // every combined Event is one Event
            written = COMBINED + message;
        }

        Observation seen = observations.get(key);
        Correlation correlation = seen == null ? new Correlation.Create(key, written)
                : new Correlation.Bump(key, seen.name, seen.count + 1, seen.firstTimestamp, written);
        if (seen != null) {
            seen.count++; // as client-go: counted before the write, so a failed bump is not retried
        }

        Bucket bucket = buckets.computeIfAbsent(object, ignored -> new Bucket(now));
        if (!bucket.tryTake(now)) {
            events.labelValues(Result.DROPPED.label()).inc();
            return new Correlation.Drop();
        }
        return correlation;
    }

    /** Records the Event the API wrote for {@code key} (its name, count and first timestamp). */
    public synchronized void written(Correlation written, String name, int count, String firstTimestamp) {
        if (written instanceof Correlation.Create create) {
            observations.put(create.key(), new Observation(name, count, firstTimestamp));
            events.labelValues(Result.CREATED.label()).inc();
        } else if (written instanceof Correlation.Bump bump) {
            observations.put(bump.key(), new Observation(name, count, firstTimestamp));
            events.labelValues(Result.COUNTED.label()).inc();
        }
    }

    /** Counts an Event the API did not take. */
    public void failed() {
        events.labelValues(Result.FAILED.label()).inc();
    }

    private static String nonNull(String value) {
        return Objects.requireNonNullElse(value, "");
    }

    private static final class Aggregation {
        final Set<Integer> messages = new HashSet<>();
        Instant last;
    }

    private static final class Observation {
        final String name;
        int count;
        final String firstTimestamp;

        Observation(String name, int count, String firstTimestamp) {
            this.name = name;
            this.count = count;
            this.firstTimestamp = firstTimestamp;
        }
    }

    /** client-go's passive token bucket: starts full, refills continuously. */
    private static final class Bucket {
        private double tokens = SPAM_BURST;
        private Instant refilled;

        Bucket(Instant now) {
            this.refilled = now;
        }

        boolean tryTake(Instant now) {
            if (now.isAfter(refilled)) {
                double elapsed = Duration.between(refilled, now).toNanos();
                tokens = Math.min(SPAM_BURST, tokens + elapsed / SPAM_REFILL.toNanos());
                refilled = now;
            }
            if (tokens < 1) {
                return false;
            }
            tokens -= 1;
            return true;
        }
    }
}
