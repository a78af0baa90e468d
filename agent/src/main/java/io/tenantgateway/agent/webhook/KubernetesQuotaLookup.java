package io.tenantgateway.agent.webhook;

import static java.util.Objects.requireNonNull;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ResourceQuota;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.tenantgateway.hami.Annotations;
import io.tenantgateway.hami.ContainerDevice;
import io.tenantgateway.hami.DeviceAllocationCodec;
import io.tenantgateway.hami.ResourceNames;
import io.tenantgateway.agent.controller.WorkQueue;
import io.tenantgateway.agent.k8s.EventHandlers;
import io.tenantgateway.agent.k8s.Pages;
import io.tenantgateway.common.retry.Backoff;
import io.tenantgateway.webhook.quota.QuotaLookup;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The webhook's quota source in the agent: ResourceQuota {@code limits.<device resource>} (any vendor's memory or core
 * resource, e.g. {@code limits.nvidia.com/gpumem} or {@code limits.hygon.com/dcumem}, by its configured name) from an
 * informer, and what a namespace's pods hold from the devices the scheduler recorded in the vendor's allocated-devices
 * annotation ({@code hami.io/vgpu-devices-allocated}, {@code hami.io/dcu-devices-allocated}, ...), their memory in MiB
 * or their cores, as HAMi's quota manager counts. Answers from memory on the event loop.
 *
 * <p>Pods are watched only in namespaces that have such a quota (a {@code limits.} key on an extended resource, one
 * whose name has a {@code /}; one informer per namespace, started when the quota appears), so a DaemonSet of agents
 * does not make every node watch every pod of the cluster.
 *
 * <p>Threading: the ResourceQuota callbacks only enqueue the namespace on a {@link WorkQueue}; its worker creates and
 * starts the namespace's pod informer (without waiting for its first list). {@link #find} reads informer caches only.
 *
 * <p>Lifecycle: not a {@link io.tenantgateway.common.lifecycle.Lifecycle}, on purpose. The agent hands this one
 * instance to the webhook before the API is reachable and retries {@link #start()} on it until the first list
 * succeeds, so a failed start must leave it startable again rather than closed.
 */
public final class KubernetesQuotaLookup implements QuotaLookup, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(KubernetesQuotaLookup.class);
    private static final String LIMITS = ResourceNames.QUOTA_LIMITS_PREFIX;

    private final KubernetesClient client;
    private final Map<String, SharedIndexInformer<Pod>> podInformers = new ConcurrentHashMap<>();
    private volatile SharedIndexInformer<ResourceQuota> quotas;
    private volatile WorkQueue<String> namespaces;
    private volatile boolean closed;
    private volatile boolean synced;

    public KubernetesQuotaLookup(KubernetesClient client) {
        this.client = requireNonNull(client, "client");
    }

    /**
     * Lists ResourceQuotas and starts watching them; blocks until the first list. A failure leaves nothing running,
     * so it may be called again (the agent retries it in the background).
     */
    public synchronized void start() {
        if (quotas != null) {
            return;
        }
        if (closed) {
            throw new IllegalStateException("webhook quota lookup is closed");
        }
        namespaces = new WorkQueue<>("webhook quota lookup", "webhook-quota-pods", (namespace, attempt) -> {
            watchPods(namespace);
            return WorkQueue.Result.done();
        }, Backoff.exponential(Duration.ofSeconds(1)).withMaxAttempts(1), Duration.ofSeconds(5));
        namespaces.start();
        quotas = client.resourceQuotas().inAnyNamespace().runnableInformer(0);
        // On delete, pod informers stay: another quota may still need them, and they are cheap once synced.
        quotas.addEventHandler(EventHandlers.of(this::watchPodsIfLimited, deleted -> { }));
        try {
            quotas.start().toCompletableFuture().get(30, TimeUnit.SECONDS);
            synced = true;
        } catch (Exception e) {
            quotas.close();
            quotas = null;
            namespaces.close();
            namespaces = null;
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            throw new IllegalStateException("webhook quota: cannot list ResourceQuotas: " + e.getMessage(), e);
        }
    }

    private void watchPodsIfLimited(ResourceQuota quota) {
        if (closed || quota.getSpec() == null || quota.getSpec().getHard() == null) {
            return;
        }
        boolean limitsDevices = quota.getSpec().getHard().keySet().stream().anyMatch(KubernetesQuotaLookup::isDeviceLimit);
        String namespace = quota.getMetadata().getNamespace();
        WorkQueue<String> queue = namespaces;
        if (limitsDevices && queue != null && !podInformers.containsKey(namespace)) {
            queue.enqueue(namespace); // callbacks only enqueue; the worker creates the informer
        }
    }

    /** On the queue's worker: creates and starts the namespace's pod informer, without waiting for its first list. */
    private void watchPods(String namespace) {
        if (closed) {
            return;
        }
        podInformers.computeIfAbsent(namespace, ns -> {
            log.info("webhook quota: namespace {} limits device resources; watching its pods", ns);
            SharedIndexInformer<Pod> pods = client.pods().inNamespace(ns).withLimit(Pages.PODS)
                    .runnableInformer(0);
            pods.start();
            return pods;
        });
    }

    /** Whether the first list of ResourceQuotas is done (before that, {@link #find} knows no quota). */
    public boolean synced() {
        return synced && !closed;
    }

    @Override
    public Optional<Quota> find(String namespace, Resource resource) {
        SharedIndexInformer<ResourceQuota> quotas = this.quotas;
        if (quotas == null) {
            return Optional.empty();
        }
        long limit = -1;
        for (ResourceQuota quota : quotas.getStore().list()) {
            if (!namespace.equals(quota.getMetadata().getNamespace()) || quota.getSpec() == null
                    || quota.getSpec().getHard() == null) {
                continue;
            }
            Quantity hard = quota.getSpec().getHard().get(LIMITS + resource.name());
            if (hard != null) {
                long value = hard.getNumericalAmount().longValue();
                limit = limit < 0 ? value : Math.min(limit, value);
            }
        }
        if (limit < 0) {
            return Optional.empty();
        }
        SharedIndexInformer<Pod> pods = podInformers.get(namespace);
        long used = pods == null ? 0 : pods.getStore().list().stream().mapToLong(pod -> used(pod, resource)).sum();
        return Optional.of(new Quota(limit, used));
    }

    /** A ResourceQuota key that limits an extended resource ({@code limits.<domain>/<name>}): a device, maybe. */
    static boolean isDeviceLimit(String key) {
        return key.startsWith(LIMITS) && key.indexOf('/', LIMITS.length()) > 0;
    }

    static long used(Pod pod, Resource resource) {
        String phase = pod.getStatus() == null ? null : pod.getStatus().getPhase();
        if ("Succeeded".equals(phase) || "Failed".equals(phase)) {
            return 0;
        }
        String allocated = Annotations.get(pod.getMetadata().getAnnotations(), resource.allocatedAnnotation());
        if (allocated == null || allocated.isEmpty()) {
            return 0;
        }
        List<List<ContainerDevice>> containers;
        try {
            containers = DeviceAllocationCodec.decode(allocated);
        } catch (IllegalArgumentException e) {
            return 0; // as HAMi's scheduler, which skips a pod whose devices do not decode
        }
        long total = 0;
        for (List<ContainerDevice> container : containers) {
            for (ContainerDevice device : container) {
                total += resource.measure() == Measure.MEMORY_MIB ? device.memoryMiB() : device.cores();
            }
        }
        return total;
    }

    @Override
    public synchronized void close() {
        closed = true;
        if (namespaces != null) {
            namespaces.close(); // no informer is created after this
            namespaces = null;
        }
        podInformers.values().forEach(SharedIndexInformer::close);
        podInformers.clear();
        if (quotas != null) {
            quotas.close();
            quotas = null;
        }
    }
}
