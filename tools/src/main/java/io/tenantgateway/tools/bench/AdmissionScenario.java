package io.tenantgateway.tools.bench;

import static java.util.Objects.requireNonNull;

import ch.qos.logback.classic.Level;
import io.netty.handler.ssl.SslContext;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.tenantgateway.certs.TlsContexts;
import io.tenantgateway.webhook.WebhookConfig;
import io.tenantgateway.webhook.WebhookServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.LoggerFactory;

/**
 * admission: the HAMi webhook ({@link WebhookServer}, in-process on 127.0.0.1) called with AdmissionReviews of a
 * GPU pod, through the tunnel and straight to its port. Two measurements per route:
 * <ul>
 *   <li>fixed rate (200/s, open loop: each request's latency counts from when it was due, so a stall is not
 *       hidden by the requests it delayed) → p50 and p99;</li>
 *   <li>maximum rate: a fixed number of requests in flight (one kept-alive connection each) for a while →
 *       requests per second.</li>
 * </ul>
 * Every answer must be HTTP 200 with the request's uid and {@code allowed: true}.
 */
final class AdmissionScenario {
    private static final int WARMUP_REQUESTS = 300;

    private final BenchRig rig;
    private final BenchSizes sizes;

    AdmissionScenario(BenchRig rig, BenchSizes sizes) {
        this.rig = requireNonNull(rig, "rig");
        this.sizes = requireNonNull(sizes, "sizes");
    }

    /** Requests answered and allowed, per route. */
    private static final class Tally {
        final AtomicLong sent = new AtomicLong();
        final AtomicLong allowed = new AtomicLong();

        Map<String, Object> toMap(int connections) {
            return new LinkedHashMap<>(Map.of("requests", sent.get(), "allowed", allowed.get(),
                    "connectionsOpened", connections));
        }
    }

    ScenarioResult run() throws Exception {
        // The webhook logs every admission at INFO; thousands of lines per second would measure the log, not
        // the path. Quiet it for the run.
        org.slf4j.Logger admissionLog = LoggerFactory.getLogger("io.tenantgateway.webhook.AdmissionHandler");
        if (!(admissionLog instanceof ch.qos.logback.classic.Logger logback)) {
            return measure();
        }
        Level level = logback.getLevel();
        logback.setLevel(Level.WARN);
        try {
            return measure();
        } finally {
            logback.setLevel(level);
        }
    }

    private ScenarioResult measure() throws Exception {
        WebhookConfig config = WebhookConfig.builder().host("127.0.0.1").port(0).build();
        try (WebhookServer webhook = WebhookServer.builder(config).serverTls(rig.pki.webhookMaterial())
                .registry(new PrometheusRegistry()).clock(rig.clock).build()) {
            webhook.start();
            InetSocketAddress address = new InetSocketAddress("127.0.0.1", webhook.port());
            SslContext tls = TlsContexts.client(rig.pki.trustMaterial(), rig.clock);
            Map<String, List<LatencyRun>> fixed = new LinkedHashMap<>();
            Map<String, List<Double>> maxRates = new LinkedHashMap<>();
            Map<String, Tally> tallies = new LinkedHashMap<>();
            int pool = sizes.admissionConcurrency();
            List<AdmissionClient> clients = List.of(new AdmissionClient(rig.direct, address, tls, pool),
                    new AdmissionClient(rig.tunnel, address, tls, pool));
            try {
                for (AdmissionClient client : clients) {
                    String name = client.route().name();
                    fixed.put(name, new ArrayList<>());
                    maxRates.put(name, new ArrayList<>());
                    tallies.put(name, new Tally());
                }
                for (int i = 0; i < sizes.warmups(); i++) {
                    for (AdmissionClient client : clients) {
                        warmUp(client, tallies.get(client.route().name()));
                    }
                }
                for (int i = 0; i < sizes.repeats(); i++) {
                    for (AdmissionClient client : clients) {
                        String name = client.route().name();
                        fixed.get(name).add(fixedRate(client, tallies.get(name)));
                    }
                }
                for (int i = 0; i < sizes.repeats(); i++) {
                    for (AdmissionClient client : clients) {
                        String name = client.route().name();
                        maxRates.get(name).add(maxRate(client, sizes.admissionMaxRun().toNanos(), tallies.get(name)));
                    }
                }
                return result(fixed, maxRates, tallies, clients);
            } finally {
                clients.forEach(AdmissionClient::close);
            }
        }
    }

