package io.tenantgateway.deviceplugin.policy;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.common.text.PeerText;

/** Which pod an Allocate call is for, as far as the node lock tells ({@link PendingPodPolicy#fromLock}). */
public sealed interface PodChoice {
    /** The pod the node lock names: read exactly that one. */
    record ByLock(String namespace, String name) implements PodChoice {
        public ByLock {
            requireNonNull(namespace, "namespace");
            requireNonNull(name, "name");
        }
    }

    /** No lock names a pod: look for the pending pod on this node ({@link PendingPodPolicy#pick}). */
    record Search() implements PodChoice {
    }

    /** The lock cannot be read: refuse the call, touch nothing ({@code message} bounded: {@link PeerText#bound}). */
    record Refuse(String message) implements PodChoice {
        public Refuse {
            message = PeerText.bound(requireNonNull(message, "message"));
        }
    }
}
