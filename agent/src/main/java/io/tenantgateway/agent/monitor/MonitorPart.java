package io.tenantgateway.agent.monitor;

import static java.util.Objects.requireNonNull;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.tenantgateway.agent.health.HealthCheck;
import io.tenantgateway.agent.health.HealthServer;
import io.tenantgateway.agent.http.HttpEndpoint;
import io.tenantgateway.agent.http.HttpLoop;
import io.tenantgateway.agent.http.Request;
import io.tenantgateway.agent.http.Response;
import io.tenantgateway.agent.k8s.KubernetesClients;
import io.tenantgateway.agent.k8s.KubernetesPermissions.Use;
import io.tenantgateway.agent.k8s.Pages;
import io.tenantgateway.agent.monitor.policy.CleanupPolicy;
import io.tenantgateway.agent.part.Part;
import io.tenantgateway.agent.part.PartContext;
import io.tenantgateway.agent.part.PartView;
import io.tenantgateway.agent.part.Plan;
import io.tenantgateway.common.concurrent.DaemonThreads;
import io.tenantgateway.common.text.PeerText;
import io.tenantgateway.hami.Annotations;
import java.net.InetSocketAddress;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The vGPU monitor: what HAMi's {@code vgpu-monitor} container does, as a part of the agent. Every scan interval it
 * lists this node's pods, reads each GPU container's HAMi-core region ({@link ContainerScanner}), publishes HAMi's
 * container metrics on the agent's {@code /metrics} and, unless {@code --monitor-listen=off}, on a listener of their
 * own (HAMi's port 9394), and removes the cache directories of pods that are gone ({@link CleanupPolicy}).
 *
 * <p>Reads only: it never writes into a region. HAMi's monitor also writes priority feedback into the regions of
 * containers sharing a GPU ({@code recent_kernel}, {@code utilization_switch}); that needs a test on a real GPU first,
 * and is not done here.
 *
 * <p>Threading: scans run on the part's one thread; the metrics, the readiness check and the views read the latest
 * {@link MonitorSnapshot}.
 */
public final class MonitorPart implements Part {
    /** The part's name. */
    public static final String NAME = "monitor";
    /** Its readiness check: the first scan is done. */
    public static final String CHECK = "monitor";
    private static final Logger log = LoggerFactory.getLogger(MonitorPart.class);

    private final MonitorConfig config;
    private final AtomicReference<MonitorSnapshot> latest = new AtomicReference<>(MonitorSnapshot.NONE);
    private volatile ContainerScanner scanner;
    private volatile InetSocketAddress listening;
    private ScheduledExecutorService executor;
    private HttpLoop loop;
    private HttpEndpoint endpoint;

    public MonitorPart(MonitorConfig config) {
        this.config = requireNonNull(config, "config");
    }

    @Override
    public Plan plan() {
        return Plan.of(NAME).withNodeName().check(CHECK).uses(Use.NODE_PODS);
    }

    /** The latest scan (for the status page and {@code /debug/monitor}). */
    public MonitorSnapshot snapshot() {
        return latest.get();
    }

    /** The status page's "GPU containers" and {@code /debug/monitor}, from the latest scan. */
    @Override
    public Optional<PartView> view() {
        return Optional.of(MonitorView.of(latest.get()));
    }

    /** The settings this part runs with. */
    public MonitorConfig config() {
        return config;
    }

    /** The HAMi-compatible listener's address once bound. */
    public Optional<InetSocketAddress> listening() {
        return Optional.ofNullable(listening);
    }

    @Override
    public void start(PartContext context) throws Exception {
        String node = context.nodeName();
        Clock clock = context.clock();
        ContainerScanner scan = new ContainerScanner(config.containersDir(), new CleanupPolicy(config.cacheGrace()),
                config.maxContainers());
        scanner = scan;
        MonitorMetrics metrics = new MonitorMetrics(latest::get, clock);
        context.registry().register(metrics);
        registerOwnMetrics(context.registry(), scan);
        context.bind(new HealthCheck(CHECK, this::readiness));
        if (config.listen().isPresent()) {
            startListener(config.listen().get(), metrics);
        }
        KubernetesClient client = context.kubernetes();
        executor = Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("tg-monitor"));
        // The last pods the API listed: a scan whose list fails still reads the regions of the pods known.
        AtomicReference<List<PodInfo>> pods = new AtomicReference<>(List.of());
        executor.scheduleWithFixedDelay(() -> {
            Optional<String> error = Optional.empty();
            try {
                pods.set(pods(client, node));
            } catch (RuntimeException e) {
                error = Optional.of(KubernetesClients.describeFailure(client, e));
            }
            try {
                latest.set(scan.scan(pods.get(), error, clock.instant()));
            } catch (RuntimeException e) {
                log.atError().setCause(e).log("vGPU monitor scan failed");
            }
        }, 0, config.scanInterval().toMillis(), TimeUnit.MILLISECONDS);
        log.atInfo().addKeyValue("dir", config.containersDir()).addKeyValue("listen", listening().map(String::valueOf)
                .orElse("off")).addKeyValue("grace", io.tenantgateway.common.time.GoDuration.format(
                        config.cacheGrace())).log("vGPU monitor started");
    }

    private HealthCheck.Result readiness() {
        MonitorSnapshot snapshot = latest.get();
        if (snapshot.at().isEmpty()) {
            return HealthCheck.Result.failed("first scan of " + config.containersDir() + " not done yet");
        }
        long regions = snapshot.containers().stream()
                .filter(c -> c.source() == ContainerUsage.Source.REGION).count();
        String detail = regions + " container(s) read, " + (snapshot.containers().size() - regions)
                + " from annotations only";
        return new HealthCheck.Result(true, snapshot.podsError().map(e -> detail + "; pods not listed: " + e
                + " (no cache directory is removed meanwhile)").orElse(detail));
    }

    private void registerOwnMetrics(PrometheusRegistry registry, ContainerScanner scan) {
        CounterWithCallback.builder().name("tenant_gateway_monitor_regions_skipped_total")
                .help("HAMi-core regions not trusted and skipped, by reason").labelNames("reason")
                .callback(callback -> scan.skipped().forEach((reason, count) -> callback.call(count, reason)))
                .register(registry);
        CounterWithCallback.builder().name("tenant_gateway_monitor_scans_total")
                .help("Scans of HAMi-core's container directories").callback(callback -> callback.call(scan.scans()))
                .register(registry);
        CounterWithCallback.builder().name("tenant_gateway_monitor_cache_directories_removed_total")
                .help("HAMi-core cache directories removed after their pod was gone for the grace")
                .callback(callback -> callback.call(scan.removed())).register(registry);
        GaugeWithCallback.builder().name("tenant_gateway_monitor_containers")
                .help("GPU containers the last scan exported, by where their figures came from")
                .labelNames("limit_source").callback(callback -> {
                    MonitorSnapshot snapshot = latest.get();
                    for (ContainerUsage.Source source : ContainerUsage.Source.values()) {
                        callback.call(snapshot.containers().stream().filter(c -> c.source() == source).count(),
                                source.label());
                    }
                }).register(registry);
        GaugeWithCallback.builder().name("tenant_gateway_monitor_cache_directories_waiting")
                .help("HAMi-core cache directories without a live pod, kept until their grace has passed")
                .callback(callback -> callback.call(latest.get().waitingForCleanup().size())).register(registry);
    }

    private void startListener(InetSocketAddress address, MonitorMetrics metrics) {
        PrometheusRegistry hami = new PrometheusRegistry();
        hami.register(metrics);
        PrometheusTextFormatWriter writer = PrometheusTextFormatWriter.create();
        loop = new HttpLoop("tg-monitor-http");
        loop.start();
        endpoint = new HttpEndpoint(loop, "vGPU monitor listener", "--monitor-listen", address.getHostString(),
                address.getPort(), (Request request, Response response) -> {
                    if (!request.path().equals("/metrics")) {
                        response.status(404).header("content-type", "text/plain; charset=utf-8")
                                .end("404 page not found: " + PeerText.quote(request.path(), 256)
                                        + " (paths: /metrics)\n");
                        return;
                    }
                    HealthServer.metrics(loop, hami, writer, response);
                });
        endpoint.start();
        listening = new InetSocketAddress(address.getHostString(), endpoint.boundPort());
        log.atInfo().addKeyValue("address", address.getHostString() + ":" + endpoint.boundPort())
                .addKeyValue("paths", "/metrics").log("vGPU monitor listening");
    }

    /** This node's pods, as the monitor needs them. */
    private List<PodInfo> pods(KubernetesClient client, String node) {
        List<PodInfo> out = new ArrayList<>();
        for (Pod pod : Pages.podsOn(client, node, config.podFieldSelector())) {
            if (pod.getMetadata() == null || pod.getMetadata().getUid() == null) {
                continue;
            }
            String phase = pod.getStatus() == null ? null : pod.getStatus().getPhase();
            Map<String, String> annotations = pod.getMetadata().getAnnotations();
            out.add(new PodInfo(pod.getMetadata().getUid(), pod.getMetadata().getNamespace(),
                    pod.getMetadata().getName(), names(pod.getSpec().getInitContainers()),
                    names(pod.getSpec().getContainers()), "Succeeded".equals(phase) || "Failed".equals(phase),
                    Optional.ofNullable(annotations == null ? null
                            : Annotations.get(annotations, Annotations.POD_DEVICES_ALLOCATED))));
        }
        return out;
    }

    private static List<String> names(List<Container> containers) {
        return containers == null ? List.of() : containers.stream().map(Container::getName).toList();
    }

    @Override
    public void close() {
        if (executor != null) {
            executor.shutdownNow();
        }
        if (scanner != null) {
            scanner.close();
        }
        if (endpoint != null) {
            endpoint.close();
        }
        if (loop != null) {
            loop.close();
        }
    }
}
