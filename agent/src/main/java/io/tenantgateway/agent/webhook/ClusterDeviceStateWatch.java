package io.tenantgateway.agent.webhook;

import static java.util.Objects.requireNonNull;

import io.fabric8.kubernetes.api.model.ListOptions;
import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeList;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.prometheus.metrics.core.metrics.Gauge;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.tenantgateway.agent.k8s.Pages;
import io.tenantgateway.common.retry.Backoff;
import io.tenantgateway.webhook.policy.ClusterDeviceState;
import io.tenantgateway.webhook.policy.DeviceConfig;
import io.tenantgateway.webhook.policy.EnflameSharedVendor;
import io.tenantgateway.webhook.policy.VendorBlock;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Map.Entry;
import java.util.NavigableMap;
import java.util.OptionalLong;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The scheduler-side state HAMi's webhook decisions depend on ({@link ClusterDeviceState}), learnt from the
 * cluster's Node capacities the way HAMi's scheduler learns it from the Nodes it registers (spec hami-vendors.md
 * §3.7, §3.8):
 *
 * <ul>
 *   <li>AWS Neuron (v2.10) cores per device: {@code <resourceCoreName> ÷ <resourceCountName>} capacity (the names of
 *       the {@code awsneuron} block of the device config in use, {@code aws.amazon.com/neuroncore} and
 *       {@code aws.amazon.com/neuron} by default; integer division), capped at 2. A node counts when both are
 *       integers and the quotient is at least 1 (HAMi keeps looking while it is 0).</li>
 *   <li>Enflame (v2.9) slice factor: {@code enflame.com/shared-gcu ÷ enflame.com/gcu-count} capacity (HAMi's
 *       constants, not configurable; a missing shared-gcu counts 0). A node counts when its gcu-count is a positive
 *       integer.</li>
 * </ul>
 *
 * <p>HAMi takes the first Neuron node it registered and the last Enflame node, which depends on its start and timing;
 * here both come from the counting node with the <b>smallest name</b>, so every agent of a DaemonSet decides alike.
 * HAMi keeps its first Neuron value until it restarts; here a deleted or changed node changes the value. Before the
 * first list, without a counting node, and while the API is unreachable before that: HAMi's defaults (2 and 0).
 * After a failure the last learnt value stays until a relist succeeds.
 *
 * <p>Memory: Nodes are never cached. A list reads {@value #PAGE_SIZE} Nodes a page and keeps, per counting node, its
 * name and one number, at most {@value #MAX_NODES} nodes per vendor (beyond that the largest names are dropped; the
 * value comes from the smallest name, so it stays right until that many nodes go away, and the next relist corrects
 * it); the watch sees one Node at a time. A watch that expires (410 Gone) or fails is relisted at once, then, while
 * relists follow each other with no watch event between them, with backoff (1 s, ×1.5, 10 % jitter, at most 30 s).
 *
 * <p>Never part of readiness and never waited for by admissions. One INFO line per change of the learnt value;
 * gauges {@code tenant_gateway_webhook_neuron_cores_per_device} and
 * {@code tenant_gateway_webhook_enflame_shared_gcu_factor} show the value in use.
 *
 * <p>Threading: {@link #start()} lists on the caller's thread; later relists run on one scheduler thread; watch
 * events arrive on the client's threads. The maps, the generation and the subscribers are guarded by one lock;
 * subscribers are called under it, in order. Lifecycle: not a {@link io.tenantgateway.common.lifecycle.Lifecycle},
 * on purpose (as {@link DeviceConfigWatch}): the agent retries {@link #start()} on this instance until the first list
 * succeeds. One live instance per {@link PrometheusRegistry}.
 */
public final class ClusterDeviceStateWatch implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ClusterDeviceStateWatch.class);
    /** Counting nodes kept per vendor. */
    static final int MAX_NODES = 4096;
    /** Nodes per list page (a page of whole Nodes is the largest transient this watch holds). */
    static final long PAGE_SIZE = Pages.NODES;
    /** HAMi v2.9's Enflame capacity names (constants in HAMi, not in the device config). */
    static final String ENFLAME_GCU_COUNT = "enflame.com/gcu-count";
    static final String ENFLAME_SHARED_GCU = EnflameSharedVendor.SHARED_GCU;
    /** HAMi v2.10's cap ({@code maxCoresPerNeuronDevice}: its core mask has two bits). */
    static final long MAX_NEURON_CORES_PER_DEVICE = 2;
    private static final Backoff RELIST = Backoff.agentSync(Duration.ofSeconds(1), Duration.ofSeconds(30));

    /** The Neuron capacity names of the device config in use. */
    record NeuronNames(String count, String core) {
        static NeuronNames of(DeviceConfig devices) {
            VendorBlock block = devices.block("awsneuron");
            return new NeuronNames(block.name("resourceCountName"), block.name("resourceCoreName"));
        }
    }

    private final KubernetesClient client;
    private final PrometheusRegistry registry;
    private final Gauge neuronGauge;
    private final Gauge enflameGauge;
    private final ScheduledExecutorService scheduler;
    private final List<Consumer<ClusterDeviceState>> subscribers = new CopyOnWriteArrayList<>();
    private final Object lock = new Object();

    // Guarded by lock.
    private NeuronNames names;
    private TreeMap<String, Long> neuron = new TreeMap<>();
    private TreeMap<String, Long> enflame = new TreeMap<>();
    private long generation;
    private Watch watch;
    private boolean started;
    private boolean closed;
    private boolean relistPending;
    private boolean capReported;
    /** Relists in a row with no watch event between them (a watch that keeps failing must not spin). */
    private int relistsInARow;

    private volatile ClusterDeviceState current = ClusterDeviceState.DEFAULTS;
    private volatile boolean listed;

    /**
     * @param devices the device config in use now (its {@code awsneuron} names); later ones through
     *     {@link #deviceConfig}
     */
    public ClusterDeviceStateWatch(KubernetesClient client, DeviceConfig devices, PrometheusRegistry registry) {
        this.client = requireNonNull(client, "client");
        this.names = NeuronNames.of(requireNonNull(devices, "devices"));
        this.registry = requireNonNull(registry, "registry");
        this.neuronGauge = Gauge.builder().name("tenant_gateway_webhook_neuron_cores_per_device")
                .help("AWS Neuron cores per device the webhook uses (HAMi v2.10): learnt from the Neuron node with"
                        + " the smallest name, 2 before any")
                .register(registry);
        this.enflameGauge = Gauge.builder().name("tenant_gateway_webhook_enflame_shared_gcu_factor")
                .help("Enflame shared-GCU slice factor the webhook uses (HAMi v2.9): learnt from the Enflame node"
                        + " with the smallest name, 0 before any")
                .register(registry);
        neuronGauge.set(ClusterDeviceState.DEFAULT_NEURON_CORES_PER_DEVICE);
        enflameGauge.set(ClusterDeviceState.DEFAULT_ENFLAME_SHARED_FACTOR);
        ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, runnable -> {
            Thread thread = new Thread(runnable, "webhook-cluster-device-state");
            thread.setDaemon(true);
            return thread;
        });
        executor.setRemoveOnCancelPolicy(true);
        this.scheduler = executor;
    }

    /**
     * Lists the Nodes and starts watching them; blocks until the first list. A failure leaves nothing running, so it
     * may be called again (the agent retries it in the background); after the first success the watch keeps itself
     * going.
     */
    public void start() {
        synchronized (lock) {
            if (closed) {
                throw new IllegalStateException("cluster device state watch is closed");
            }
            if (started) {
                return;
            }
        }
        try {
            relist();
        } catch (RuntimeException e) {
            throw new IllegalStateException("webhook cluster device state: cannot list Nodes: " + e.getMessage(), e);
        }
        synchronized (lock) {
            started = true;
        }
    }

    /**
     * The device config now in use: when its Neuron capacity names differ, the Nodes are listed again with the new
     * names (in the background).
     */
    public void deviceConfig(DeviceConfig devices) {
        NeuronNames next = NeuronNames.of(requireNonNull(devices, "devices"));
        synchronized (lock) {
            if (next.equals(names)) {
                return;
            }
            names = next;
            if (generation > 0 && !closed) { // a list began (maybe start()'s, with the old names): list again
                log.info("webhook cluster device state: AWS Neuron names now {} / {}; listing Nodes again",
                        next.core(), next.count());
                scheduleRelist(Duration.ZERO);
            }
        }
    }

    /**
     * Calls {@code subscriber} now with the current state and again with every change (on the thread that saw it).
     * No change is missed between the two.
     */
    public void subscribe(Consumer<ClusterDeviceState> subscriber) {
        requireNonNull(subscriber, "subscriber");
        synchronized (lock) {
            subscribers.add(subscriber);
            subscriber.accept(current);
        }
    }

    /** The state in use: learnt from the Nodes, else HAMi's defaults. */
    public ClusterDeviceState current() {
        return current;
    }

    /** Whether a first list of the Nodes succeeded. */
    public boolean listed() {
        return listed;
    }

    /** One list of every Node (paged) and a watch from its resourceVersion; the watch of an older list ends. */
    private void relist() {
        long listing;
        NeuronNames listedNames;
        Watch old;
        synchronized (lock) {
            if (closed) {
                return;
            }
            listing = ++generation; // first: the old watch's callbacks are stale from here on
            old = takeWatch();
            listedNames = names;
        }
        close(old); // outside the lock: closing may wait for the old watcher's callbacks, which take the lock
        TreeMap<String, Long> nextNeuron = new TreeMap<>();
        TreeMap<String, Long> nextEnflame = new TreeMap<>();
        String resourceVersion;
        String token = null;
        do {
            NodeList page = client.nodes().list(new ListOptionsBuilder().withLimit(PAGE_SIZE).withContinue(token)
                    .build());
            for (Node node : page.getItems()) {
                String name = node.getMetadata().getName();
                Map<String, Quantity> capacity = capacity(node);
                putCapped(nextNeuron, name, neuronCoresPerDevice(capacity, listedNames));
                putCapped(nextEnflame, name, enflameFactor(capacity));
            }
            resourceVersion = page.getMetadata() == null ? null : page.getMetadata().getResourceVersion();
            token = page.getMetadata() == null ? null : page.getMetadata().getContinue();
        } while (token != null && !token.isEmpty());
        synchronized (lock) {
            if (closed || listing != generation) {
                return; // closed, or another relist took over
            }
            neuron = nextNeuron;
            enflame = nextEnflame;
            listed = true;
            publish();
        }
        ListOptions from = new ListOptionsBuilder().withResourceVersion(resourceVersion).withAllowWatchBookmarks(true)
                .build();
        Watch opened = client.nodes().watch(from, new NodeWatcher(listing, listedNames));
        boolean stale;
        synchronized (lock) {
            stale = closed || listing != generation;
            if (!stale) {
                watch = opened;
            }
        }
        if (stale) {
            opened.close(); // outside the lock, as above
        }
    }

    /** On the scheduler thread: a relist, and another one later when it fails. */
    private void relistInBackground() {
        synchronized (lock) {
            relistPending = false;
            if (closed) {
                return;
            }
        }
        try {
            relist();
        } catch (RuntimeException e) {
            synchronized (lock) {
                if (closed) {
                    return; // closing interrupted it
                }
                Duration delay = nextRelistDelay();
                log.warn("webhook cluster device state: cannot list or watch Nodes ({}); keeping {}; again in {} ms",
                        e.getMessage(), current, delay.toMillis());
                scheduleRelist(delay);
            }
        }
    }

    /**
     * Under the lock: at once after a watch that worked, then with backoff (1 s, ×1.5, 10 % jitter, at most 30 s)
     * until a watch delivers an event again.
     */
    private Duration nextRelistDelay() {
        relistsInARow++;
        return relistsInARow == 1 ? Duration.ZERO
                : RELIST.delayAfter(relistsInARow - 1, ThreadLocalRandom.current().nextDouble());
    }

    /** Under the lock. */
    private void scheduleRelist(Duration delay) {
        if (closed || relistPending) {
            return;
        }
        relistPending = true;
        scheduler.schedule(this::relistInBackground, delay.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** Under the lock: the open watch, if any, now nobody's; close it after leaving the lock. */
    private Watch takeWatch() {
        Watch taken = watch;
        watch = null;
        return taken;
    }

    private static void close(Watch taken) {
        if (taken != null) {
            taken.close();
        }
    }

    /** Under the lock: the state from the smallest names, handed on when it changed. */
    private void publish() {
        Entry<String, Long> neuronNode = neuron.firstEntry();
        Entry<String, Long> enflameNode = enflame.firstEntry();
        ClusterDeviceState next = new ClusterDeviceState(
                neuronNode == null ? ClusterDeviceState.DEFAULT_NEURON_CORES_PER_DEVICE : neuronNode.getValue(),
                enflameNode == null ? ClusterDeviceState.DEFAULT_ENFLAME_SHARED_FACTOR : enflameNode.getValue());
        if (next.equals(current)) {
            return;
        }
        log.info("webhook cluster device state: AWS Neuron cores per device {} ({}), Enflame shared-GCU factor {} ({})",
                next.neuronCoresPerDevice(), neuronNode == null ? "no Neuron node with " + names.core() + " and "
                        + names.count() + " capacity: HAMi's default" : "from node " + neuronNode.getKey(),
                next.enflameSharedFactor(), enflameNode == null ? "no node with " + ENFLAME_GCU_COUNT
                        + " capacity: HAMi's default" : "from node " + enflameNode.getKey());
        current = next;
        neuronGauge.set(next.neuronCoresPerDevice());
        enflameGauge.set(next.enflameSharedFactor());
        for (Consumer<ClusterDeviceState> subscriber : subscribers) {
            subscriber.accept(next);
        }
    }

    /** Puts (value &gt; 0 for Neuron, ≥ 0 for Enflame) or removes; beyond {@link #MAX_NODES} the largest name goes. */
    private void putCapped(NavigableMap<String, Long> map, String node, long value) {
        if (value < 0) {
            map.remove(node);
            return;
        }
        map.put(node, value);
        if (map.size() > MAX_NODES) {
            String dropped = map.pollLastEntry().getKey();
            boolean report;
            synchronized (lock) {
                report = !capReported;
                capReported = true;
            }
            if (report) {
                log.warn("webhook cluster device state: more than {} Neuron or Enflame nodes; keeping the {} smallest"
                        + " names (dropped {}; said once)", MAX_NODES, MAX_NODES, dropped);
            }
        }
    }

    private static Map<String, Quantity> capacity(Node node) {
        return node.getStatus() == null || node.getStatus().getCapacity() == null ? Map.of()
                : node.getStatus().getCapacity();
    }

    /**
     * HAMi v2.10's {@code coresTotal / counts} of a Node, capped at 2; -1 when the node does not count (no integer
     * count above 0, or fewer cores than devices: HAMi then waits for another node).
     */
    static long neuronCoresPerDevice(Map<String, Quantity> capacity, NeuronNames names) {
        if (names.count().isEmpty()) {
            return -1;
        }
        long devices = integer(capacity.get(names.count())).orElse(0);
        long cores = names.core().isEmpty() ? 0 : integer(capacity.get(names.core())).orElse(0);
        if (devices <= 0 || cores <= 0) {
            return -1;
        }
        long perDevice = cores / devices;
        return perDevice < 1 ? -1 : Math.min(perDevice, MAX_NEURON_CORES_PER_DEVICE);
    }

    /** HAMi v2.9's {@code shared / cards} of a Node; -1 when it has no integer {@code enflame.com/gcu-count} above 0. */
    static long enflameFactor(Map<String, Quantity> capacity) {
        long cards = integer(capacity.get(ENFLAME_GCU_COUNT)).orElse(0);
        if (cards <= 0) {
            return -1;
        }
        return Math.max(0, integer(capacity.get(ENFLAME_SHARED_GCU)).orElse(0)) / cards;
    }

    /** Go's {@code Quantity.AsInt64}: the value when it is a whole number that fits a long. */
    static OptionalLong integer(Quantity quantity) {
        if (quantity == null) {
            return OptionalLong.empty();
        }
        try {
            BigDecimal value = quantity.getNumericalAmount();
            return OptionalLong.of(value.longValueExact());
        } catch (ArithmeticException | IllegalArgumentException e) {
            return OptionalLong.empty();
        }
    }

    /** One list's watch: applies each Node, and relists when the API ends it (410 Gone, or a failure). */
    private final class NodeWatcher implements Watcher<Node> {
        private final long listing;
        private final NeuronNames watchedNames;

        NodeWatcher(long listing, NeuronNames watchedNames) {
            this.listing = listing;
            this.watchedNames = watchedNames;
        }

        @Override
        public void eventReceived(Action action, Node node) {
            if (node == null || node.getMetadata() == null || node.getMetadata().getName() == null) {
                return;
            }
            String name = node.getMetadata().getName();
            long neuronValue;
            long enflameValue;
            switch (action) {
                case ADDED, MODIFIED -> {
                    Map<String, Quantity> capacity = capacity(node);
                    neuronValue = neuronCoresPerDevice(capacity, watchedNames);
                    enflameValue = enflameFactor(capacity);
                }
                case DELETED -> {
                    neuronValue = -1;
                    enflameValue = -1;
                }
                case BOOKMARK -> {
                    synchronized (lock) {
                        if (listing == generation) {
                            relistsInARow = 0; // the watch works (the client keeps the resourceVersion)
                        }
                    }
                    return;
                }
                default -> {
                    return; // ERROR: followed by onClose
                }
            }
            synchronized (lock) {
                if (closed || listing != generation) {
                    return;
                }
                relistsInARow = 0;
                putCapped(neuron, name, neuronValue);
                putCapped(enflame, name, enflameValue);
                publish();
            }
        }

        @Override
        public void onClose(WatcherException cause) {
            synchronized (lock) {
                if (closed || listing != generation) {
                    return;
                }
                if (cause.isHttpGone()) {
                    log.debug("webhook cluster device state: Node watch expired (410 Gone); listing again");
                } else {
                    log.warn("webhook cluster device state: Node watch ended ({}); listing again", cause.getMessage());
                }
                watch = null;
                scheduleRelist(nextRelistDelay());
            }
        }
    }

    @Override
    public void close() {
        Watch taken;
        synchronized (lock) {
            if (closed) {
                return;
            }
            closed = true;
            taken = takeWatch();
        }
        close(taken);
        scheduler.shutdownNow();
        registry.unregister(neuronGauge);
        registry.unregister(enflameGauge);
    }
}
