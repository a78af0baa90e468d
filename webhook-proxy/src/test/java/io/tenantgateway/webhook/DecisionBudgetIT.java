package io.tenantgateway.webhook;

import static io.tenantgateway.webhook.Pods.container;
import static io.tenantgateway.webhook.Pods.pod;
import static io.tenantgateway.webhook.WebhookFixture.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.tenantgateway.common.memory.MemoryBudget;
import io.tenantgateway.webhook.policy.DeviceConfig;
import io.vertx.core.buffer.Buffer;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.node.ObjectNode;

/**
 * What a decision holds is charged to the webhook's account: a review whose decision could never fit the account
 * alone is answered 413 naming the limit; one that fits alone but not beside what others hold, 429 with
 * {@code Retry-After}; every byte is given back once answered.
 */
class DecisionBudgetIT {
    private final WebhookFixture fixture = new WebhookFixture();

    @AfterEach
    void close() {
        fixture.close();
    }

    private WebhookServer start(MemoryBudget.Account account) {
        WebhookServer server = WebhookServer.builder(WebhookFixture.loopback().build())
                .serverTls(fixture.pki.serverMaterial()).deviceConfig(DeviceConfig.defaults())
                .registry(new PrometheusRegistry()).vertx(fixture.vertx).bodyAccount(account).build();
        fixture.register(server);
        server.start();
        return server;
    }

    private static MemoryBudget.Account account(long bytes) {
        return MemoryBudget.fromLimits(bytes, bytes).account(RequestBodies.ACCOUNT, MemoryBudget.Pool.HEAP, 1.0, 0);
    }

    /** A pod of {@code containers} one-GPU containers: about 60 bytes of body, 1.4 KiB of decision, each. */
    private static ObjectNode review(int containers) {
        Pods.PodBuilder pod = pod("many");
        for (int i = 0; i < containers; i++) {
            pod.container(container("c" + i).gpu("1"));
        }
        return Reviews.podCreate(pod.build());
    }

    @Test
    void aDecisionThatCouldNeverFitIsRefused413NamingTheLimit() {
        MemoryBudget.Account account = account(2 * 1024 * 1024);
        WebhookServer server = start(account);
        ObjectNode review = review(3_000);
        byte[] body = Pods.JSON.writeValueAsBytes(review);
        assertThat(body.length).as("the body alone fits the account").isLessThan((int) account.limit() / 4);

        AdmissionClient.Reply reply = fixture.client.post(server.port(), "/webhook", "application/json",
                Buffer.buffer(body));

        assertThat(reply.status()).isEqualTo(413);
        String message = reply.json().path("response").path("status").path("message").asString();
        assertThat(message).startsWith("admission review too large to decide: it needs more than ")
                .endsWith("the webhook's memory account webhook-bodies holds at most " + account.limit()
                        + " bytes (a share of the agent's heap)");
        assertThat(reply.json().path("response").path("allowed").booleanValue()).isFalse();
        await().atMost(WAIT).until(() -> account.used() == 0);
    }

    @Test
    void theSameDecisionFitsAnAccountLargeEnoughAndGivesEveryByteBack() {
        MemoryBudget.Account account = account(16 * 1024 * 1024);
        WebhookServer server = start(account);

        AdmissionClient.Admission admission = fixture.client.admit(server.port(), review(3_000));

        assertThat(admission.allowed()).isTrue();
        assertThat(admission.patch()).hasSize(3_001);
        assertThat(admission.patchedPod().path("spec").path("containers").get(2_999).path("resources")
                .path("limits").path("nvidia.com/gpucores").asString()).isEqualTo("100");
        assertThat(account.peak()).as("the decision was charged: more than its body")
                .isGreaterThan(Pods.JSON.writeValueAsBytes(review(3_000)).length * 2L);
        await().atMost(WAIT).until(() -> account.used() == 0);
    }

    @Test
    void aDecisionThatFitsAloneButNotBesideOthersIsAnswered429() {
        MemoryBudget.Account account = account(16 * 1024 * 1024);
        WebhookServer server = start(account);
        long others = account.limit() - 1024 * 1024;
        assertThat(account.tryReserve(others)).isTrue(); // what other requests in flight hold

        AdmissionClient.Reply busy = fixture.client.post(server.port(), "/webhook", "application/json",
                Buffer.buffer(Pods.JSON.writeValueAsBytes(review(3_000))));

        assertThat(busy.status()).isEqualTo(429);
        assertThat(busy.json().path("response").path("status").path("message").asString())
                .startsWith("webhook memory budget exhausted: account webhook-bodies holds ").endsWith("retry later");
        await().atMost(WAIT).until(() -> account.used() == others);
        account.release(others);
        assertThat(fixture.client.admit(server.port(), review(3_000)).allowed()).isTrue();
    }
}
