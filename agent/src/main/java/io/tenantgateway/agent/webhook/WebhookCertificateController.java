package io.tenantgateway.agent.webhook;

import static java.util.Objects.requireNonNull;

import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.tenantgateway.agent.controller.WorkQueue;
import io.tenantgateway.agent.health.HealthCheck;
import io.tenantgateway.agent.k8s.EventHandlers;
import io.tenantgateway.agent.k8s.EventCorrelator;
import io.tenantgateway.agent.k8s.EventRecorder;
import io.tenantgateway.agent.k8s.KubernetesClients;
import io.tenantgateway.certs.CertBundle;
import io.tenantgateway.certs.CertificateAuthority;
import io.tenantgateway.certs.CertificateRequest;
import io.tenantgateway.certs.KeyAlgorithm;
import io.tenantgateway.certs.TlsMaterial;
import io.tenantgateway.certs.policy.CertificateRotationPolicy;
import io.tenantgateway.certs.policy.CertificateRotationPolicy.Action;
import io.tenantgateway.certs.policy.CertificateRotationPolicy.Decision;
import io.tenantgateway.common.lifecycle.Lifecycle;
import io.tenantgateway.common.retry.Backoff;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code --webhook-tls-self-managed}: the webhook's CA and serving certificate, kept in one Secret that every agent
 * watches and any agent may write, and served from it ({@link TlsMaterial}: the webhook's key manager asks on every
 * handshake, so a new certificate reaches new connections at once and open connections keep theirs).
 *
 * <ul>
 *   <li>No Secret: this agent makes a CA and a serving certificate for the webhook Service's names and creates the
 *       Secret (POST: create-only). {@code 409 AlreadyExists} means another agent was first: it reads and serves
 *       theirs.</li>
 *   <li>A Secret of ours ({@code app.kubernetes.io/managed-by: tenant-gateway}): served as it is;
 *       {@link CertificateRotationPolicy} decides whether something is due (renewal, CA rotation, pruning); the
 *       change is written with the read {@code resourceVersion} (compare-and-swap), so of several agents deciding
 *       the same thing exactly one write wins; the others get {@code 409 Conflict}, re-read and find nothing left to
 *       do. Every agent serves what the Secret holds, so all converge on the winner's certificate.</li>
 *   <li>A Secret without that label (made by hand or by cert-manager): served as it is and never written (a Warning
 *       Event says how to hand it over).</li>
 * </ul>
 * The CA is kept across serving-certificate renewals, so the webhook configuration's {@code caBundle} stays valid;
 * a CA rotation publishes the new CA next to the old one first ({@code ca.crt} holds both) and moves the serving
 * certificate to it only after {@code --webhook-ca-overlap}. Keys exist in memory and in the Secret only.
 *
 * <p>Threading: the informer callbacks only enqueue; one {@link WorkQueue} worker thread reads, decides and writes
 * (blocking API calls), and schedules the next check for when something comes due (at the latest an hour later).
 * {@link #current()} and {@link #readiness()} read volatile fields only (handshakes, health checks).
 *
 * <p>Lifecycle: {@link Lifecycle}; {@link #start()} returns once a certificate is served (read or created) and fails
 * with the reason otherwise (the API unreachable, a forbidden create, an unusable Secret that is not ours), leaving
 * this instance closed: the agent builds a new one for the next attempt.
 */
public final class WebhookCertificateController extends Lifecycle implements TlsMaterial {
    private static final Logger log = LoggerFactory.getLogger(WebhookCertificateController.class);

    /** The label that marks a Secret as written by the agents (and so theirs to rotate). */
    public static final String MANAGED_BY_LABEL = "app.kubernetes.io/managed-by";
    public static final String MANAGED_BY = "tenant-gateway";
    /** The Service the serving certificate is for ({@code NAMESPACE/NAME}). */
    public static final String SERVICE_ANNOTATION = "tenant-gateway.io/webhook-service";
    /** The last write: which agent, what, and why. */
    public static final String LAST_ROTATION_ANNOTATION = "tenant-gateway.io/last-rotation";

    public static final String REASON_ISSUED = "WebhookCertificateIssued";
    public static final String REASON_RENEWED = "WebhookCertificateRenewed";
    public static final String REASON_CA_ROTATED = "WebhookCARotated";
    public static final String REASON_PRUNED = "WebhookCABundlePruned";
    public static final String REASON_FAILED = "WebhookCertificateFailed";
    public static final String REASON_NOT_MANAGED = "WebhookSecretNotManaged";

    private static final String KEY = "secret";
    private static final String TLS_TYPE = "kubernetes.io/tls";
    private static final int MAX_CONFLICTS = 3;
    private static final Duration RESYNC = Duration.ofHours(1);
    private static final Duration START_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(5);

    private final KubernetesClient client;
    private final WebhookCertificatesConfig config;
    private final CertificateRotationPolicy policy;
    private final Clock clock;
    private final String identity;
    private final EventRecorder events;
    private final CertificateMetrics metrics;
    private final WorkQueue<String> queue;
    private final CompletableFuture<Void> firstReconcile = new CompletableFuture<>();

    private volatile Snapshot current;
    private volatile String lastError;
    private volatile boolean foreign;
    private volatile SharedIndexInformer<Secret> informer;

    // Worker thread only.
    private String servedFingerprint;
    private Instant pendingWakeup;
    private String reportedProblem;
    /**
     * This agent's last successful write and the resourceVersion it replaced ("" for a create), until the informer
     * delivers its next event (then its cache is at least that current): see {@link #cached()}.
     */
    private volatile Secret written;
    private volatile String replacedVersion;

    /**
     * @param client the API client; owned by the caller
     * @param registry where the metrics go; registered here, removed by {@link #close()}
     * @param identity who this agent is, for Events and the Secret's last-rotation annotation (the node name)
     */
    public WebhookCertificateController(KubernetesClient client, WebhookCertificatesConfig config,
            PrometheusRegistry registry, Clock clock, String identity) {
        this(client, config, registry, clock, identity, new EventCorrelator(clock));
    }

    /** @param correlator the agent's Event correlator */
    public WebhookCertificateController(KubernetesClient client, WebhookCertificatesConfig config,
            PrometheusRegistry registry, Clock clock, String identity, EventCorrelator correlator) {
        super("webhook certificates in Secret " + requireNonNull(config, "config").secret());
        this.client = requireNonNull(client, "client");
        this.config = config;
        this.clock = requireNonNull(clock, "clock");
        this.identity = requireNonNull(identity, "identity");
        this.policy = config.policy(clock);
        this.events = new EventRecorder(client, identity, clock, correlator);
        this.metrics = new CertificateMetrics(registry);
        this.queue = new WorkQueue<>(name(), "webhook-certificates", new Reconcile(),
                Backoff.agentSync(Duration.ofSeconds(1), Duration.ofSeconds(30)), CLOSE_TIMEOUT);
    }

    /**
     * Starts watching the Secret and waits (up to 30 s) until a certificate is served: read, or created by this agent
     * or another. Idempotent ({@link Lifecycle#start()}).
     *
     * @throws IllegalStateException with the reason when no certificate could be served (this instance is then
     *     closed)
     */
    @Override
    protected void doStart() {
        queue.start();
        SharedIndexInformer<Secret> watching = client.secrets().inNamespace(config.secretNamespace())
                .withName(config.secretName()).runnableInformer(0);
        watching.addEventHandler(EventHandlers.of(this::changed, this::changed));
        informer = watching;
        try {
            watching.start().toCompletableFuture().get(START_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            queue.enqueue(KEY);
            firstReconcile.get(START_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(name() + ": interrupted while starting", e);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause() instanceof ExecutionException nested ? nested.getCause() : e.getCause();
            throw new IllegalStateException(name() + ": " + describe(cause), cause);
        } catch (TimeoutException e) {
            throw new IllegalStateException(name() + ": no certificate within " + START_TIMEOUT.toSeconds() + "s"
                    + (lastError == null ? "" : ": " + lastError), e);
        }
        log.info("webhook certificates self-managed {} dnsNames={} serving={}", config.describe(),
                config.dnsNames(), describe(current));
    }

    /** Informer callback: only marks the cache current and enqueues. */
    private void changed(Secret secret) {
        written = null;
        queue.enqueue(KEY);
    }

    @Override
    protected void doClose() {
        SharedIndexInformer<Secret> watching = informer;
        if (watching != null) {
            watching.close();
        }
        queue.close();
        metrics.unregister();
    }

    @Override
    public Snapshot current() {
        return current;
    }

    /** The last failure (API error, unusable Secret), or {@code null} while everything is current. */
    public String lastError() {
        return lastError;
    }

    /** Whether the Secret is not ours (no managed-by label): served, never written. */
    public boolean servingForeignSecret() {
        return foreign;
    }

    public WebhookCertificatesConfig config() {
        return config;
    }

    /**
     * Readiness: a certificate is served and has not expired. A failed renewal while the certificate is still valid
     * does not fail readiness (the webhook works; the Warning Event, the failures metric and the log say what is
     * wrong), since with {@code failurePolicy: Fail} every agent being unready blocks pod creation.
     */
    public HealthCheck.Result readiness() {
        Snapshot served = current;
        String error = lastError;
        if (served == null || served.identityOrNull() == null) {
            return HealthCheck.Result.failed("no certificate from Secret " + config.secret() + " yet"
                    + (error == null ? "" : ": " + error));
        }
        X509Certificate leaf = served.identityOrNull().leaf();
        if (!clock.instant().isBefore(leaf.getNotAfter().toInstant())) {
            return HealthCheck.Result.failed("serving certificate from Secret " + config.secret() + " expired at "
                    + leaf.getNotAfter().toInstant() + (error == null ? "" : ": " + error));
        }
        return HealthCheck.Result.OK;
    }

    private final class Reconcile implements WorkQueue.Reconciler<String> {
        @Override
        public WorkQueue.Result reconcile(String key, int attempt) {
            try {
                reconcileSecret(attempt > 1);
                if (current == null) {
                    throw new IllegalStateException(lastError != null ? lastError : "no usable certificate");
                }
                firstReconcile.complete(null);
                return WorkQueue.Result.done();
            } catch (RuntimeException e) {
                failed(e);
                firstReconcile.completeExceptionally(e);
                throw e;
            }
        }

        @Override
        public boolean isRetryable(Exception e) {
            return true; // API errors and unusable Secrets alike: the next attempt re-reads from the API
        }
    }

    /** Reads (cache first, the API after a conflict or a failure), serves, decides, writes; up to 3 conflicts. */
    private void reconcileSecret(boolean reread) {
        Secret secret = reread ? get() : cached();
        for (int conflicts = 0; ; conflicts++) {
            try {
                reconcileOnce(secret);
                lastError = null;
                return;
            } catch (KubernetesClientException e) {
                if (e.getCode() != 409 || conflicts + 1 >= MAX_CONFLICTS) {
                    throw e;
                }
                metrics.conflict();
                log.info("Secret {} was written by another agent first (409); re-reading it and serving theirs",
                        config.secret());
                secret = get();
            }
        }
    }

    private void reconcileOnce(Secret secret) {
        Instant now = clock.instant();
        if (secret == null) {
            Decision decision = new Decision(Action.ISSUE, "Secret " + config.secret() + " not found", false, now);
            CertificateSecret made = issue(decision);
            Secret created = client.secrets().inNamespace(config.secretNamespace()).resource(new SecretBuilder()
                    .withNewMetadata()
                        .withNamespace(config.secretNamespace())
                        .withName(config.secretName())
                        .withLabels(Map.of(MANAGED_BY_LABEL, MANAGED_BY))
                        .withAnnotations(annotations(Map.of(), decision))
                    .endMetadata()
                    .withType(TLS_TYPE)
                    .withData(made.data())
                    .build()).create();
            wrote(created, "", decision);
            return;
        }
        boolean ours = MANAGED_BY.equals(labels(secret).get(MANAGED_BY_LABEL));
        foreign = !ours;
        CertificateSecret stored = CertificateSecret.read(secret);
        serve(secret, stored);
        if (!ours) {
            reportProblem(secret, REASON_NOT_MANAGED, "Secret " + config.secret() + " has no label "
                    + MANAGED_BY_LABEL + "=" + MANAGED_BY + ": serving it as it is, never renewing it. To let the"
                    + " agents manage it, delete it: they create their own");
            if (stored.serving() == null) {
                throw new IllegalStateException("Secret " + config.secret() + " (not managed by tenant-gateway): "
                        + String.join("; ", stored.problems()));
            }
            return;
        }
        Decision decision = policy.decide(new CertificateRotationPolicy.State(
                stored.signingCa() == null ? null : stored.signingCa().leaf(), stored.bundle(),
                stored.serving() == null ? null : stored.serving().leaf()));
        if (decision.action() == Action.KEEP) {
            log.debug("Secret {}: nothing due ({}); next check at {}", config.secret(), decision.reason(),
                    decision.nextCheck());
            scheduleCheck(decision.nextCheck());
            return;
        }
        if (decision.action() == Action.ISSUE && !stored.problems().isEmpty()) {
            decision = new Decision(Action.ISSUE, decision.reason() + " (" + String.join("; ", stored.problems())
                    + ")", false, now);
        }
        CertificateSecret next = switch (decision.action()) {
            case ISSUE -> issue(decision);
            case ROTATE_CA -> rotateCa(stored, decision);
            case RENEW -> CertificateSecret.of(newServing(stored.signingCa()), stored.bundle(), stored.signingCa());
            case PRUNE -> CertificateSecret.of(stored.serving(), prune(stored), stored.signingCa());
            case KEEP -> throw new IllegalStateException("unreachable");
        };
        // Compare-and-swap: the read resourceVersion goes with the write; a concurrent writer makes this a 409.
        Secret updated = client.secrets().inNamespace(config.secretNamespace()).resource(new SecretBuilder(secret)
                .editMetadata()
                    .withAnnotations(annotations(secret.getMetadata().getAnnotations(), decision))
                .endMetadata()
                .withData(next.data())
                .build()).update();
        wrote(updated, secret.getMetadata().getResourceVersion(), decision);
    }

    /** Serves what {@code secret} holds when it changed and is usable; otherwise keeps what is served. */
    private void serve(Secret secret, CertificateSecret stored) {
        if (stored.serving() == null) {
            return;
        }
        String fingerprint = CertificateSecret.fingerprint(secret);
        if (fingerprint.equals(servedFingerprint)) {
            return;
        }
        Snapshot previous = current;
        Snapshot next = new Snapshot(previous == null ? 1 : previous.generation() + 1, stored.serving(),
                stored.trust());
        current = next;
        servedFingerprint = fingerprint;
        X509Certificate leaf = stored.serving().leaf();
        metrics.serving(leaf, stored.signingCa() != null ? stored.signingCa().leaf()
                : stored.bundle().isEmpty() ? null : stored.bundle().get(0));
        log.info("serving webhook certificate from Secret {} generation={} resourceVersion={} {}", config.secret(),
                next.generation(), secret.getMetadata().getResourceVersion(), describe(next));
    }

    private void wrote(Secret written, String replaced, Decision decision) {
        this.replacedVersion = replaced;
        this.written = written;
        metrics.rotated(decision.action());
        CertificateSecret stored = CertificateSecret.read(written);
        serve(written, stored);
        String message = switch (decision.action()) {
            case ISSUE -> "issued a new CA and serving certificate for " + config.dnsNames().get(2);
            case RENEW -> "renewed the serving certificate";
            case ROTATE_CA -> "published a new CA next to the old one" + (decision.renewLeafFirst()
                    ? " and renewed the serving certificate from the old one" : "");
            case PRUNE -> "removed expired CAs from ca.crt";
            case KEEP -> "nothing";
        } + ": " + decision.reason() + " (by " + identity + "; now " + describe(current) + ")";
        log.info("Secret {}: {}", config.secret(), message);
        events.record(written, EventRecorder.NORMAL, switch (decision.action()) {
            case ISSUE -> REASON_ISSUED;
            case ROTATE_CA -> REASON_CA_ROTATED;
            case PRUNE -> REASON_PRUNED;
            default -> REASON_RENEWED;
        }, message);
        // The write's own watch event re-runs the policy; this makes sure of it even if that event is late.
        queue.enqueue(KEY);
    }

    private CertificateSecret issue(Decision decision) {
        Instant now = clock.instant();
        CertificateAuthority ca = CertificateAuthority.create("tenant-gateway-webhook-ca@" + now.getEpochSecond(),
                KeyAlgorithm.EC_P256, config.caValidity(), clock);
        log.debug("Secret {}: new CA {} ({})", config.secret(), ca.certificate().getSubjectX500Principal().getName(),
                decision.reason());
        return CertificateSecret.of(newServing(ca.bundle()), List.of(ca.certificate()), ca.bundle());
    }

    private CertificateSecret rotateCa(CertificateSecret stored, Decision decision) {
        CertBundle serving = decision.renewLeafFirst() || stored.serving() == null
                ? newServing(stored.signingCa()) : stored.serving();
        CertificateAuthority next = CertificateAuthority.create("tenant-gateway-webhook-ca@"
                + clock.instant().getEpochSecond(), KeyAlgorithm.EC_P256, config.caValidity(), clock);
        List<X509Certificate> bundle = new ArrayList<>();
        bundle.add(next.certificate());
        Instant now = clock.instant();
        for (X509Certificate ca : stored.bundle()) {
            if (now.isBefore(ca.getNotAfter().toInstant())) {
                bundle.add(ca);
            }
        }
        return CertificateSecret.of(serving, bundle, next.bundle());
    }

    private List<X509Certificate> prune(CertificateSecret stored) {
        Instant now = clock.instant();
        X509Certificate signing = stored.signingCa().leaf();
        X509Certificate served = stored.serving().leaf();
        List<X509Certificate> kept = new ArrayList<>();
        for (X509Certificate ca : stored.bundle()) {
            if (ca.equals(signing) || now.isBefore(ca.getNotAfter().toInstant())
                    || CertificateRotationPolicy.signs(ca, served)) {
                kept.add(ca);
            }
        }
        return kept;
    }

    private CertBundle newServing(CertBundle ca) {
        List<String> names = config.dnsNames();
        return CertificateAuthority.of(ca, clock).issue(CertificateRequest.server(names.get(2)).dnsNames(names)
                .validity(config.validity()).build());
    }

    private Map<String, String> annotations(Map<String, String> existing, Decision decision) {
        Map<String, String> annotations = new LinkedHashMap<>(existing == null ? Map.of() : existing);
        annotations.put(SERVICE_ANNOTATION, config.service());
        String what = CertificateMetrics.label(decision.action()) + " by " + identity + " at "
                + clock.instant().truncatedTo(java.time.temporal.ChronoUnit.SECONDS) + ": " + decision.reason();
        annotations.put(LAST_ROTATION_ANNOTATION, what.length() > 512 ? what.substring(0, 512) : what);
        return annotations;
    }

    /** Wakes the queue when the next rule comes due (at the latest after {@link #RESYNC}); worker thread only. */
    private void scheduleCheck(Instant due) {
        Instant now = clock.instant();
        Instant wakeup = due.isAfter(now.plus(RESYNC)) ? now.plus(RESYNC) : due;
        if (pendingWakeup != null && pendingWakeup.isAfter(now) && !wakeup.isBefore(pendingWakeup)) {
            return; // an earlier (or the same) wakeup is already pending
        }
        pendingWakeup = wakeup;
        Duration delay = Duration.between(now, wakeup);
        queue.enqueueAfter(KEY, delay.isNegative() ? Duration.ZERO : delay);
    }

    private void failed(RuntimeException e) {
        metrics.failed();
        String message = describe(e);
        if (!message.equals(lastError)) {
            log.warn("Secret {}: {} (retrying; serving {})", config.secret(), message, describe(current));
            Secret secret = cachedQuietly();
            if (secret != null) {
                events.record(secret, EventRecorder.WARNING, REASON_FAILED, message);
            }
        }
        lastError = message;
    }

    /** A Warning Event and log line once per distinct problem of a Secret that is served but not written. */
    private void reportProblem(Secret secret, String reason, String message) {
        if (message.equals(reportedProblem)) {
            return;
        }
        reportedProblem = message;
        log.warn("{}", message);
        events.record(secret, EventRecorder.WARNING, reason, message);
    }

    private String describe(Throwable e) {
        if (e instanceof KubernetesClientException k) {
            String action = k.getCode() == 403 ? " (grant the agent's service account create on secrets in "
                    + config.secretNamespace() + " and get/list/watch/update on " + config.secretName()
                    + ": manifests/components/webhook-tls-secret)" : "";
            return KubernetesClients.describeFailure(client, k) + action;
        }
        return e.getMessage() == null ? e.toString() : e.getMessage();
    }

    private static String describe(Snapshot snapshot) {
        if (snapshot == null || snapshot.identityOrNull() == null) {
            return "nothing";
        }
        X509Certificate leaf = snapshot.identityOrNull().leaf();
        return "serial=" + leaf.getSerialNumber().toString(16) + " notAfter=" + leaf.getNotAfter().toInstant()
                + " issuer='" + leaf.getIssuerX500Principal().getName() + "' caBundle="
                + (snapshot.trustOrNull() == null ? "none" : snapshot.trustOrNull().describe());
    }

    /**
     * The informer's copy; while it still shows the version this agent's last write replaced (the watch event has not
     * arrived yet), what this agent wrote instead, so that a check right after a write does not act on the old
     * certificate again.
     */
    private Secret cached() {
        SharedIndexInformer<Secret> watching = informer;
        if (watching == null) {
            return get();
        }
        Secret secret = watching.getStore().getByKey(config.secret());
        Secret mine = written;
        String version = secret == null ? "" : secret.getMetadata().getResourceVersion();
        return mine != null && version.equals(replacedVersion) ? mine : secret;
    }

    private Secret cachedQuietly() {
        SharedIndexInformer<Secret> watching = informer;
        return watching == null ? null : watching.getStore().getByKey(config.secret());
    }

    private Secret get() {
        return client.secrets().inNamespace(config.secretNamespace()).withName(config.secretName()).get();
    }

    private static Map<String, String> labels(Secret secret) {
        Map<String, String> labels = secret.getMetadata().getLabels();
        return labels == null ? Map.of() : labels;
    }
}
