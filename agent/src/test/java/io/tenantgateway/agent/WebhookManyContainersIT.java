package io.tenantgateway.agent;

import static io.tenantgateway.agent.testing.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tenantgateway.agent.testing.AgentProcess;
import io.tenantgateway.agent.testing.AgentProcessTestBase;
import io.tenantgateway.agent.testing.LoopbackHttp;
import io.tenantgateway.agent.testing.TunnelTestbed;
import io.tenantgateway.agent.testing.WebhookHttps;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The red team's pod of thousands of one-GPU containers (issue 31), against the agent started as the image starts
 * it ({@code bin/tenant-gateway run} with the webhook on: 64 MiB heap, the webhook's account 30 % of it). Reviews of
 * 3,000, 5,000 and 10,000 containers, each {@code nvidia.com/gpu: "1"}, are answered with HAMi's patch (the
 * scheduler name, and {@code nvidia.com/gpucores: "100"} in every container: exclusive memory); while each is decided,
 * small admissions on other connections keep being answered (at least one between the large request and its answer); a
 * review no account could decide (3 MiB of minimal containers) is answered 413 naming the limit; the agent stays up,
 * its RSS under the manifests' 320 MiB limit. The times are printed; the issue's bounds (the large answer within
 * kube-apiserver's 10 s, the small ones' p99 under 1 s) hold on a quiet machine, and a loaded CI can miss them for
 * reasons of its own, so by default each must only come within the tests' generous ceiling:
 * {@code -Dtenantgateway.it.largeAnswerBoundMs=10000 -Dtenantgateway.it.smallP99BoundMs=1000} enforce the issue's.
 */
@Timeout(240)
class WebhookManyContainersIT extends AgentProcessTestBase {
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final long MANIFEST_LIMIT_KIB = 320 * 1024;
    /**
     * The large answer comes within this: {@code WAIT} unless the system property says (kube-apiserver's longest
     * webhook timeout is 30 s; HAMi's webhook configuration sets 10 s, the issue's bound).
     */
    private static final Duration LARGE_ANSWER_BOUND =
            Duration.ofMillis(Long.getLong("tenantgateway.it.largeAnswerBoundMs", WAIT.toMillis()));
    /** Small admissions go on while a large one is decided: their p99 stays under this (the issue's: 1 s). */
    private static final long SMALL_P99_BOUND_MS = Long.getLong("tenantgateway.it.smallP99BoundMs", WAIT.toMillis());

    private final ScheduledExecutorService sampler = Executors.newSingleThreadScheduledExecutor();
    private final ExecutorService smallCallers = Executors.newFixedThreadPool(2);
    private final AtomicLong rssPeakKiB = new AtomicLong();

    @AfterEach
    void stop() {
        sampler.shutdownNow();
        smallCallers.shutdownNow();
        if (agent != null && !agent.process.isAlive()) {
            System.out.printf("agent exited with %d; its last log lines:%n%s%n", agent.process.exitValue(),
                    String.join("\n", agent.log.subList(Math.max(0, agent.log.size() - 40), agent.log.size())));
        }
    }

