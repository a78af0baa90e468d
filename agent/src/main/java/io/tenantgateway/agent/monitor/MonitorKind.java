package io.tenantgateway.agent.monitor;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.agent.doctor.DoctorCheck;
import io.tenantgateway.agent.doctor.DoctorContext;
import io.tenantgateway.agent.doctor.DoctorStage;
import io.tenantgateway.agent.doctor.PartDoctor;
import io.tenantgateway.agent.doctor.Outcome;
import io.tenantgateway.agent.part.Part;
import io.tenantgateway.agent.part.PartKind;
import io.tenantgateway.common.text.PeerText;
import io.tenantgateway.common.time.GoDuration;
import io.tenantgateway.hami.region.DeviceUsage;
import io.tenantgateway.hami.region.RegionRead;
import io.tenantgateway.agent.monitor.policy.CleanupPolicy;
import io.tenantgateway.hami.region.RegionSnapshot;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The vGPU monitor's entry in the list of parts: {@code monitor=} in the effective configuration, and {@code doctor}'s
 * {@code monitor} line (HAMi-core's container directories as the agent sees them, each region's usage against its
 * limits).
 */
public final class MonitorKind implements PartKind, PartDoctor {
    /** {@code doctor} lists at most this many containers. */
    private static final int DOCTOR_CONTAINERS = 64;

    private final Optional<MonitorConfig> config;

    public MonitorKind(Optional<MonitorConfig> config) {
        this.config = requireNonNull(config, "config");
    }

    @Override
    public String name() {
        return MonitorPart.NAME;
    }

    @Override
    public Optional<Part> part() {
        return config.<Part>map(monitor -> new MonitorPart(monitor));
    }

    @Override
    public Optional<String> section() {
        return Optional.of(MonitorView.TITLE);
    }

    @Override
    public void describe(Map<String, String> out) {
        out.put("monitor", config.map(m -> m.containersDir() + " listen=" + m.listen()
                .map(a -> a.getHostString() + ":" + a.getPort()).orElse("off") + " scan-interval="
                + GoDuration.format(m.scanInterval()) + " cache-grace=" + GoDuration.format(m.cacheGrace()))
                .orElse("off"));
    }

    @Override
    public List<DoctorCheck> doctor(DoctorStage stage, DoctorContext context) {
        return stage == DoctorStage.DEVICES ? List.of(monitor()) : List.of();
    }

    private DoctorCheck monitor() {
        if (config.isEmpty()) {
            return DoctorCheck.skip("monitor", "--monitor=false or no devices registered");
        }
        MonitorConfig monitor = config.get();
        Path root = monitor.containersDir();
        // The scan's own reader: the same limits, the same care with what a container put in its directory.
        try (ContainerScanner scanner = new ContainerScanner(root, new CleanupPolicy(monitor.cacheGrace()),
                monitor.maxContainers())) {
            Set<String> directories;
            try {
                directories = scanner.listDirectories();
            } catch (IOException e) {
                return DoctorCheck.fail("monitor", "cannot list " + root + ": " + e.getMessage(), "give the agent"
                        + " read access to the host's /usr/local/vgpu/containers");
            }
            if (directories.isEmpty()) {
                // Allocate makes them for the first GPU container: a node that has run none has none yet.
                return DoctorCheck.pass("monitor", root + ": no GPU container directory yet (the first Allocate"
                        + " makes it)");
            }
            List<String> lines = new ArrayList<>();
            int read = 0;
            int skipped = 0;
            for (String name : directories) {
                if (lines.size() == DOCTOR_CONTAINERS) {
                    lines.add("… and " + (directories.size() - DOCTOR_CONTAINERS) + " more");
                    break;
                }
                ContainerScanner.Found found = scanner.region(name);
                String line;
                if (found.read().isPresent()) {
                    read++;
                    line = usage(found.read().get().snapshot());
                } else if (found.region().isPresent()) {
                    skipped++;
                    RegionRead rejected = found.region().get();
                    line = "skipped (" + rejected.rejection().name().toLowerCase(Locale.ROOT) + "): "
                            + rejected.detail();
                } else if (found.problem().isPresent()) {
                    skipped++;
                    line = "skipped (" + found.problem().get() + ")";
                } else {
                    line = "no region yet (no CUDA call)";
                }
                lines.add(PeerText.quote(name) + ": " + line);
            }
            String summary = root + ": " + directories.size() + " container director"
                    + (directories.size() == 1 ? "y" : "ies") + ", " + read + " region(s) read"
                    + (skipped == 0 ? "" : ", " + skipped + " skipped");
            return skipped == 0 ? new DoctorCheck("monitor", Outcome.PASS, summary, "", lines)
                    : new DoctorCheck("monitor", Outcome.WARN, summary, "a skipped region was torn, truncated, not"
                            + " HAMi-core's or not readable: its container's metrics are missing until it reads"
                            + " again", lines);
        }
    }

    /** A region's processes and each device's usage against its limits. */
    private static String usage(RegionSnapshot snapshot) {
        List<String> devices = new ArrayList<>();
        for (DeviceUsage device : snapshot.devices()) {
            devices.add(device.uuidLabel() + " " + mib(device.usedBytes()) + " of " + mib(device.limitBytes())
                    + " MiB, " + device.smUtilSum() + "% SM" + (device.smLimitPercent() > 0 ? " of "
                    + device.smLimitPercent() + "%" : ""));
        }
        return snapshot.liveProcesses() + " process(es); " + String.join("; ", devices);
    }

    private static long mib(long bytes) {
        return bytes >> 20;
    }
}
