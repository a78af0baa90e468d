package io.tenantgateway.agent.k8s;

import static java.util.Objects.requireNonNull;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectReference;
import io.fabric8.kubernetes.api.model.ObjectReferenceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes core/v1 Events through the client, the way kubelet's recorder does: named {@code <object>.<hex>}, with
 * {@code source.component}/{@code reportingComponent} set to this agent, and every one through the agent's
 * {@link EventCorrelator} (a repeat bumps the count of the Event already written, with a JSON merge patch; many
 * messages are combined; a burst about one object is cut). Blocking: call it from a worker thread, never from an
 * event loop or informer callback. A failed write is logged and otherwise ignored: an Event never decides an action.
 */
public final class EventRecorder {
    /** {@code source.component} and {@code reportingComponent} of every Event the agent records. */
    public static final String COMPONENT = "tenant-gateway-agent";
    public static final String NORMAL = "Normal";
    public static final String WARNING = "Warning";
    /** Events about cluster-scoped objects (nodes) go here, as kubelet's do. */
    static final String CLUSTER_SCOPED_NAMESPACE = "default";
    private static final int MAX_MESSAGE_LENGTH = 1024;
    private static final DateTimeFormatter RFC3339 = DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ssXXX");
    private static final Logger log = LoggerFactory.getLogger(EventRecorder.class);

    private final KubernetesClient client;
    private final String host;
    private final Clock clock;
    private final EventCorrelator correlator;
    private final AtomicLong sequence = new AtomicLong();

    /** A recorder with a correlator of its own (a component built alone, in tests). */
    public EventRecorder(KubernetesClient client, String host, Clock clock) {
        this(client, host, clock, new EventCorrelator(clock));
    }

    /**
     * @param host {@code source.host}, this node's name
     * @param correlator the agent's one correlator, shared by all its recorders
     */
    public EventRecorder(KubernetesClient client, String host, Clock clock, EventCorrelator correlator) {
        this.client = requireNonNull(client, "client");
        this.host = requireNonNull(host, "host");
        this.clock = requireNonNull(clock, "clock");
        this.correlator = requireNonNull(correlator, "correlator");
    }

    /** Records an Event about {@code object} (a namespaced object, or a node). */
    public void record(HasMetadata object, String type, String reason, String message) {
        requireNonNull(object, "object");
        record(reference(object), type, reason, message);
    }

    /** Records an Event about the object {@code involved} refers to. */
    public void record(ObjectReference involved, String type, String reason, String message) {
        try {
            create(involved, type, reason, message);
        } catch (KubernetesClientException e) {
            log.warn("event not recorded kind={} name={} reason={} code={}", involved.getKind(), involved.getName(),
                    reason, e.getCode(), e);
        }
    }

    /**
     * Writes an Event about {@code object}, for a caller that retries until it is written (the allocator's deferred
     * failure bookkeeping). One the correlator drops (too many about the object) counts as written.
     *
     * @throws KubernetesClientException when the API did not take it
     */
    public void create(HasMetadata object, String type, String reason, String message) {
        requireNonNull(object, "object");
        create(reference(object), type, reason, message);
    }

    private static ObjectReference reference(HasMetadata object) {
        return new ObjectReferenceBuilder()
                .withApiVersion(object.getApiVersion())
                .withKind(object.getKind())
                .withNamespace(object.getMetadata().getNamespace())
                .withName(object.getMetadata().getName())
                .withUid(object.getMetadata().getUid())
                .withResourceVersion(object.getMetadata().getResourceVersion())
                .build();
    }

    private void create(ObjectReference involved, String type, String reason, String message) {
        requireNonNull(involved, "involved");
        requireNonNull(type, "type");
        requireNonNull(reason, "reason");
        requireNonNull(message, "message");
        String text = message.length() > MAX_MESSAGE_LENGTH ? message.substring(0, MAX_MESSAGE_LENGTH) : message;
        EventCorrelator.Correlation correlation = correlator.correlate(host, involved, type, reason, text);
        try {
            write(involved, type, reason, correlation);
        } catch (KubernetesClientException e) {
            correlator.failed();
            throw e;
        }
    }

    private void write(ObjectReference involved, String type, String reason,
            EventCorrelator.Correlation correlation) {
        Instant now = clock.instant();
        String namespace = involved.getNamespace() == null || involved.getNamespace().isEmpty()
                ? CLUSTER_SCOPED_NAMESPACE : involved.getNamespace();
        String time = RFC3339.format(now.truncatedTo(ChronoUnit.SECONDS).atOffset(ZoneOffset.UTC));
        if (correlation instanceof EventCorrelator.Correlation.Drop) {
            log.debug("event dropped (too many about one object) kind={} name={} reason={}", involved.getKind(),
                    involved.getName(), reason);
        } else if (correlation instanceof EventCorrelator.Correlation.Create create) {
            long unique = now.getEpochSecond() * 1_000_000_000L + now.getNano() + sequence.incrementAndGet();
            Event created = client.v1().events().inNamespace(namespace).resource(event(involved, namespace,
                    involved.getName() + "." + Long.toHexString(unique), type, reason, create.message(), time,
                    time, 1)).create();
            correlator.written(create, created.getMetadata().getName(), count(created, 1), time);
        } else if (correlation instanceof EventCorrelator.Correlation.Bump bump) {
            Map<String, Object> changes = new LinkedHashMap<>();
            changes.put("count", bump.count());
            changes.put("lastTimestamp", time);
            changes.put("message", bump.message());
            String patch = MergePatch.json(changes);
            Event written;
            try {
                written = client.v1().events().inNamespace(namespace).withName(bump.name())
                        .patch(PatchContext.of(PatchType.JSON_MERGE), patch);
            } catch (KubernetesClientException e) {
                if (e.getCode() != 404) {
                    throw e;
                }
                // Gone (Events expire after an hour): written again under its name, with its count.
                written = client.v1().events().inNamespace(namespace).resource(event(involved, namespace,
                        bump.name(), type, reason, bump.message(), bump.firstTimestamp(), time, bump.count()))
                        .create();
            }
            correlator.written(bump, bump.name(), count(written, bump.count()), bump.firstTimestamp());
        }
    }

    private static int count(Event written, int fallback) {
        return written != null && written.getCount() != null ? written.getCount() : fallback;
    }

    private Event event(ObjectReference involved, String namespace, String name, String type, String reason,
            String message, String first, String last, int count) {
        return new EventBuilder()
                .withNewMetadata()
                    .withName(name)
                    .withNamespace(namespace)
                .endMetadata()
                .withInvolvedObject(involved)
                .withType(type)
                .withReason(reason)
                .withMessage(message)
                .withNewSource().withComponent(COMPONENT).withHost(host).endSource()
                .withReportingComponent(COMPONENT)
                .withReportingInstance(host)
                .withFirstTimestamp(first)
                .withLastTimestamp(last)
                .withCount(count)
                .build();
    }
}
