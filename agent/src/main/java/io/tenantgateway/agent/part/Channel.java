package io.tenantgateway.agent.part;

import static java.util.Objects.requireNonNull;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;

/**
 * A value one part publishes and others follow, through their {@link PartContext#channel}: the last value is
 * replayed to a new subscriber, so the order in which parts start does not matter. Subscribers run on the publisher's
 * thread and must not block. The spine knows no channel: a channel is named by a {@link Key} that lives with the
 * value it carries, outside every part's package (parts never import each other).
 *
 * @param <T> what is published
 */
public final class Channel<T> {
    private final String name;
    private final List<Consumer<? super T>> subscribers = new CopyOnWriteArrayList<>();
    private final Object updates = new Object();
    private volatile T last;

    Channel(String name) {
        this.name = requireNonNull(name, "name");
    }

    /**
     * What names a channel and what it carries: one constant per channel, next to the value's type
     * ({@code DeviceDiscovery.CHANNEL}). Keys are equal by identity: two keys with one name are two channels.
     *
     * @param name lower-case words joined by '-', for logs ({@code device-discovery})
     * @param <T> what the channel carries
     */
    public static final class Key<T> {
        private final String name;

        private Key(String name) {
            this.name = requireNonNull(name, "name");
        }

        public static <T> Key<T> of(String name) {
            return new Key<>(name);
        }

        public String name() {
            return name;
        }

        @Override
        public String toString() {
            return name;
        }
    }

    /** Tells every subscriber, and remembers {@code value} for the ones that come later. */
    public void publish(T value) {
        requireNonNull(value, "value");
        synchronized (this) {
            last = value;
        }
        for (Consumer<? super T> subscriber : subscribers) {
            subscriber.accept(value);
        }
    }

    /**
     * Publishes {@code change} applied to the last value ({@code initial} before the first), when that differs from
     * it (by identity): a value that only grows, told from several threads, loses nothing. Under one lock per
     * channel; subscribers run under it too.
     */
    public void update(T initial, UnaryOperator<T> change) {
        requireNonNull(initial, "initial");
        synchronized (updates) {
            T before = last == null ? initial : last;
            T after = change.apply(before);
            if (after != before) {
                publish(after);
            }
        }
    }

    /** Calls {@code subscriber} with the last value now (if any) and with every value after. */
    public void subscribe(Consumer<? super T> subscriber) {
        requireNonNull(subscriber, "subscriber");
        T current;
        synchronized (this) {
            subscribers.add(subscriber);
            current = last;
        }
        if (current != null) {
            subscriber.accept(current);
        }
    }

    /** The last value published. */
    public Optional<T> last() {
        return Optional.ofNullable(last);
    }

    @Override
    public String toString() {
        return "Channel{" + name + "}";
    }
}