    private ScenarioResult result(Map<String, List<LatencyRun>> fixed, Map<String, List<Double>> maxRates,
            Map<String, Tally> tallies, List<AdmissionClient> clients) {
        List<LatencyRun> tunnel = fixed.get("tunnel");
        List<LatencyRun> direct = fixed.get("direct");
        double tunnelP50 = Stats.median(tunnel.stream().map(LatencyRun::p50Millis).toList());
        double directP50 = Stats.median(direct.stream().map(LatencyRun::p50Millis).toList());
        double tunnelP99 = Stats.median(tunnel.stream().map(LatencyRun::p99Millis).toList());
        double directP99 = Stats.median(direct.stream().map(LatencyRun::p99Millis).toList());
        double tunnelMax = Stats.median(maxRates.get("tunnel"));
        double directMax = Stats.median(maxRates.get("direct"));
        String rate = sizes.admissionRate() + "/s";
        List<Figure> figures = List.of(
                Figure.compared("p50 @" + rate, "ms", tunnelP50, directP50, "direct"),
                Figure.comparedWithTarget("p99 @" + rate, "ms", tunnelP99, directP99, "direct",
                        "p99 <= direct p99 + 1 ms", tunnelP99 <= directP99 + 1.0),
                Figure.compared("max rate (" + sizes.admissionConcurrency() + " in flight)", "req/s", tunnelMax,
                        directMax, "direct"));
        Map<String, Object> details = new LinkedHashMap<>();
        details.put("ratePerSecond", sizes.admissionRate());
        details.put("requestsPerFixedRun", requestsPerFixedRun());
        details.put("concurrency", sizes.admissionConcurrency());
        Map<String, Object> counts = new LinkedHashMap<>();
        for (AdmissionClient client : clients) {
            counts.put(client.route().name(), tallies.get(client.route().name()).toMap(client.opened()));
        }
        details.put("requests", counts);
        details.put("runsP99Millis", Map.of("tunnel", tunnel.stream().map(LatencyRun::p99Millis).toList(),
                "direct", direct.stream().map(LatencyRun::p99Millis).toList()));
        details.put("runsMaxRate", maxRates);
        LatencyRun typical = tunnel.get(tunnel.size() / 2);
        int cores = Runtime.getRuntime().availableProcessors();
        String limits = String.format(Locale.ROOT, "at %s the CPU is mostly idle (%.0f%% of %d cores; webhook %.0f%%,"
                + " agent %.0f%%): latency is the sum of the hops; the max rate is CPU-bound (TLS and JSON in the"
                + " webhook, the tunnel's hops)", rate, 100 * typical.cpu().share(CpuMeter.PROCESS, cores), cores,
                100 * typical.cpu().share(BenchRig.WEBHOOK, cores), 100 * typical.cpu().share(BenchRig.AGENT, cores));
        return new ScenarioResult(Scenario.ADMISSION, figures, limits, details);
    }

    private int requestsPerFixedRun() {
        return (int) Math.max(1, sizes.admissionRate() * sizes.admissionFixedRun().toMillis() / 1000);
    }

    /** Open loop: request i is due at start + i/rate; its latency runs from then until its answer. */
    private LatencyRun fixedRate(AdmissionClient client, Tally tally) throws Exception {
        int count = requestsPerFixedRun();
        long period = TimeUnit.SECONDS.toNanos(1) / sizes.admissionRate();
        long[] latencies = new long[count];
        List<CompletableFuture<Void>> answers = new ArrayList<>(count);
        CpuMeter.Sample before = rig.cpu.sample();
        long start = System.nanoTime();
        for (int i = 0; i < count; i++) {
            long due = start + i * period;
            long wait;
            while ((wait = due - System.nanoTime()) > 0) {
                LockSupport.parkNanos(wait);
            }
            int index = i;
            answers.add(call(client, tally).thenAccept(done -> latencies[index] = System.nanoTime() - due));
        }
        await(answers, client);
        return new LatencyRun(latencies, rig.cpu.sample().since(before));
    }

    /** Sequential, then concurrent requests: JIT-compiles both paths and opens the pool's connections. */
    private void warmUp(AdmissionClient client, Tally tally) throws Exception {
        for (int i = 0; i < WARMUP_REQUESTS; i++) {
            await(List.of(call(client, tally)), client);
        }
        maxRate(client, sizes.admissionMaxRun().toNanos(), tally);
    }

