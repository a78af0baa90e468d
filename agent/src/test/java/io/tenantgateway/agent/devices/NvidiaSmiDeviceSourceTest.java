package io.tenantgateway.agent.devices;

import static io.tenantgateway.agent.testing.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import io.tenantgateway.hami.GpuDevice;
import io.tenantgateway.hami.HamiDeviceCodec;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Runs the source against a real process: a fake {@code nvidia-smi} shell script that checks the
 * arguments and prints a recorded output (see the README next to the fixtures).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class NvidiaSmiDeviceSourceTest {

    @TempDir
    Path dir;
    Path sysfs;

    @BeforeEach
    void sysfs() throws IOException {
        sysfs = dir.resolve("sys");
        numaNode("0000:94:00.0", "1\n");
        numaNode("3e3f8e05:00:00.0", "-1\n"); // no NUMA affinity (VMs)
        for (String bus : List.of("18", "2a", "3a", "5d")) {
            numaNode("0000:" + bus + ":00.0", "0\n");
        }
        for (String bus : List.of("9a", "ab", "ba", "db")) {
            numaNode("0000:" + bus + ":00.0", "1\n");
        }
    }

    /** One GPU each: an A100 on NUMA node 1 (sysfs), an L40S with no sysfs entry (registered on NUMA node 0). */
    static Stream<Arguments> singleGpus() {
        return Stream.of(
                arguments("a100-sxm4-80gb.csv", new GpuDevice("GPU-a75cda02-62ce-2c30-9150-555ef08935e2", 0, 10,
                        81920, 100, "NVIDIA A100-SXM4-80GB", 1, "hami-core", true)),
                arguments("l40s.csv", new GpuDevice("GPU-eaf0bc12-3996-9441-6965-b6955608929c", 0, 10, 46068, 100,
                        "NVIDIA L40S", 0, "hami-core", true)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("singleGpus")
    void singleGpu(String recordedOutput, GpuDevice expected) throws Exception {
        List<GpuDevice> devices = source(fakeSmi(recordedOutput, 0), WAIT).discover();

        assertThat(devices).containsExactly(expected);
    }

    /** HAMi's plugin: devmem × deviceMemoryScaling (truncated) when it is not 1, devcore = 100 × deviceCoreScaling. */
    @Test
    void scalingFromTheDeviceConfigIsAppliedAsHamisPluginDoes() throws Exception {
        List<GpuDevice> devices = new NvidiaSmiDeviceSource(fakeSmi("a100-sxm4-80gb.csv", 0), sysfs,
                WAIT, 4, GpuDevice.MODE_HAMI_CORE, 1.5, 2.5).discover();

        assertThat(devices).containsExactly(new GpuDevice("GPU-a75cda02-62ce-2c30-9150-555ef08935e2", 0, 4, 122880,
                250, "NVIDIA A100-SXM4-80GB", 1, "hami-core", true));
    }

    @Test
    void oldModelNameGetsTheNvidiaPrefixAndWideDomainMapsToSysfs() throws Exception {
        List<GpuDevice> devices = source(fakeSmi("tesla-k80-azure.csv", 0), WAIT).discover();

        assertThat(devices).singleElement().satisfies(d -> {
            assertThat(d.type()).isEqualTo("NVIDIA-Tesla K80");
            assertThat(d.devmemMiB()).isEqualTo(11441);
            assertThat(d.numa()).isZero(); // sysfs says -1
        });
        assertThat(NvidiaSmiDeviceSource.sysfsPciAddress("3E3F8E05:00:00.0")).isEqualTo("3e3f8e05:00:00.0");
        assertThat(NvidiaSmiDeviceSource.sysfsPciAddress("00000000:AB:00.0")).isEqualTo("0000:ab:00.0");
    }

    @Test
    void eightGpuHostInIndexOrderWithNumaFromSysfs() throws Exception {
        List<GpuDevice> devices = source(fakeSmi("hgx-8x-h100-80gb-hbm3.csv", 0), WAIT).discover();

        assertThat(devices).hasSize(8);
        assertThat(devices).extracting(GpuDevice::index).containsExactly(0, 1, 2, 3, 4, 5, 6, 7);
        assertThat(devices).extracting(GpuDevice::numa).containsExactly(0, 0, 0, 0, 1, 1, 1, 1);
        assertThat(devices).allSatisfy(d -> {
            assertThat(d.devmemMiB()).isEqualTo(81559);
            assertThat(d.type()).isEqualTo("NVIDIA H100 80GB HBM3");
            assertThat(d.count()).isEqualTo(10);
        });
        assertThat(devices.get(7).id()).isEqualTo("GPU-5534d557-2a95-300a-81e6-7b626d87378a");
        // Encodes like HAMi's plugin would register it: numa 1 appears, numa 0 and index 0 do not.
        assertThat(HamiDeviceCodec.encode(devices.subList(3, 5))).isEqualTo(
                "[{\"id\":\"GPU-7353c83a-0617-7238-ca5a-9b9c80212c46\",\"index\":3,\"count\":10,\"devmem\":81559,"
                        + "\"devcore\":100,\"type\":\"NVIDIA H100 80GB HBM3\",\"mode\":\"hami-core\",\"health\":true},"
                        + "{\"id\":\"GPU-b71a1811-5b24-ae65-9a8f-4118c7c1db31\",\"index\":4,\"count\":10,\"devmem\":81559,"
                        + "\"devcore\":100,\"type\":\"NVIDIA H100 80GB HBM3\",\"numa\":1,\"mode\":\"hami-core\",\"health\":true}]");
    }

    @Test
    void noDriver() throws Exception {
        assertFailure(fakeSmi("error-no-driver.txt", 9), FailureReason.DRIVER_UNAVAILABLE,
                "nvidia-smi exited with status 9: NVIDIA-SMI has failed because it couldn't communicate with the "
                        + "NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running. "
                        + "(expected: a loaded NVIDIA driver visible to this container)");
    }

    @Test
    void driverLibraryMismatch() throws Exception {
        assertFailure(fakeSmi("error-version-mismatch.txt", 18), FailureReason.DRIVER_UNAVAILABLE,
                "nvidia-smi exited with status 18: Failed to initialize NVML: Driver/library version mismatch "
                        + "(expected: a loaded NVIDIA driver visible to this container)");
    }

    @Test
    void noDevices() throws Exception {
        assertFailure(fakeSmi("error-no-devices.txt", 6), FailureReason.NO_DEVICES,
                "nvidia-smi exited with status 6: No devices were found (expected: at least one NVIDIA GPU on this node)");
        assertFailure(script("exit 0"), FailureReason.NO_DEVICES,
                "nvidia-smi listed no GPUs (expected: at least one NVIDIA GPU on this node)");
    }

    @Test
    void otherNonZeroExit() throws Exception {
        assertFailure(script("echo 'Insufficient Permissions'; exit 4"), FailureReason.NVIDIA_SMI_FAILED,
                "nvidia-smi exited with status 4: Insufficient Permissions");
    }

    @Test
    void garbageOutput() throws Exception {
        assertFailure(fakeSmi("garbage-memory-not-available.csv", 0), FailureReason.MALFORMED_OUTPUT,
                "nvidia-smi output line 1: '0, GPU-3f1dc2a0-7c1e-4d55-9b7a-6e2f0c3ba902, NVIDIA GB10, [N/A], "
                        + "0000000F:01:00.0' (expected: memory.total in MiB, got '[N/A]')");
        assertFailure(fakeSmi("garbage-with-header-and-units.csv", 0), FailureReason.MALFORMED_OUTPUT,
                "nvidia-smi output line 1: 'index, uuid, name, memory.total [MiB], pci.bus_id' "
                        + "(expected: index, got 'index')");
        assertFailure(script("echo '<html>segfault</html>'"), FailureReason.MALFORMED_OUTPUT,
                "nvidia-smi output line 1: '<html>segfault</html>' (expected: 5 comma-separated fields "
                        + "index, uuid, name, memory.total, pci.bus_id)");
        assertFailure(script("echo '0, GPU-a, NVIDIA L4, 23034, 0000:01:00.0'; echo '0, GPU-b, NVIDIA L4, 23034, 0000:02:00.0'"),
                FailureReason.MALFORMED_OUTPUT,
                "nvidia-smi output line 2: '0, GPU-b, NVIDIA L4, 23034, 0000:02:00.0' (expected: each index and uuid once)");
    }

    @Test
    void binaryMissing() {
        Path missing = dir.resolve("no-such-nvidia-smi");

        assertThatThrownBy(() -> source(missing, WAIT).discover())
                .isInstanceOfSatisfying(DeviceDiscoveryException.class,
                        e -> assertThat(e.reason()).isEqualTo(FailureReason.NVIDIA_SMI_MISSING))
                .hasMessage("nvidia-smi binary " + missing
                        + ": not found or not executable (expected: the driver's nvidia-smi; set --nvidia-smi-path)");
    }

    @Test
    void hungNvidiaSmiIsKilledAfterTheTimeout() throws Exception {
        assertFailure(script("exec sleep 60"), Duration.ofMillis(300), FailureReason.NVIDIA_SMI_TIMEOUT,
                "nvidia-smi did not finish within PT0.3S; killed it (expected: an answer from the driver)");
    }

    // ------------------------------------------------------------------ helpers

    private NvidiaSmiDeviceSource source(Path binary, Duration timeout) {
        return new NvidiaSmiDeviceSource(binary, sysfs, timeout, 10, GpuDevice.MODE_HAMI_CORE);
    }

    private void assertFailure(Path binary, FailureReason reason, String message) {
        assertFailure(binary, WAIT, reason, message);
    }

    private void assertFailure(Path binary, Duration timeout, FailureReason reason, String message) {
        assertThatThrownBy(() -> source(binary, timeout).discover())
                .isInstanceOfSatisfying(DeviceDiscoveryException.class, e -> assertThat(e.reason()).isEqualTo(reason))
                .hasMessage(message);
    }

    /** A fake nvidia-smi that prints a recorded output and exits with {@code status}. */
    private Path fakeSmi(String fixture, int status) throws IOException {
        Path output = dir.resolve(fixture);
        try (InputStream in = getClass().getResourceAsStream("nvidia-smi/" + fixture)) {
            assertThat(in).as(fixture).isNotNull();
            Files.write(output, in.readAllBytes());
        }
        return script("cat '" + output + "'\nexit " + status);
    }

    /** A fake nvidia-smi running {@code body} once it has checked it was asked the right query. */
    private Path script(String body) throws IOException {
        Path smi = Files.createTempFile(dir, "nvidia-smi", ".sh");
        Files.writeString(smi, "#!/bin/sh\n"
                + "if [ \"$1\" != '--query-gpu=index,uuid,name,memory.total,pci.bus_id' ] "
                + "|| [ \"$2\" != '--format=csv,noheader,nounits' ] || [ $# -ne 2 ]; then\n"
                + "  echo \"unexpected arguments: $*\"; exit 2\nfi\n"
                + body + "\n", StandardCharsets.UTF_8);
        Files.setPosixFilePermissions(smi, PosixFilePermissions.fromString("rwx------"));
        return smi;
    }

    private void numaNode(String address, String value) throws IOException {
        Path file = sysfs.resolve("bus/pci/devices").resolve(address).resolve("numa_node");
        Files.createDirectories(file.getParent());
        Files.writeString(file, value);
    }
}
