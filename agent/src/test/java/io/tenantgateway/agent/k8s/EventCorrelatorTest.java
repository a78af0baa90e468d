package io.tenantgateway.agent.k8s;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ObjectReference;
import io.fabric8.kubernetes.api.model.ObjectReferenceBuilder;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.tenantgateway.agent.k8s.EventCorrelator.Correlation;
import io.tenantgateway.agent.testing.MutableClock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** client-go's correlation, decided without an API: count bumps, combined messages, the spam filter per object. */
class EventCorrelatorTest {
    private final MutableClock clock = new MutableClock(Instant.parse("2026-12-02T10:00:00Z"));
    private final PrometheusRegistry registry = new PrometheusRegistry();
    private final EventCorrelator correlator = new EventCorrelator(clock, registry);

    private static ObjectReference configMap(String name) {
        return new ObjectReferenceBuilder().withApiVersion("v1").withKind("ConfigMap").withNamespace("kube-system")
                .withName(name).withUid("uid-" + name).build();
    }

    /** Correlates, and writes what it says as the API would (names e-1, e-2, …). */
    private Correlation record(ObjectReference involved, String reason, String message) {
        Correlation correlation = correlator.correlate("node-a", involved, "Warning", reason, message);
        if (correlation instanceof Correlation.Create create) {
            correlator.written(create, "e-" + (++created), 1, "t0");
        } else if (correlation instanceof Correlation.Bump bump) {
            correlator.written(bump, bump.name(), bump.count(), bump.firstTimestamp());
        }
        return correlation;
    }

    private int created;

    private double count(EventCorrelator.Result result) {
        return registry.scrape().stream().filter(s -> s.getMetadata().getName().equals("tenant_gateway_events"))
                .map(CounterSnapshot.class::cast).flatMap(s -> s.getDataPoints().stream())
                .filter(p -> p.getLabels().get("result").equals(result.label())).mapToDouble(p -> p.getValue()).sum();
    }

    @Test
    void theSameEventAgainBumpsTheCountOfTheOneWritten() {
        ObjectReference cm = configMap("cm");
        assertThat(record(cm, "Rejected", "bad")).isInstanceOf(Correlation.Create.class);
        assertThat(record(cm, "Rejected", "bad")).isEqualTo(new Correlation.Bump(key(cm, "Rejected", "bad"), "e-1",
                2, "t0", "bad"));
        assertThat(record(cm, "Rejected", "bad")).extracting(c -> ((Correlation.Bump) c).count()).isEqualTo(3);
        // Another reason, or another object, is another Event.
        assertThat(record(cm, "Other", "bad")).isInstanceOf(Correlation.Create.class);
        assertThat(record(configMap("other"), "Rejected", "bad")).isInstanceOf(Correlation.Create.class);
        assertThat(created).isEqualTo(3);
        assertThat(count(EventCorrelator.Result.CREATED)).isEqualTo(3);
        assertThat(count(EventCorrelator.Result.COUNTED)).isEqualTo(2);
    }

    private static String key(ObjectReference o, String reason, String message) {
        return String.join("\u0000", EventRecorder.COMPONENT, "node-a", o.getKind(), o.getNamespace(), o.getName(),
                o.getUid(), o.getApiVersion(), "Warning", reason, "", message);
    }

    @Test
    void theTenthDistinctMessageIsCombinedAndLaterOnesBumpTheCombinedEvent() {
        ObjectReference cm = configMap("cm");
        List<Correlation> correlations = new ArrayList<>();
        for (int i = 1; i <= 12; i++) {
            correlations.add(record(cm, "Rejected", "error " + i));
        }
        assertThat(correlations.subList(0, 9)).allSatisfy(c -> assertThat(c).isInstanceOf(Correlation.Create.class));
        assertThat(correlations.get(9)).isInstanceOfSatisfying(Correlation.Create.class, c -> assertThat(c.message())
                .isEqualTo("(combined from similar events): error 10"));
        assertThat(correlations.get(11)).isInstanceOfSatisfying(Correlation.Bump.class, c -> {
            assertThat(c.name()).isEqualTo("e-10");
            assertThat(c.count()).isEqualTo(3);
            assertThat(c.message()).isEqualTo("(combined from similar events): error 12");
        });
        assertThat(created).as("9 distinct Events and the combined one").isEqualTo(EventCorrelator.MAX_DISTINCT_MESSAGES);

        // Ten minutes without one: the record starts afresh.
        clock.advance(EventCorrelator.AGGREGATION_WINDOW.plusSeconds(1));
        assertThat(record(cm, "Rejected", "error 13")).isInstanceOfSatisfying(Correlation.Create.class,
                c -> assertThat(c.message()).isEqualTo("error 13"));
    }

    @Test
    void eachObjectGetsABurstOf25ThenOnePerFiveMinutes() {
        ObjectReference cm = configMap("cm");
        for (int i = 0; i < EventCorrelator.SPAM_BURST; i++) {
            assertThat(record(cm, "Rejected", "same")).isNotInstanceOf(Correlation.Drop.class);
        }
        assertThat(record(cm, "Rejected", "same")).isInstanceOf(Correlation.Drop.class);
        assertThat(record(cm, "Another", "different")).as("per object, whatever the reason")
                .isInstanceOf(Correlation.Drop.class);
        assertThat(record(configMap("other"), "Rejected", "same")).as("another object has its own bucket")
                .isInstanceOf(Correlation.Create.class);

        clock.advance(EventCorrelator.SPAM_REFILL.minusSeconds(1));
        assertThat(record(cm, "Rejected", "same")).isInstanceOf(Correlation.Drop.class);
        clock.advance(Duration.ofSeconds(1));
        // Dropped ones were counted too: the count bump says how often it happened.
        assertThat(record(cm, "Rejected", "same")).isInstanceOfSatisfying(Correlation.Bump.class,
                c -> assertThat(c.count()).isEqualTo(EventCorrelator.SPAM_BURST + 3));
        assertThat(record(cm, "Rejected", "same")).isInstanceOf(Correlation.Drop.class);
        assertThat(count(EventCorrelator.Result.DROPPED)).isEqualTo(4);

        clock.advance(Duration.ofHours(3)); // refills to the burst, no further
        for (int i = 0; i < EventCorrelator.SPAM_BURST; i++) {
            assertThat(record(cm, "Rejected", "same")).isNotInstanceOf(Correlation.Drop.class);
        }
        assertThat(record(cm, "Rejected", "same")).isInstanceOf(Correlation.Drop.class);
    }

    @Test
    void theCachesKeepTheMostRecentlyUsedKeysOnly() {
        ObjectReference first = configMap("first");
        for (int i = 0; i < EventCorrelator.SPAM_BURST; i++) {
            record(first, "Rejected", "same");
        }
        assertThat(record(first, "Rejected", "same")).isInstanceOf(Correlation.Drop.class);
        for (int i = 0; i < EventCorrelator.MAX_KEYS; i++) {
            record(configMap("cm-" + i), "Rejected", "same");
        }
        // Evicted from every cache: a full bucket and no Event to bump.
        assertThat(record(first, "Rejected", "same")).isInstanceOf(Correlation.Create.class);
    }
}
