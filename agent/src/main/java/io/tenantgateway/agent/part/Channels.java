package io.tenantgateway.agent.part;

import static java.util.Objects.requireNonNull;

import java.util.IdentityHashMap;
import java.util.Map;

/**
 * The channels of one agent (or one {@code doctor} run): one {@link Channel} per {@link Channel.Key}, made on first
 * use by a publisher or a subscriber, whichever comes first. Thread-safe.
 */
public final class Channels {
    private final Map<Channel.Key<?>, Channel<?>> channels = new IdentityHashMap<>();

    /** The channel {@code key} names. */
    @SuppressWarnings("unchecked")
    public <T> Channel<T> get(Channel.Key<T> key) {
        requireNonNull(key, "key");
        synchronized (channels) {
            return (Channel<T>) channels.computeIfAbsent(key, k -> new Channel<>(k.name()));
        }
    }
}
