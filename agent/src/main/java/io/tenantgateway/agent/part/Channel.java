package io.tenantgateway.agent.part;

import static java.util.Objects.requireNonNull;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * A value one part publishes and others follow, through their {@link PartContext}: the last value is replayed to a
 * new subscriber, so the order in which parts start does not matter. Subscribers run on the publisher's thread and
 * must not block.
 *
 * @param <T> what is published
 */
public final class Channel<T> {
    private final String name;
    private final List<Consumer<? super T>> subscribers = new CopyOnWriteArrayList<>();
    private volatile T last;

    Channel(String name) {
        this.name = requireNonNull(name, "name");
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
