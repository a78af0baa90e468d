package io.tenantgateway.agent.k8s;

import static java.util.Objects.requireNonNull;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectReference;
import io.fabric8.kubernetes.api.model.ObjectReferenceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Creates core/v1 Events through the client, the way kubelet's recorder names them
 * ({@code <object>.<hex>}), with {@code source.component}/{@code reportingComponent} set to this
 * agent. Blocking: call it from a worker thread, never from an event loop or informer callback.
 * A failed create is logged and otherwise ignored: an Event never decides an action.
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
    private final AtomicLong sequence = new AtomicLong();

    /** @param host {@code source.host}, this node's name */
    public EventRecorder(KubernetesClient client, String host, Clock clock) {
        this.client = requireNonNull(client, "client");
        this.host = requireNonNull(host, "host");
        this.clock = requireNonNull(clock, "clock");
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
     * Creates an Event about {@code object}, for a caller that retries until it is written (the allocator's deferred
     * failure bookkeeping).
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
        Instant now = clock.instant();
        String namespace = involved.getNamespace() == null || involved.getNamespace().isEmpty()
                ? CLUSTER_SCOPED_NAMESPACE : involved.getNamespace();
        long unique = now.getEpochSecond() * 1_000_000_000L + now.getNano() + sequence.incrementAndGet();
        String time = RFC3339.format(now.truncatedTo(ChronoUnit.SECONDS).atOffset(ZoneOffset.UTC));
        Event event = new EventBuilder()
                .withNewMetadata()
                    .withName(involved.getName() + "." + Long.toHexString(unique))
                    .withNamespace(namespace)
                .endMetadata()
                .withInvolvedObject(involved)
                .withType(type)
                .withReason(reason)
                .withMessage(message.length() > MAX_MESSAGE_LENGTH ? message.substring(0, MAX_MESSAGE_LENGTH) : message)
                .withNewSource().withComponent(COMPONENT).withHost(host).endSource()
                .withReportingComponent(COMPONENT)
                .withReportingInstance(host)
                .withFirstTimestamp(time)
                .withLastTimestamp(time)
                .withCount(1)
                .build();
        client.v1().events().inNamespace(namespace).resource(event).create();
    }
}
