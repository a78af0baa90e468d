package io.tenantgateway.agent.devices;

import static java.util.Objects.requireNonNull;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.Gauge;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.tenantgateway.agent.health.HealthCheck;
import io.tenantgateway.hami.GpuDevice;
import io.tenantgateway.hami.NodeVendor;
import io.tenantgateway.hami.RegisteredDevice;
import io.tenantgateway.agent.controller.WorkQueue;
import io.tenantgateway.common.lifecycle.Lifecycle;
import io.tenantgateway.common.retry.Backoff;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Collectors;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the node's GPUs registered with HAMi's scheduler, as HAMi's device plugin would: the
 * {@code hami.io/node-nvidia-register} annotation (written only when its value changes), the
 * {@code hami.io/node-handshake} annotation ({@code Reported <YYYY-MM-DD hh:mm:ss>}, rewritten every
 * handshake interval, well within the scheduler's 60 s window) and, where configured (mock mode),
 * {@code nvidia.com/gpu}, {@code nvidia.com/gpumem}, {@code nvidia.com/gpucores} and
 * {@code nvidia.com/gpumem-percentage} in the node's status capacity and allocatable; with
 * {@code --report-node-capacity} ({@link NodeCapacityReport}), the healthy GPUs' memory and cores totals there too, as
 * HAMi's device config names them, patched whenever the node's values differ from the totals (a device turning
 * unhealthy lowers them at the next rescan).
 *
 * <p>A mock inventory may also name Hygon DCUs and Ascend chips ({@link VendorPreset}). Each such vendor is
 * registered alike, in the same rounds and patches: its register annotation in its own key and format
 * ({@link SimulatedVendor#register()}, written when it changes), its other annotations (Ascend's
 * {@code hami-vnpu-core}), its handshake as its plugin writes it ({@link NodeVendor#handshake}) and, in mock mode, its
 * resources' capacity. A node without such parts never loads their classes.
 *
 * <p>When another device plugin registers one vendor's devices on this node ({@link #standAside}), exactly that
 * vendor's register annotation, handshake and capacity are no longer written; the others go on.
 *
 * <p>Threading: the rounds are the one key of a {@link WorkQueue}, whose worker thread does
 * everything (discovery, API calls, state changes), one round at a time, so no round overlaps
 * another. The next round is queued when one finishes: after the handshake interval on success,
 * after the {@link #backoff(DeviceRegistrationConfig) backoff} (from the initial backoff, doubling,
 * capped at the handshake interval, up to 20 % shorter) on failure. Readers ({@link #snapshot()},
 * {@link #registeredDeviceIds()}, metrics) read an immutable state published through a volatile
 * field.
 *
 * <p>Only JSON merge patches are sent, naming only our keys, without a resourceVersion: the
 * scheduler's {@code Requesting_…} writes in between are not overwritten early or fought over, the
 * next handshake simply comes on cadence. A 409 is answered by re-reading the node and patching
 * again (up to {@value #CONFLICT_ATTEMPTS} times a round).
 *
 * <p>The parts: {@link DeviceDiscovery} (the source's devices, kept for the rescan interval), {@link RegisterEncoding}
 * (the annotations, capacity and removal as values, no API), {@link NodePatcher} (the node read and the merge
 * patches) and {@link VendorRoster} (whose devices are ours to write). This class runs the rounds and keeps the
 * state, metrics and readiness.
 */
public final class DeviceRegistrar extends Lifecycle {

    private static final Logger log = LoggerFactory.getLogger(DeviceRegistrar.class);

    static final int CONFLICT_ATTEMPTS = 3;

    private final DeviceRegistrationConfig config;
    private final DeviceSource source;
    private final DeviceDiscovery discovery;
    private final NodePatcher node;
    private final Clock clock;
    private final PrometheusRegistry registry;

    private final Gauge devicesRegistered;
    private final Counter failures;
    private final GaugeWithCallback handshakeAge;

    private static final String ROUND = "round";

    private final WorkQueue<String> rounds;
    private volatile boolean metricsRegistered;

    private volatile State state;
    private volatile Instant startedAt;
    /** The node has NVIDIA GPUs to register: any source but a mock inventory without NVIDIA entries. */
    /** Whose devices are written: NVIDIA's and the simulated vendors', less those standing aside. */
    private final VendorRoster roster;

    // Owned by the registrar thread.
    private int consecutiveFailures;
    /** The last failed {@code --report-node-capacity} patch's message; {@code null} after a success. */
    private String capacityReportError;

    /**
     * Immutable view published to readers.
     *
     * @param discoveryFailing the last discovery attempt failed (nothing is being refreshed)
     */
    private record State(List<GpuDevice> devices, String registerAnnotation, List<SimulatedVendor> vendors,
                         Instant lastHandshake, boolean discoveryFailing, FailureReason lastFailure, String lastError,
                         Instant lastErrorAt) {
        static final State INITIAL = new State(List.of(), "", List.of(), null, false, null, null, null);

        State succeeded(List<GpuDevice> devices, String annotation, List<SimulatedVendor> written, Instant handshake) {
            return new State(devices, annotation, written, handshake, false, null, null, null);
        }

        State failed(FailureReason reason, String message, Instant at, boolean discovery) {
            return new State(devices, registerAnnotation, vendors, lastHandshake, discovery, reason, message, at);
        }
    }

    /**
     * @param config   the settings; its source must not be {@code NONE}
     * @param source   where the devices come from (usually {@code config.createSource()})
     * @param client   the Kubernetes client; calls are made from the registrar thread only
     * @param clock    time for the handshake stamp and ages
     * @param registry where the metrics are registered (and unregistered on close)
     */
    public DeviceRegistrar(DeviceRegistrationConfig config, DeviceSource source, KubernetesClient client,
                           Clock clock, PrometheusRegistry registry) {
        this(config, source, simulatedVendors(config), client, clock, registry);
    }

    /**
     * @param vendors the simulated Hygon and Ascend vendors to register too (usually
     *                {@link #simulatedVendors(DeviceRegistrationConfig)})
     */
    public DeviceRegistrar(DeviceRegistrationConfig config, DeviceSource source, List<SimulatedVendor> vendors,
                           KubernetesClient client, Clock clock, PrometheusRegistry registry) {
        super("device registrar for node " + requireNonNull(config, "config").nodeName());
        this.config = config;
        this.source = requireNonNull(source, "source");
        this.roster = new VendorRoster(config.source() != DeviceRegistrationConfig.Source.MOCK
                || !config.mockInventory().entries().isEmpty(), requireNonNull(vendors, "vendors"));
        this.node = new NodePatcher(requireNonNull(client, "client"), config.nodeName());
        this.clock = requireNonNull(clock, "clock");
        this.discovery = new DeviceDiscovery(source, config.rescanInterval(), clock);
        this.registry = requireNonNull(registry, "registry");
        this.state = State.INITIAL;
        this.devicesRegistered = Gauge.builder()
                .name("tenant_gateway_devices_registered")
                .help("GPUs in the hami.io/node-nvidia-register annotation this agent last wrote")
                .build();
        this.failures = Counter.builder()
                .name("tenant_gateway_device_registration_failures_total")
                .help("Failed device discovery or registration attempts, by reason")
                .labelNames("reason")
                .build();
        this.handshakeAge = GaugeWithCallback.builder()
                .name("tenant_gateway_handshake_age_seconds")
                .help("Seconds since the last successful hami.io/node-handshake write (since start before the first)")
                .callback(callback -> callback.call(handshakeAgeSeconds()))
                .build();
        for (FailureReason reason : FailureReason.values()) {
            failures.labelValues(reason.label()); // export 0 for every reason, so increase() works
        }
        this.rounds = new WorkQueue<>(name(), "device-registrar-" + config.nodeName(),
                (key, attempt) -> round(), backoff(config), config.closeTimeout());
    }

    /**
     * The Hygon and Ascend vendors {@code config}'s mock inventory names; empty for any other source and for an
     * inventory of NVIDIA GPUs only (then no vendor class is loaded).
     */
    public static List<SimulatedVendor> simulatedVendors(DeviceRegistrationConfig config) {
        if (config.source() != DeviceRegistrationConfig.Source.MOCK
                || config.mockInventory().vendorEntries().isEmpty()) {
            return List.of();
        }
        return SimulatedVendor.of(config.nodeName(), config.mockInventory());
    }

    /**
     * The wait after the n-th failure in a row: the initial backoff doubling up to the handshake interval, up to
     * 20 % less, so that agents on many nodes do not retry in lock step after an outage.
     */
    static Backoff backoff(DeviceRegistrationConfig config) {
        return Backoff.exponential(config.retryInitialBackoff()).withCap(config.handshakeInterval()).withJitter(-0.2);
    }

    /**
     * Registers the metrics and starts the registration rounds (the first one at once). Idempotent
     * ({@link Lifecycle#start()}).
     *
     * @throws IllegalStateException after {@link #close()}
     */
    @Override
    protected void doStart() {
        registry.register(devicesRegistered);
        registry.register(failures);
        try {
            registry.register(handshakeAge);
        } catch (RuntimeException e) {
            registry.unregister(devicesRegistered);
            registry.unregister(failures);
            throw e;
        }
        metricsRegistered = true;
        startedAt = clock.instant();
        rounds.start();
        log.info("Starting device registration node={} source={} handshakeInterval={} rescanInterval={} "
                        + "splitCount={} advertiseCapacity={} reportNodeCapacity={} deregisterOnExit={}",
                config.nodeName(), source.kind(), config.handshakeInterval(), config.rescanInterval(),
                config.splitCount(), config.advertiseCapacity(),
                config.nodeCapacity() == null ? "off" : config.nodeCapacity().resources(), config.deregisterOnExit());
        if (!roster.vendors().isEmpty()) {
            log.info("Simulated devices node={} nvidia={} vendors={}", config.nodeName(), roster.nvidia(),
                    roster.vendors().stream().map(v -> v.vendor().displayName() + ":" + v.devices().size()).toList());
        }
        rounds.enqueue(ROUND);
    }

    /**
     * Stops the rounds (waiting up to the close timeout for a running one), removes the
     * registration when configured to, and unregisters the metrics. Idempotent; safe from a
     * shutdown hook. Blocks on API calls: do not call it from an event loop.
     */
    @Override
    protected void doClose() {
        if (!metricsRegistered) {
            return; // never started: nothing registered, no metrics
        }
        rounds.close();
        if (config.deregisterOnExit()) {
            deregister();
        }
        registry.unregister(devicesRegistered);
        registry.unregister(failures);
        registry.unregister(handshakeAge);
        log.info("Stopped device registration node={}", config.nodeName());
    }

    /** {@link #standAside} for NVIDIA: another plugin registers this node's NVIDIA GPUs. Any thread. */
    public void suspend(String reason) {
        standAside(NodeVendor.NVIDIA, reason);
    }

    /**
     * Stops writing {@code vendor}'s registration for good (its register annotation, its handshake, its capacity;
     * nothing of it is removed on exit either): another device plugin registers these devices (HAMi #2076: the two
     * would fight over the register annotation). The other vendors are registered as before; once every vendor of
     * the node stands aside the rounds stop. Readiness passes for a vendor standing aside, saying so: it is the right
     * state, not a fault. Any thread; a vendor told twice keeps the first reason.
     */
    public void standAside(NodeVendor vendor, String reason) {
        if (!roster.standAside(vendor, reason)) {
            return;
        }
        if (!roster.present(vendor)) {
            log.info("Another device plugin registers a vendor this node's inventory does not have node={} vendor={}"
                    + " reason={}", config.nodeName(), vendor.displayName(), reason);
            return;
        }
        List<String> still = roster.stillRegistering();
        log.warn("Device registration stopped node={} vendor={}: another device plugin registers this node's {}"
                        + " devices ({}); {} and {} are left to it{}", config.nodeName(), vendor.displayName(),
                vendor.displayName(), reason, vendor.registerKey(), vendor.handshakeKey(),
                still.isEmpty() ? "" : "; still registering " + String.join(", ", still));
    }

    /** Why NVIDIA's registration was {@link #suspend suspended}, or {@code null}. */
    public String suspendedReason() {
        return roster.standingAside().get(NodeVendor.NVIDIA);
    }

    /** The vendors another device plugin registers, with why, in the order told (empty when none). */
    public Map<NodeVendor, String> standingAside() {
        return roster.standingAside();
    }

    /** True when the scheduler currently sees our devices; see {@link DeviceRegistrationSnapshot#ready()}. */
    public boolean devicesRegistered() {
        State s = state;
        return (!s.devices().isEmpty() || !s.vendors().isEmpty()) && !s.discoveryFailing() && s.lastHandshake() != null
                && Duration.between(s.lastHandshake(), clock.instant())
                .compareTo(DeviceRegistrationConfig.SCHEDULER_STALE_AFTER) < 0;
    }

    /**
     * A {@code devices-registered} readiness check for the health server: ok while
     * {@link #devicesRegistered()}, otherwise failed with the last error. Reads state only, so it is
     * safe on the health server's event loop.
     */
    public HealthCheck readinessCheck() {
        return new HealthCheck("devices-registered", () -> {
            String aside = roster.asideDetail();
            if (!roster.anyActive()) {
                // Another plugin registers every vendor's devices here (see standAside).
                return aside.isEmpty() ? HealthCheck.Result.OK : new HealthCheck.Result(true, aside);
            }
            DeviceRegistrationSnapshot s = snapshot();
            if (s.ready()) {
                return aside.isEmpty() ? HealthCheck.Result.OK : new HealthCheck.Result(true, aside);
            }
            if (s.lastError() != null) {
                return HealthCheck.Result.failed(s.lastFailure().label() + ": " + s.lastError());
            }
            return HealthCheck.Result.failed(s.lastHandshake() == null ? "not registered yet"
                    : "last handshake at " + s.lastHandshake() + " is older than 60s");
        });
    }

    /** UUIDs of the devices in the register annotation this agent last wrote. */
    public Set<String> registeredDeviceIds() {
        return state.devices().stream().map(GpuDevice::id).collect(Collectors.toUnmodifiableSet());
    }

    /** Everything a {@code /debug/devices} page or a readiness check needs. */
    public DeviceRegistrationSnapshot snapshot() {
        State s = state;
        List<DeviceRegistrationSnapshot.VendorRegistration> written = s.vendors().stream()
                .map(v -> new DeviceRegistrationSnapshot.VendorRegistration(v.vendor(), v.devices(), v.register()))
                .toList();
        Map<String, String> aside = new LinkedHashMap<>();
        roster.standingAside().forEach((vendor, reason) -> aside.put(vendor.displayName(), reason));
        return new DeviceRegistrationSnapshot(config.nodeName(), source.kind(), devicesRegistered(), s.devices(),
                s.registerAnnotation(), s.lastHandshake(), s.lastFailure(), s.lastError(), s.lastErrorAt(), written,
                aside);
    }

    private double handshakeAgeSeconds() {
        Instant since = state.lastHandshake() != null ? state.lastHandshake() : startedAt;
        if (since == null) {
            return 0;
        }
        return Math.max(0, Duration.between(since, clock.instant()).toMillis() / 1000.0);
    }

    // ---------------------------------------------------------------- registrar thread

    /** One round on the queue's worker: the next one after the handshake interval, or a retry after the backoff. */
    private WorkQueue.Result round() {
        if (!roster.anyActive()) {
            return WorkQueue.Result.done(); // every vendor stands aside: nothing more is written
        }
        Instant began = clock.instant();
        try {
            return registerOnce() ? WorkQueue.Result.after(untilNextHandshake(began)) : WorkQueue.Result.retry();
        } catch (RuntimeException e) {
            // A bug or an unexpected client error: keep the loop alive, but say so loudly.
            log.error("Unexpected error in device registration round node={}", config.nodeName(), e);
            fail(FailureReason.API_REJECTED, "unexpected error: " + e, false);
            return WorkQueue.Result.retry();
        }
    }

    private Duration untilNextHandshake(Instant began) {
        Duration spent = Duration.between(began, clock.instant());
        Duration remaining = config.handshakeInterval().minus(spent);
        return remaining.isNegative() ? Duration.ZERO : remaining;
    }

    /**
     * One round; true when the node now carries our registration and a fresh handshake and, with
     * {@code --report-node-capacity}, the current totals. A failed capacity report alone leaves the registration
     * succeeded (readiness is about the scheduler seeing the devices) and asks for a retry with the backoff.
     */
    boolean registerOnce() {
        boolean withNvidia = roster.nvidiaActive();
        List<SimulatedVendor> active = roster.activeVendors();
        List<GpuDevice> devices = List.of();
        if (withNvidia) {
            try {
                devices = discovery.devices();
            } catch (DeviceDiscoveryException e) {
                fail(e.reason(), e.getMessage(), true);
                return false;
            }
        }
        String encoded = withNvidia ? RegisterEncoding.register(devices) : "";
        for (int attempt = 1; attempt <= CONFLICT_ATTEMPTS; attempt++) {
            try {
                Node current = node.get();
                if (current == null) {
                    fail(FailureReason.NODE_MISSING, "node " + config.nodeName()
                            + " not found (expected: the Node this agent runs on; check --node-name)", false);
                    return false;
                }
                RegisterEncoding.AnnotationPatch patch = RegisterEncoding.annotations(
                        current.getMetadata().getAnnotations(), withNvidia ? encoded : null, active, clock.instant(),
                        startedAt, clock.getZone());
                node.patchAnnotations(patch.values());
                if (config.advertiseCapacity()) {
                    current = advertiseCapacity(current, withNvidia ? devices : null, active);
                }
                succeed(devices, encoded, patch, active);
                return !withNvidia || config.nodeCapacity() == null || reportNodeCapacity(current, devices);
            } catch (KubernetesClientException e) {
                FailureReason reason = classify(e);
                fail(reason, describe(e), false);
                if (reason != FailureReason.CONFLICT) {
                    return false;
                }
                log.debug("Conflict writing node, re-reading node={} attempt={}", config.nodeName(), attempt);
            }
        }
        return false;
    }

    /** {@link RegisterEncoding#handshakeValue}. */
    static String handshakeValue(Instant at, ZoneId zone) {
        return RegisterEncoding.handshakeValue(at, zone);
    }

    /**
     * @param devices NVIDIA's GPUs, {@code null} when NVIDIA's are not ours to advertise
     * @return the node as the API server answered the patch, or {@code node} when nothing was patched
     */
    private Node advertiseCapacity(Node current, List<GpuDevice> devices, List<SimulatedVendor> active) {
        Map<String, String> desired = RegisterEncoding.advertised(devices, active);
        if (desired.isEmpty() || RegisterEncoding.carries(current, desired)) {
            return current;
        }
        Node patched = node.patchCapacity(desired);
        log.info("Advertised GPU capacity node={} {}", config.nodeName(), desired);
        return patched != null ? patched : current;
    }

    /**
     * {@code --report-node-capacity}: patches the status subresource when {@code node}'s capacity or allocatable
     * differs from the totals of {@code devices}' healthy GPUs (level-triggered: compared with what the node carries in
     * this round, so a value changed or removed by someone else is restored). A failure is counted and logged, not
     * thrown: the registration written in this round stands.
     *
     * @return false when the patch failed (the round is retried with the backoff)
     */
    private boolean reportNodeCapacity(Node current, List<GpuDevice> devices) {
        Map<String, String> totals = config.nodeCapacity().totals(devices);
        if (RegisterEncoding.carries(current, totals)) {
            capacityReportError = null;
            return true;
        }
        try {
            node.patchCapacity(totals);
        } catch (KubernetesClientException e) {
            FailureReason reason = classify(e);
            failures.labelValues(reason.label()).inc();
            String message = describe(e);
            if (!message.equals(capacityReportError)) {
                log.warn("Node capacity report failed node={} reason={} resources={} error={}", config.nodeName(),
                        reason.label(), totals, message);
            } else {
                log.debug("Node capacity report still failing node={} reason={}", config.nodeName(), reason.label());
            }
            capacityReportError = message;
            return false;
        }
        capacityReportError = null;
        log.info("Reported node capacity node={} {}", config.nodeName(), totals);
        return true;
    }

    /** {@link RegisterEncoding#capacity}. */
    static Map<String, String> capacity(List<GpuDevice> devices) {
        return RegisterEncoding.capacity(devices);
    }

    /** {@link RegisterEncoding#capacityPatch}. */
    static String capacityPatch(Map<String, String> quantities) {
        return RegisterEncoding.capacityPatch(quantities);
    }

    private void succeed(List<GpuDevice> devices, String encoded, RegisterEncoding.AnnotationPatch changed,
            List<SimulatedVendor> written) {
        State previous = state;
        state = previous.succeeded(devices, encoded, written, clock.instant());
        devicesRegistered.set(devices.size());
        consecutiveFailures = 0;
        boolean nvidiaLogged = !devices.isEmpty()
                && (changed.nvidiaChanged() || !encoded.equals(previous.registerAnnotation()));
        if (nvidiaLogged) {
            log.info("Registered GPUs node={} source={} devices={} ids={}", config.nodeName(), source.kind(),
                    devices.size(), devices.stream().map(GpuDevice::id).toList());
        }
        Set<NodeVendor> before = new LinkedHashSet<>();
        previous.vendors().forEach(v -> before.add(v.vendor()));
        List<SimulatedVendor> newlyWritten = written.stream()
                .filter(v -> changed.vendorsChanged().contains(v) || !before.contains(v.vendor())).toList();
        for (SimulatedVendor v : newlyWritten) {
            log.info("Registered devices node={} vendor={} source={} key={} devices={} ids={}", config.nodeName(),
                    v.vendor().displayName(), source.kind(), v.vendor().registerKey(), v.devices().size(),
                    v.devices().stream().map(RegisteredDevice::id).toList());
        }
        if (nvidiaLogged || !newlyWritten.isEmpty()) {
            return;
        } else if (previous.lastFailure() != null) {
            log.info("Device registration recovered node={} after={}", config.nodeName(), previous.lastFailure().label());
        } else {
            log.debug("Handshake written node={}", config.nodeName());
        }
    }

    private void fail(FailureReason reason, String message, boolean discovery) {
        State previous = state;
        consecutiveFailures++;
        failures.labelValues(reason.label()).inc();
        state = previous.failed(reason, message, clock.instant(), discovery);
        if (reason != previous.lastFailure() || !Objects.equals(message, previous.lastError())) {
            log.warn("Device registration failed node={} reason={} attempt={} error={}", config.nodeName(),
                    reason.label(), consecutiveFailures, message);
        } else {
            log.debug("Device registration still failing node={} reason={} attempts={}", config.nodeName(),
                    reason.label(), consecutiveFailures);
        }
    }

    static FailureReason classify(KubernetesClientException e) {
        int code = e.getCode();
        if (code == 404) {
            return FailureReason.NODE_MISSING;
        }
        if (code == 409) {
            return FailureReason.CONFLICT;
        }
        if (code >= 500 || code == 429) {
            return FailureReason.SERVER_ERROR;
        }
        if (code < 100) {
            return FailureReason.API_UNREACHABLE; // no HTTP answer: connect/read failure or timeout
        }
        return FailureReason.API_REJECTED;
    }

    private String describe(KubernetesClientException e) {
        String what = e.getCode() > 0 ? "HTTP " + e.getCode() : "no answer";
        Throwable cause = e.getCause();
        return "node " + config.nodeName() + ": " + what + ": " + e.getMessage()
                + (cause != null && e.getCode() <= 0 ? " (" + cause + ")" : "");
    }

    // ---------------------------------------------------------------- close

    /** Removes what this agent writes, for the vendors not standing aside (what another plugin owns stays). */
    private void deregister() {
        boolean withNvidia = roster.nvidiaActive();
        List<SimulatedVendor> active = roster.activeVendors();
        if (!withNvidia && active.isEmpty()) {
            return;
        }
        try {
            RegisterEncoding.Removal removal = RegisterEncoding.removal(withNvidia, active, roster.vendors(),
                    config.advertiseCapacity(), config.nodeCapacity());
            node.patchAnnotations(removal.annotations());
            if (!removal.capacity().isEmpty()) {
                node.patchCapacity(removal.capacity());
            }
            state = State.INITIAL;
            devicesRegistered.set(0);
            log.info("Deregistered GPUs node={}", config.nodeName());
        } catch (KubernetesClientException e) {
            FailureReason reason = classify(e);
            failures.labelValues(reason.label()).inc();
            log.warn("Could not deregister GPUs on exit node={} reason={} error={}", config.nodeName(), reason.label(),
                    describe(e));
        }
    }
}
