package io.tenantgateway.agent.leases;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.KubernetesClientException;
import java.io.IOException;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;

/** The {@code http_status_code} label of the lease metrics (the calls themselves: {@code ObservabilityIT}). */
class LeaseServerCounterTest {
    @Test
    void statusCodeOfAListOrWatchCall() {
        assertThat(LeaseServerCounter.statusCode(null)).isEqualTo("200");
        assertThat(LeaseServerCounter.statusCode(new KubernetesClientException("forbidden", 403, null)))
                .isEqualTo("403");
        assertThat(LeaseServerCounter.statusCode(new CompletionException(
                new KubernetesClientException("gone", 410, null)))).isEqualTo("410");
        assertThat(LeaseServerCounter.statusCode(new KubernetesClientException("no answer", new IOException("reset"))))
                .as("no HTTP status").isEqualTo("0");
        assertThat(LeaseServerCounter.statusCode(new IOException("connection refused"))).isEqualTo("0");
    }
}
