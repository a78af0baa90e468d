package io.tenantgateway.agent.deviceplugin;

import io.fabric8.kubernetes.client.KubernetesClientException;
import io.tenantgateway.common.text.PeerText;

/** How the allocator's parts read an API error: whether a later attempt may mend it, and how a log line names it. */
final class ApiErrors {
    private ApiErrors() {
    }

    /** A conflict, throttling, a server error or no answer at all: the same request may succeed later. */
    static boolean retryable(KubernetesClientException e) {
        int code = e.getCode();
        return code == 409 || code == 429 || code >= 500 || code <= 0;
    }

    /** {@code HTTP <code>: <message>} or {@code no answer: <message>}, the message bounded (it may quote a peer). */
    static String describe(KubernetesClientException e) {
        return (e.getCode() > 0 ? "HTTP " + e.getCode() : "no answer") + ": " + PeerText.bound(e.getMessage());
    }
}
