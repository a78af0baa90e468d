package io.tenantgateway.agent.webhook;

import static java.util.Objects.requireNonNull;

import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.tenantgateway.certs.CertBundle;
import io.tenantgateway.certs.Pem;
import io.tenantgateway.certs.TlsMaterial;
import io.tenantgateway.certs.TrustBundle;
import io.tenantgateway.common.config.ConfigException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Base64;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import io.tenantgateway.agent.k8s.EventHandlers;

/**
 * TLS material from a {@code kubernetes.io/tls}-style Secret ({@code tls.crt}, {@code tls.key}, optional
 * {@code ca.crt}) read through the API and kept current by an informer. For agents whose pods cannot mount the Secret
 * (Kamaji's konnectivity-agent DaemonSet accepts only extra arguments). Like file reloads, a broken update keeps the
 * previous material and is logged once.
 *
 * <p>Lifecycle: not a {@code common} {@code Lifecycle}, on purpose: the agent retries {@code start()} on this
 * instance until the Secret can be read, so a failed start leaves it startable again rather than closed.
 */
public final class SecretTlsMaterial implements TlsMaterial, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(SecretTlsMaterial.class);

    private final KubernetesClient client;
    private final String namespace;
    private final String name;
    private volatile Snapshot current;
    private volatile String lastFailure;
    private SharedIndexInformer<Secret> informer;

    public SecretTlsMaterial(KubernetesClient client, String namespaceAndName) {
        this.client = requireNonNull(client, "client");
        int slash = namespaceAndName.indexOf('/');
        if (slash <= 0 || slash == namespaceAndName.length() - 1) {
            throw new ConfigException("--webhook-tls-secret", namespaceAndName,
                    "NAMESPACE/NAME, e.g. kube-system/tenant-gateway-webhook-tls");
        }
        this.namespace = namespaceAndName.substring(0, slash);
        this.name = namespaceAndName.substring(slash + 1);
    }

    /**
     * Reads the Secret and starts watching it; fails when it is missing or unusable at start, leaving nothing
     * running, so the agent's background start can call it again.
     */
    public synchronized void start() {
        if (informer != null) {
            return;
        }
        informer = client.secrets().inNamespace(namespace).withName(name).runnableInformer(0);
        informer.addEventHandler(EventHandlers.of(this::update, deleted -> log.warn(
                "Secret {}/{} deleted; keeping the TLS material in use", namespace, name)));
        try {
            informer.start().toCompletableFuture().get(30, TimeUnit.SECONDS);
        } catch (Exception e) {
            stopInformer();
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            throw new IllegalStateException("--webhook-tls-secret: cannot read Secret " + namespace + "/" + name + ": "
                    + e.getMessage(), e);
        }
        if (current == null) {
            stopInformer();
            throw new IllegalArgumentException("--webhook-tls-secret: " + namespace + "/" + name + ": "
                    + (lastFailure != null ? lastFailure : "Secret not found (expected: tls.crt and tls.key)"));
        }
    }

    private synchronized void update(Secret secret) {
        try {
            Map<String, String> data = secret.getData() == null ? Map.of() : secret.getData();
            CertBundle identity = new CertBundle(
                    Pem.parseCertificates(decode(data, "tls.crt"), source("tls.crt")),
                    Pem.parsePrivateKey(decode(data, "tls.key"), source("tls.key")));
            TrustBundle trust = data.containsKey("ca.crt")
                    ? new TrustBundle(Pem.parseCertificates(decode(data, "ca.crt"), source("ca.crt"))) : null;
            long generation = current == null ? 1 : current.generation() + 1;
            current = new Snapshot(generation, identity, trust);
            lastFailure = null;
            log.info("TLS material from Secret {}/{} generation={} subject={}", namespace, name, generation,
                    identity.leaf().getSubjectX500Principal().getName());
        } catch (IllegalArgumentException e) { // a CertificateFileException too
            if (!e.getMessage().equals(lastFailure)) {
                log.error("Secret {}/{} not usable, keeping the previous TLS material: {}", namespace, name,
                        e.getMessage());
            }
            lastFailure = e.getMessage();
        }
    }

    private Path source(String key) {
        return Path.of("secret:" + namespace + "/" + name, key);
    }

    private String decode(Map<String, String> data, String key) {
        String value = data.get(key);
        if (value == null) {
            throw new IllegalArgumentException("Secret " + namespace + "/" + name + ": no key " + key
                    + " (expected: tls.crt and tls.key, optionally ca.crt)");
        }
        return new String(Base64.getDecoder().decode(value), StandardCharsets.US_ASCII);
    }

    @Override
    public Snapshot current() {
        return current;
    }

    public String lastFailure() {
        return lastFailure;
    }

    @Override
    public synchronized void close() {
        stopInformer();
    }

    private void stopInformer() {
        if (informer != null) {
            informer.close();
            informer = null;
        }
    }
}