    /** Closed loop: {@code concurrency} requests in flight until the time is up; answers per second. */
    private double maxRate(AdmissionClient client, long durationNanos, Tally tally) throws Exception {
        AtomicLong completed = new AtomicLong();
        long start = System.nanoTime();
        long end = start + durationNanos;
        List<CompletableFuture<Void>> workers = new ArrayList<>();
        for (int i = 0; i < sizes.admissionConcurrency(); i++) {
            CompletableFuture<Void> worker = new CompletableFuture<>();
            loop(client, tally, end, completed, worker);
            workers.add(worker);
        }
        await(workers, client);
        long elapsed = System.nanoTime() - start;
        return completed.get() / (elapsed / 1e9);
    }

    private void loop(AdmissionClient client, Tally tally, long end, AtomicLong completed,
            CompletableFuture<Void> worker) {
        call(client, tally).whenComplete((done, error) -> {
            if (error != null) {
                worker.completeExceptionally(error);
            } else if (System.nanoTime() < end) {
                completed.incrementAndGet();
                loop(client, tally, end, completed, worker);
            } else {
                completed.incrementAndGet();
                worker.complete(null);
            }
        });
    }

    /** One AdmissionReview; completes when an allowed answer for its uid arrived. */
    private static CompletableFuture<Void> call(AdmissionClient client, Tally tally) {
        String uid = UUID.randomUUID().toString();
        tally.sent.incrementAndGet();
        return client.post(review(uid)).thenAccept(body -> {
            if (!body.contains("\"uid\":\"" + uid + "\"") || !body.contains("\"allowed\":true")) {
                throw new IllegalStateException("webhook answer for uid " + uid + " is not an allowed review: "
                        + (body.length() > 300 ? body.substring(0, 300) + "…" : body));
            }
            tally.allowed.incrementAndGet();
        });
    }

    private static void await(List<CompletableFuture<Void>> futures, AdmissionClient client) throws Exception {
        try {
            CompletableFuture.allOf(futures.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);
        } catch (ExecutionException | TimeoutException e) {
            Throwable cause = e.getCause() != null ? e.getCause() : e;
            throw new IOException(client.route().name() + " admission calls failed: " + cause, cause);
        }
    }

    /** An AdmissionReview for a pod asking for one GPU, as kube-apiserver sends it (about 1.5 KB). */
    static byte[] review(String uid) {
        String json = """
                {"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"%s",\
                "kind":{"group":"","version":"v1","kind":"Pod"},"resource":{"group":"","version":"v1",\
                "resource":"pods"},"requestKind":{"group":"","version":"v1","kind":"Pod"},\
                "requestResource":{"group":"","version":"v1","resource":"pods"},"name":"trainer-0",\
                "namespace":"team-a","operation":"CREATE","userInfo":{"username":\
                "system:serviceaccount:kube-system:statefulset-controller","groups":["system:serviceaccounts",\
                "system:serviceaccounts:kube-system","system:authenticated"]},"object":{"apiVersion":"v1",\
                "kind":"Pod","metadata":{"name":"trainer-0","namespace":"team-a","labels":{"app":"trainer",\
                "controller-revision-hash":"trainer-7d9c6b5f4"},"ownerReferences":[{"apiVersion":"apps/v1",\
                "kind":"StatefulSet","name":"trainer","uid":"6f1c2a4e-1c57-4a55-9a0e-2b1f0c7e9d11",\
                "controller":true,"blockOwnerDeletion":true}]},"spec":{"containers":[{"name":"cuda",\
                "image":"nvcr.io/nvidia/cuda:12.4.0-base-ubuntu22.04","command":["python","train.py"],\
                "resources":{"limits":{"nvidia.com/gpu":"1","nvidia.com/gpumem":"4000","cpu":"2",\
                "memory":"8Gi"},"requests":{"cpu":"1","memory":"4Gi"}},"volumeMounts":[{"name":"data",\
                "mountPath":"/data"}]}],"volumes":[{"name":"data","emptyDir":{}}],"restartPolicy":"Always",\
                "schedulerName":"default-scheduler","serviceAccountName":"default"}},"oldObject":null,\
                "dryRun":false,"options":{"apiVersion":"meta.k8s.io/v1","kind":"CreateOptions"}}}\
                """.formatted(uid);
        return json.getBytes(StandardCharsets.UTF_8);
    }
}
