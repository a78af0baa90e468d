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
import io.tenantgateway.hami.region.SharedRegion;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

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
        Path root = config.get().containersDir();
        if (!Files.isDirectory(root, LinkOption.NOFOLLOW_LINKS)) {
            // Allocate makes it for the first GPU container: a node that has run none has none yet.
            return DoctorCheck.pass("monitor", root + ": no GPU container directory yet (the first Allocate makes"
                    + " it)");
        }
        List<String> lines = new ArrayList<>();
        int directories = 0;
        int read = 0;
        int skipped = 0;
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(root)) {
            for (Path entry : entries) {
                if (!Files.isDirectory(entry, LinkOption.NOFOLLOW_LINKS) || ++directories > DOCTOR_CONTAINERS) {
                    continue;
                }
                Optional<String> line = region(entry);
                if (line.isEmpty()) {
                    lines.add(PeerText.quote(entry.getFileName().toString()) + ": no region yet (no CUDA call)");
                } else if (line.get().startsWith("skipped")) {
                    skipped++;
                    lines.add(PeerText.quote(entry.getFileName().toString()) + ": " + line.get());
                } else {
                    read++;
                    lines.add(PeerText.quote(entry.getFileName().toString()) + ": " + line.get());
                }
            }
        } catch (IOException e) {
            return DoctorCheck.fail("monitor", "cannot list " + root + ": " + e.getMessage(), "give the agent read"
                    + " access to the host's /usr/local/vgpu/containers");
        }
        if (directories > DOCTOR_CONTAINERS) {
            lines.add("… and " + (directories - DOCTOR_CONTAINERS) + " more");
        }
        String summary = root + ": " + directories + " container director" + (directories == 1 ? "y" : "ies") + ", "
                + read + " region(s) read" + (skipped == 0 ? "" : ", " + skipped + " skipped");
        return skipped == 0 ? new DoctorCheck("monitor", Outcome.PASS, summary, "", lines)
                : new DoctorCheck("monitor", Outcome.WARN, summary, "a skipped region was torn, truncated or not"
                        + " HAMi-core's: its container's metrics are missing until it reads again", lines);
    }

    /** A directory's region, each device's usage against its limits; empty when it has none. */
    private static Optional<String> region(Path directory) {
        try (DirectoryStream<Path> files = Files.newDirectoryStream(directory, "*.cache")) {
            for (Path file : files) {
                if (!Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)) {
                    continue;
                }
                RegionRead read = SharedRegion.read(file);
                if (!read.isOk()) {
                    return Optional.of("skipped (" + read.rejection().name().toLowerCase(Locale.ROOT) + "): "
                            + read.detail());
                }
                List<String> devices = new ArrayList<>();
                for (DeviceUsage device : read.snapshot().devices()) {
                    devices.add(device.uuidLabel() + " " + mib(device.usedBytes()) + " of " + mib(device.limitBytes())
                            + " MiB, " + device.smUtilSum() + "% SM" + (device.smLimitPercent() > 0 ? " of "
                            + device.smLimitPercent() + "%" : ""));
                }
                return Optional.of(read.snapshot().liveProcesses() + " process(es); " + String.join("; ", devices));
            }
        } catch (IOException e) {
            return Optional.of("skipped (unreadable): " + e.getMessage());
        }
        return Optional.empty();
    }

    private static long mib(long bytes) {
        return bytes >> 20;
    }
}
