package io.tenantgateway.agent.devices;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.common.config.ConfigException;
import io.tenantgateway.hami.GpuDevice;
import io.tenantgateway.common.concurrent.DaemonThreads;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node's real GPUs, from
 * {@code nvidia-smi --query-gpu=index,uuid,name,memory.total,pci.bus_id --format=csv,noheader,nounits},
 * with each GPU's NUMA node from {@code <sysfs>/bus/pci/devices/<address>/numa_node} (0 when
 * absent, as HAMi's plugin does).
 *
 * <p>{@link #discover()} blocks for up to the configured timeout while the process runs; the
 * output is drained by a short-lived daemon thread so a chatty or hung nvidia-smi can neither
 * fill the pipe nor outlive the timeout (it is killed).
 */
public final class NvidiaSmiDeviceSource implements DeviceSource {

    private static final Logger log = LoggerFactory.getLogger(NvidiaSmiDeviceSource.class);

    /** The query; the order of the columns is what {@link #parseCsv(String)} expects. */
    public static final List<String> QUERY_ARGUMENTS = List.of(
            "--query-gpu=index,uuid,name,memory.total,pci.bus_id", "--format=csv,noheader,nounits");

    private static final int MAX_OUTPUT_BYTES = 1 << 20;
    private static final Pattern BUS_ID =
            Pattern.compile("([0-9A-Fa-f]{1,8}):([0-9A-Fa-f]{2}):([0-9A-Fa-f]{2})\\.([0-7])");

    private final Path binary;
    private final Path sysfsRoot;
    private final Duration timeout;
    private final int splitCount;
    private final String mode;
    private final double memoryScaling;
    private final double coreScaling;

    /**
     * @param binary     the nvidia-smi executable
     * @param sysfsRoot  where sysfs is mounted ({@code /sys}; a hostPath mount in a container)
     * @param timeout    how long nvidia-smi may run before it is killed
     * @param splitCount HAMi split count for every GPU
     * @param mode       HAMi mode for every GPU ({@code hami-core})
     */
    public NvidiaSmiDeviceSource(Path binary, Path sysfsRoot, Duration timeout, int splitCount, String mode) {
        this(binary, sysfsRoot, timeout, splitCount, mode, 1.0, 1.0);
    }

    /**
     * @param memoryScaling HAMi's {@code deviceMemoryScaling}: the registered {@code devmem} is the GPU's MiB times
     *     this, truncated, when it is not 1 (above 1 oversubscribes memory)
     * @param coreScaling HAMi's {@code deviceCoreScaling}: the registered {@code devcore} is 100 times this, truncated
     */
    public NvidiaSmiDeviceSource(Path binary, Path sysfsRoot, Duration timeout, int splitCount, String mode,
            double memoryScaling, double coreScaling) {
        if (!(memoryScaling > 0) || Double.isInfinite(memoryScaling)) {
            throw new IllegalArgumentException("deviceMemoryScaling: " + memoryScaling + " (expected: > 0)");
        }
        if (!(coreScaling > 0) || Double.isInfinite(coreScaling)) {
            throw new IllegalArgumentException("deviceCoreScaling: " + coreScaling + " (expected: > 0)");
        }
        this.memoryScaling = memoryScaling;
        this.coreScaling = coreScaling;
        this.binary = requireNonNull(binary, "binary");
        this.sysfsRoot = requireNonNull(sysfsRoot, "sysfsRoot");
        this.timeout = requireNonNull(timeout, "timeout");
        this.mode = requireNonNull(mode, "mode");
        if (timeout.isNegative() || timeout.isZero()) {
            throw new ConfigException("--nvidia-smi-timeout", timeout, "> 0");
        }
        if (splitCount <= 0) {
            throw new ConfigException("--device-split-count", splitCount, "> 0");
        }
        this.splitCount = splitCount;
    }

    @Override
    public String kind() {
        return "nvidia-smi";
    }

    @Override
    public List<GpuDevice> discover() throws DeviceDiscoveryException {
        String output = run();
        List<SmiRow> rows = parseCsv(output);
        List<GpuDevice> devices = new ArrayList<>(rows.size());
        for (SmiRow row : rows) {
            // HAMi's plugin: devmem scaled only when the scaling is not 1, devcore = 100 × core scaling.
            int memory = memoryScaling == 1.0 ? row.memoryMiB() : (int) (row.memoryMiB() * memoryScaling);
            devices.add(new GpuDevice(row.uuid(), row.index(), splitCount, memory, (int) (100 * coreScaling),
                    GpuDevice.typeForModel(row.name()), numaNode(row.busId()), mode, true));
        }
        return List.copyOf(devices);
    }

    private String run() throws DeviceDiscoveryException {
        if (!Files.isRegularFile(binary) || !Files.isExecutable(binary)) {
            throw new DeviceDiscoveryException(FailureReason.NVIDIA_SMI_MISSING, "nvidia-smi binary " + binary
                    + ": not found or not executable (expected: the driver's nvidia-smi; set --nvidia-smi-path)");
        }
        List<String> command = new ArrayList<>(QUERY_ARGUMENTS.size() + 1);
        command.add(binary.toString());
        command.addAll(QUERY_ARGUMENTS);
        Process process;
        try {
            process = new ProcessBuilder(command).redirectErrorStream(true).start();
        } catch (IOException e) {
            throw new DeviceDiscoveryException(FailureReason.NVIDIA_SMI_MISSING,
                    "nvidia-smi binary " + binary + ": cannot be started: " + e.getMessage(), e);
        }
        try {
            process.getOutputStream().close();
            FutureTask<String> reader = new FutureTask<>(() -> readCapped(process.getInputStream()));
            Thread readerThread = DaemonThreads.newThread("nvidia-smi-output", reader);
            readerThread.start();
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new DeviceDiscoveryException(FailureReason.NVIDIA_SMI_TIMEOUT,
                        "nvidia-smi did not finish within " + timeout + "; killed it (expected: an answer from the driver)");
            }
            String output = reader.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            int status = process.exitValue();
            if (status != 0) {
                throw exitFailure(status, output);
            }
            return output;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new DeviceDiscoveryException(FailureReason.NVIDIA_SMI_TIMEOUT,
                    "interrupted while waiting for nvidia-smi", e);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof DeviceDiscoveryException dde) {
                throw dde;
            }
            throw new DeviceDiscoveryException(FailureReason.MALFORMED_OUTPUT,
                    "cannot read nvidia-smi output: " + cause, cause);
        } catch (TimeoutException e) {
            throw new DeviceDiscoveryException(FailureReason.NVIDIA_SMI_TIMEOUT,
                    "nvidia-smi exited but its output did not end within " + timeout, e);
        } catch (IOException e) {
            throw new DeviceDiscoveryException(FailureReason.NVIDIA_SMI_FAILED,
                    "cannot talk to nvidia-smi: " + e.getMessage(), e);
        } finally {
            // Kills a hung nvidia-smi (timeout, interrupt); a no-op when it already exited.
            process.destroyForcibly();
        }
    }

    private static String readCapped(InputStream in) throws IOException, DeviceDiscoveryException {
        try (in) {
            byte[] bytes = in.readNBytes(MAX_OUTPUT_BYTES + 1);
            if (bytes.length > MAX_OUTPUT_BYTES) {
                throw new DeviceDiscoveryException(FailureReason.MALFORMED_OUTPUT,
                        "nvidia-smi printed more than " + MAX_OUTPUT_BYTES + " bytes (expected: one CSV line per GPU)");
            }
            return new String(bytes, StandardCharsets.UTF_8);
        }
    }

    /** Maps a non-zero exit to a reason by the message nvidia-smi printed. */
    static DeviceDiscoveryException exitFailure(int status, String output) {
        String firstLine = output.lines().map(String::strip).filter(l -> !l.isEmpty()).findFirst().orElse("(no output)");
        String lower = output.toLowerCase(Locale.ROOT);
        String prefix = "nvidia-smi exited with status " + status + ": " + firstLine;
        if (lower.contains("couldn't communicate with the nvidia driver")
                || lower.contains("failed to initialize nvml")
                || lower.contains("driver/library version mismatch")) {
            return new DeviceDiscoveryException(FailureReason.DRIVER_UNAVAILABLE,
                    prefix + " (expected: a loaded NVIDIA driver visible to this container)");
        }
        if (lower.contains("no devices were found")) {
            return new DeviceDiscoveryException(FailureReason.NO_DEVICES,
                    prefix + " (expected: at least one NVIDIA GPU on this node)");
        }
        return new DeviceDiscoveryException(FailureReason.NVIDIA_SMI_FAILED, prefix);
    }

    /** One line of the query output. */
    record SmiRow(int index, String uuid, String name, int memoryMiB, String busId) {
    }

    /**
     * Parses the query output: one line per GPU, {@code index, uuid, name, memory.total, pci.bus_id}.
     * Rows come back ordered by index.
     */
    static List<SmiRow> parseCsv(String output) throws DeviceDiscoveryException {
        List<SmiRow> rows = new ArrayList<>();
        Set<Integer> indexes = new HashSet<>();
        Set<String> uuids = new HashSet<>();
        List<String> lines = output.lines().toList();
        for (int n = 0; n < lines.size(); n++) {
            String line = lines.get(n).strip();
            if (line.isEmpty()) {
                continue;
            }
            String[] f = line.split(",", -1);
            if (f.length != 5) {
                throw malformed(n, line, "5 comma-separated fields index, uuid, name, memory.total, pci.bus_id");
            }
            for (int i = 0; i < f.length; i++) {
                f[i] = f[i].strip();
            }
            int index = parseInt(f[0], n, line, "index");
            String uuid = f[1];
            if (!uuid.startsWith("GPU-") || uuid.length() <= 4 || uuid.chars().anyMatch(Character::isWhitespace)) {
                throw malformed(n, line, "uuid like GPU-xxxxxxxx-xxxx-…, got '" + uuid + "'");
            }
            if (f[2].isEmpty()) {
                throw malformed(n, line, "a GPU name");
            }
            int memory = parseInt(f[3], n, line, "memory.total in MiB");
            if (memory <= 0) {
                throw malformed(n, line, "memory.total > 0 MiB, got " + memory);
            }
            Matcher bus = BUS_ID.matcher(f[4]);
            if (!bus.matches()) {
                throw malformed(n, line, "pci.bus_id like 00000000:07:00.0, got '" + f[4] + "'");
            }
            if (!indexes.add(index) || !uuids.add(uuid)) {
                throw malformed(n, line, "each index and uuid once");
            }
            rows.add(new SmiRow(index, uuid, f[2], memory, f[4]));
        }
        if (rows.isEmpty()) {
            throw new DeviceDiscoveryException(FailureReason.NO_DEVICES,
                    "nvidia-smi listed no GPUs (expected: at least one NVIDIA GPU on this node)");
        }
        rows.sort(Comparator.comparingInt(SmiRow::index));
        return List.copyOf(rows);
    }

    private static int parseInt(String text, int line, String raw, String what) throws DeviceDiscoveryException {
        try {
            int value = Integer.parseInt(text);
            if (value < 0) {
                throw malformed(line, raw, what + " >= 0, got " + value);
            }
            return value;
        } catch (NumberFormatException e) {
            throw malformed(line, raw, what + ", got '" + text + "'");
        }
    }

    private static DeviceDiscoveryException malformed(int line, String raw, String expected) {
        String shown = raw.length() <= 160 ? raw : raw.substring(0, 157) + "...";
        return new DeviceDiscoveryException(FailureReason.MALFORMED_OUTPUT,
                "nvidia-smi output line " + (line + 1) + ": '" + shown + "' (expected: " + expected + ")");
    }

    /**
     * The sysfs name of a PCI device for nvidia-smi's bus id: nvidia-smi prints an 8-digit domain
     * ({@code 00000000:07:00.0}), sysfs names devices with the kernel's {@code %04x} domain and lower
     * case ({@code 0000:07:00.0}).
     */
    static String sysfsPciAddress(String busId) {
        Matcher m = BUS_ID.matcher(busId);
        if (!m.matches()) {
            throw new IllegalArgumentException("pci.bus_id: '" + busId + "' (expected: like 00000000:07:00.0)");
        }
        int domain = Integer.parseUnsignedInt(m.group(1), 16);
        return String.format(Locale.ROOT, "%04x:%s:%s.%s", domain, m.group(2).toLowerCase(Locale.ROOT),
                m.group(3).toLowerCase(Locale.ROOT), m.group(4));
    }

    private int numaNode(String busId) {
        Path file = sysfsRoot.resolve("bus/pci/devices").resolve(sysfsPciAddress(busId)).resolve("numa_node");
        try {
            String text = Files.readString(file, StandardCharsets.US_ASCII).strip();
            int node = Integer.parseInt(text);
            return Math.max(node, 0); // -1: no NUMA affinity; HAMi registers 0
        } catch (NoSuchFileException e) {
            log.debug("No NUMA information for GPU, registering numa 0 pciBusId={} file={}", busId, file);
            return 0;
        } catch (IOException | NumberFormatException e) {
            log.warn("Cannot read NUMA node for GPU, registering numa 0 pciBusId={} file={} error={}", busId, file,
                    e.toString());
            return 0;
        }
    }
}
