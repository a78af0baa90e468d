package io.tenantgateway.agent.k8s;

import static java.util.Objects.requireNonNull;

import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import java.util.function.Consumer;

/** Informer callbacks for the common case: one action when an object appears or changes, one when it goes. */
public final class EventHandlers {
    private EventHandlers() {
    }

    /**
     * @param changed called with the new state on add and update (must only read state or enqueue: informer
     *     callbacks run on fabric8's thread)
     * @param deleted called with the last known state on delete
     */
    public static <T> ResourceEventHandler<T> of(Consumer<T> changed, Consumer<T> deleted) {
        requireNonNull(changed, "changed");
        requireNonNull(deleted, "deleted");
        return new ResourceEventHandler<>() {
            @Override
            public void onAdd(T object) {
                changed.accept(object);
            }

            @Override
            public void onUpdate(T old, T object) {
                changed.accept(object);
            }

            @Override
            public void onDelete(T object, boolean finalStateUnknown) {
                deleted.accept(object);
            }
        };
    }
}
