package io.tenantgateway.agent.webhook;

import static java.util.Objects.requireNonNull;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.tenantgateway.agent.k8s.KubernetesClients;
import io.tenantgateway.certs.TlsMaterial;
import io.tenantgateway.certs.TrustBundle;
import io.tenantgateway.common.concurrent.DaemonThreads;
import io.tenantgateway.common.lifecycle.Lifecycle;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code --manage-webhook-config}: keeps the MutatingWebhookConfiguration's CA bundle equal to the CA of a
 * {@link TlsMaterial} (a reloading file or a Secret): at start, soon after the CA changes (rotation), and every minute
 * (someone may have edited the configuration).
 */
public final class WebhookConfigurationManager extends Lifecycle {
    private static final Logger log = LoggerFactory.getLogger(WebhookConfigurationManager.class);
    private static final Duration CHECK = Duration.ofSeconds(5);
    private static final Duration RESYNC = Duration.ofMinutes(1);

    private final KubernetesClient client;
    private final String configurationName;
    private final TlsMaterial ca;
    private final String source;
    private volatile ScheduledExecutorService executor;
    private volatile String lastError;
    private volatile boolean syncedOnce;
    private long syncedGeneration = -1;
    private long lastSyncNanos;

    /**
     * @param ca material whose trust bundle is the CA to publish
     * @param source where the CA comes from, for log lines
     */
    public WebhookConfigurationManager(KubernetesClient client, String configurationName, TlsMaterial ca,
            String source) {
        super("MutatingWebhookConfiguration manager for " + requireNonNull(configurationName, "configurationName"));
        this.client = requireNonNull(client, "client");
        this.configurationName = requireNonNull(configurationName, "configurationName");
        this.ca = requireNonNull(ca, "ca");
        this.source = requireNonNull(source, "source");
    }

    /** Starts the periodic check (the first at once). Idempotent ({@link Lifecycle#start()}). */
    @Override
    protected void doStart() {
        ScheduledExecutorService started = Executors.newSingleThreadScheduledExecutor(
                DaemonThreads.named("webhook-config-manager"));
        executor = started;
        started.scheduleWithFixedDelay(this::check, 0, CHECK.toSeconds(), TimeUnit.SECONDS);
    }

    /** Syncs when the CA changed since the last sync, or a resync period passed. */
    private void check() {
        TlsMaterial.Snapshot current = ca.current();
        if (current == null) {
            reportError("no CA in " + source + " yet");
            return;
        }
        long generation = current.generation();
        if (generation != syncedGeneration || System.nanoTime() - lastSyncNanos >= RESYNC.toNanos()) {
            sync();
        }
    }

    /** Whether the CA bundle was written (or found current) at least once and the last attempt succeeded. */
    public boolean synced() {
        return syncedOnce && lastError == null;
    }

    /** The last failure to update the configuration, or {@code null} when it is current. */
    public String lastError() {
        return lastError;
    }

    private void sync() {
        TlsMaterial.Snapshot snapshot = ca.current();
        TrustBundle trust = snapshot.trustOrNull();
        lastSyncNanos = System.nanoTime();
        if (trust == null) {
            reportError("no CA in " + source + " (expected: a ca.crt)");
            return;
        }
        try {
            CaBundleInjector.Result result = CaBundleInjector.inject(client, configurationName, trust.pem());
            syncedGeneration = snapshot.generation();
            syncedOnce = true;
            if (result.patched() > 0) {
                log.info("CA bundle written into MutatingWebhookConfiguration {} ({} of {} webhooks) from {}",
                        configurationName, result.patched(), result.webhooks(), source);
            }
            if (lastError != null) {
                log.info("MutatingWebhookConfiguration {} is current again", configurationName);
            }
            lastError = null;
        } catch (IllegalArgumentException e) {
            reportError(e.getMessage());
        } catch (RuntimeException e) {
            // Anything else too: an exception would end the periodic task for good.
            reportError(KubernetesClients.describeFailure(client, e));
        }
    }

    private void reportError(String message) {
        if (!message.equals(lastError)) {
            log.error("cannot update MutatingWebhookConfiguration {}: {} (retrying every {}s)", configurationName,
                    message, RESYNC.toSeconds());
        }
        lastError = message;
    }

    @Override
    protected void doClose() {
        ScheduledExecutorService started = executor;
        if (started != null) {
            started.shutdownNow();
            executor = null;
        }
    }
}