    @Test
    void podsOfThousandsOfGpuContainersAreAnsweredAsHamiAnswersThemWhileSmallOnesGoOn() throws Exception {
        testbed = new TunnelTestbed(dir);
        int port = TunnelTestbed.freePort();
        int health = TunnelTestbed.freePort();
        agent = AgentProcess.launch(testbed.webhookArgs(port, health));
        agent.awaitLine("webhook listening", Duration.ofSeconds(60));
        sampler.scheduleAtFixedRate(() -> {
            try {
                rssPeakKiB.accumulateAndGet(agent.rssKiB(), Math::max);
            } catch (Exception gone) {
                // the process ended: the assertions below say so
            }
        }, 0, 20, TimeUnit.MILLISECONDS);
        WebhookHttps large = new WebhookHttps(testbed.pki);
        WebhookHttps small = new WebhookHttps(testbed.pki);
        // Warm up both paths (class loading, TLS, the decision workers) so the figures below are the decision's.
        assertThat(small.admitPod(port, "team-a", pod(1)).allowed()).isTrue();
        assertThat(large.admitPod(port, "team-a", pod(600)).allowed()).isTrue();

        for (int containers : new int[] {3_000, 5_000, 10_000}) {
            String pod = pod(containers);
            List<Long> smallMillis = new ArrayList<>();
            AtomicBoolean deciding = new AtomicBoolean(true);
            CompletableFuture<Void> smallLoop = CompletableFuture.runAsync(() -> {
                while (deciding.get()) {
                    long start = System.nanoTime();
                    try {
                        WebhookHttps.Answer answer = small.admitPod(port, "team-a", pod(1));
                        assertThat(answer.allowed()).as(answer.message()).isTrue();
                    } catch (Exception e) {
                        throw new AssertionError("small admission failed while a large one was decided", e);
                    }
                    synchronized (smallMillis) {
                        smallMillis.add((System.nanoTime() - start) / 1_000_000);
                    }
                }
            }, smallCallers);
            await().atMost(WAIT).until(() -> answered(smallMillis) > 0); // the small ones are going

            int answeredBefore = answered(smallMillis);
            long start = System.nanoTime();
            WebhookHttps.Answer answer = large.admitPod(port, "team-a", pod);
            Duration took = Duration.ofNanos(System.nanoTime() - start);
            int answeredMeanwhile = answered(smallMillis) - answeredBefore;
            deciding.set(false);
            smallLoop.get(60, TimeUnit.SECONDS);

            assertThat(answer.httpStatus()).as(answer.message()).isEqualTo(200);
            assertThat(answer.allowed()).as(answer.message()).isTrue();
            assertThat(operations(answer.patch())).isEqualTo(hamiPatch(containers));
            assertThat(took).as("%d containers answered within %s", containers, LARGE_ANSWER_BOUND)
                    .isLessThan(LARGE_ANSWER_BOUND);
            assertThat(answeredMeanwhile).as("small admissions answered while %d containers were decided", containers)
                    .isPositive();
            long p99 = percentile(smallMillis, 0.99);
            System.out.printf("%,d one-GPU containers (%,d bytes): answered in %d ms with %d patch operations;"
                    + " %d small admissions meanwhile, p99 %d ms, max %d ms%n", containers, pod.length(),
                    took.toMillis(), containers + 1, smallMillis.size(), p99, percentile(smallMillis, 1.0));
            assertThat(p99).as("small admissions' p99 while %d containers are decided", containers)
                    .isLessThan(SMALL_P99_BOUND_MS);
        }

        System.out.printf("webhook account's peak after 10,000 containers: %s%n", LoopbackHttp.get(health, "/metrics")
                .body().lines().filter(line -> line.startsWith("tenant_gateway_memory_budget_peak_bytes{account=\"webhook-bodies\""))
                .toList());
        // 3 MiB of minimal containers: what kube-apiserver could send, more than the account could ever hold.
        String minimal = minimalPod(3 * 1024 * 1024 - 1024);
        WebhookHttps.Answer tooLarge = large.admitPod(port, "team-a", minimal);
        assertThat(tooLarge.httpStatus()).as(tooLarge.message()).isEqualTo(413);
        assertThat(tooLarge.message()).startsWith("admission review too large to decide")
                .contains("webhook's memory account webhook-bodies holds at most");
        assertThat(small.admitPod(port, "team-a", pod(1)).allowed()).isTrue();

        String metrics = LoopbackHttp.get(health, "/metrics").body();
        System.out.printf("agent VmRSS peak %,d KiB; webhook account: %s%n", rssPeakKiB.get(), metrics.lines()
                .filter(line -> line.contains("account=\"webhook-bodies\"") && !line.startsWith("#")).toList());
        assertThat(agent.process.isAlive()).isTrue();
        assertThat(agent.lines("OutOfMemoryError")).isEmpty();
        assertThat(rssPeakKiB.get()).isLessThan(MANIFEST_LIMIT_KIB);
    }

    /** The operations HAMi's webhook answers for {@code containers} one-GPU containers (hami.md: exclusive memory). */
    private static Set<String> hamiPatch(int containers) {
        Set<String> operations = new HashSet<>();
        operations.add("add /spec/schedulerName \"hami-scheduler\"");
        for (int i = 0; i < containers; i++) {
            operations.add("add /spec/containers/" + i + "/resources/limits/nvidia.com~1gpucores \"100\"");
        }
        return operations;
    }

    private static Set<String> operations(String patch) {
        Set<String> operations = new HashSet<>();
        for (JsonNode op : JSON.readTree(patch)) {
            boolean added = operations.add(op.path("op").asString() + " " + op.path("path").asString() + " "
                    + op.path("value"));
            assertThat(added).as("operation repeated: %s", op).isTrue();
        }
        return operations;
    }

    /** A pod of {@code containers} containers, each asking for one GPU (about 110 bytes each, as a Deployment's). */
    private static String pod(int containers) {
        StringBuilder pod = new StringBuilder("{'apiVersion':'v1','kind':'Pod','metadata':{'name':'many',"
                + "'namespace':'team-a'},'spec':{'containers':[");
        for (int i = 0; i < containers; i++) {
            pod.append(i == 0 ? "" : ",").append("{'name':'worker-").append(i).append("','image':'cuda:12',"
                    + "'imagePullPolicy':'IfNotPresent','resources':{'limits':{'nvidia.com/gpu':'1'}}}");
        }
        return pod.append("]}}").toString();
    }

    /** A pod of one-GPU containers without image or anything else, {@code bytes} long. */
    private static String minimalPod(int bytes) {
        StringBuilder pod = new StringBuilder("{'metadata':{'name':'minimal'},'spec':{'containers':[");
        for (int i = 0; pod.length() < bytes - 100; i++) {
            pod.append(i == 0 ? "" : ",").append("{'name':'c").append(i)
                    .append("','resources':{'limits':{'nvidia.com/gpu':'1'}}}");
        }
        return pod.append("]}}").toString();
    }

    private static int answered(List<Long> millis) {
        synchronized (millis) {
            return millis.size();
        }
    }

    private static long percentile(List<Long> millis, double quantile) {
        List<Long> sorted;
        synchronized (millis) {
            sorted = new ArrayList<>(millis);
        }
        if (sorted.isEmpty()) {
            return 0;
        }
        sorted.sort(null);
        return sorted.get((int) Math.min(sorted.size() - 1, Math.ceil(quantile * sorted.size()) - 1));
    }

}
