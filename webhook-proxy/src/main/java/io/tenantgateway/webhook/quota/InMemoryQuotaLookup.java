package io.tenantgateway.webhook.quota;

import static java.util.Objects.requireNonNull;

import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A {@link QuotaLookup} backed by a map: for tests, and for callers that compute quotas elsewhere and push them in
 * (the agent's Kubernetes-backed lookup keeps the same shape, fed by informers).
 */
public final class InMemoryQuotaLookup implements QuotaLookup {
    private final Map<Key, Quota> quotas = new ConcurrentHashMap<>();

    /** Sets (or replaces) the quota of a namespace on a resource. */
    public InMemoryQuotaLookup put(String namespace, String resource, long limit, long used) {
        quotas.put(new Key(namespace, resource), new Quota(limit, used));
        return this;
    }

    public void remove(String namespace, String resource) {
        quotas.remove(new Key(namespace, resource));
    }

    @Override
    public Optional<Quota> find(String namespace, Resource resource) {
        return Optional.ofNullable(quotas.get(new Key(namespace, resource.name())));
    }

    private record Key(String namespace, String resource) {
        Key {
            requireNonNull(namespace, "namespace");
            requireNonNull(resource, "resource");
        }
    }
}
