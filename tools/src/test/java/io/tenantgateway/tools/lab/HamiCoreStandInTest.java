package io.tenantgateway.tools.lab;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tenantgateway.deviceplugin.v1beta1.ContainerAllocateResponse;
import io.tenantgateway.deviceplugin.v1beta1.Mount;
import io.tenantgateway.hami.region.DeviceUsage;
import io.tenantgateway.hami.region.RegionRead;
import io.tenantgateway.hami.region.SharedRegion;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The HAMi-core stand-in finds its region where Allocate's env and mounts put it on the host, with the env's limits,
 * and writes a usage that changes from one call to the next, readable by the monitor's reader.
 */
@Timeout(30)
class HamiCoreStandInTest {
    private static final String UID = "6a1f0c2e-3b4d-4e5f-8a9b-0c1d2e3f4a5b";
    private static final String GPU = "GPU-fd3fb42c-2a0d-3358-af73-9fe9256f50bc";
    private static final String CACHE = "0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0.cache";
    private static final Clock CLOCK = Clock.fixed(Instant.ofEpochSecond(1_800_000_000L), ZoneOffset.UTC);

    @TempDir
    Path host;

    /** What the agent's Allocate answers for a 1024 MiB / 10 % container (check 9 prints it). */
    private static ContainerAllocateResponse answer(String visible, String... limits) {
        ContainerAllocateResponse.Builder answer = ContainerAllocateResponse.newBuilder()
                .putEnvs("NVIDIA_VISIBLE_DEVICES", visible)
                .putEnvs("CUDA_DEVICE_SM_LIMIT", "10")
                .putEnvs("CUDA_DEVICE_MEMORY_SHARED_CACHE", "/usr/local/vgpu/" + CACHE)
                .addMounts(Mount.newBuilder().setContainerPath("/usr/local/vgpu/libvgpu.so")
                        .setHostPath("/usr/local/vgpu/libvgpu.so").setReadOnly(true))
                .addMounts(Mount.newBuilder().setContainerPath("/usr/local/vgpu")
                        .setHostPath("/usr/local/vgpu/containers/" + UID + "_cuda"))
                .addMounts(Mount.newBuilder().setContainerPath("/tmp/vgpulock").setHostPath("/tmp/vgpulock"));
        for (int i = 0; i < limits.length; i++) {
            answer.putEnvs("CUDA_DEVICE_MEMORY_LIMIT_" + i, limits[i]);
        }
        return answer.build();
    }

    @Test
    void writesTheRegionWhereTheMountsPutTheCacheFileWithTheEnvsLimitsAndAChangingUsage() throws Exception {
        HamiCoreStandIn core = HamiCoreStandIn.of(answer(GPU, "1024m"), host, 4242);

        Path file = host.resolve("usr/local/vgpu/containers/" + UID + "_cuda/" + CACHE);
        assertThat(core.hostFile()).isEqualTo(file);
        assertThat(core.containerFile()).isEqualTo("/usr/local/vgpu/" + CACHE);
        assertThat(core.limits()).containsExactly(new HamiCoreStandIn.Limit(GPU, 1024L << 20, 10));
        assertThat(file).doesNotExist();

        HamiCoreStandIn.Written first = core.cudaCall(CLOCK);
        RegionRead read = SharedRegion.read(file);
        assertThat(read.isOk()).as(read.detail()).isTrue();
        assertThat(read.snapshot().lastKernelTime()).isEqualTo(1_800_000_000L);
        DeviceUsage device = read.snapshot().devices().get(0);
        assertThat(device.uuid()).isEqualTo(GPU);
        assertThat(device.limitBytes()).isEqualTo(1024L << 20);
        assertThat(device.smLimitPercent()).isEqualTo(10);
        assertThat(device.usedBytes()).isEqualTo(256L << 20).isEqualTo(first.devices().get(0).usedBytes());
        assertThat(device.smUtilSum()).isEqualTo(5);
        assertThat(first.usedMiB()).isEqualTo(256);

        HamiCoreStandIn.Written second = core.cudaCall(CLOCK);
        assertThat(second.write()).isEqualTo(2);
        assertThat(SharedRegion.read(file).snapshot().devices().get(0).usedBytes()).isEqualTo(512L << 20);
        assertThat(SharedRegion.read(file).snapshot().devices().get(0).smUtilSum()).isEqualTo(10);
        assertThat(List.of(core.cudaCall(CLOCK).usedMiB(), core.cudaCall(CLOCK).usedMiB(), core.cudaCall(CLOCK)
                .usedMiB())).as("every call's usage differs from the one before").containsExactly(768L, 1024L, 256L);
        try (var files = Files.list(file.getParent())) {
            assertThat(files).containsExactly(file);
        }
    }

    @Test
    void everyVisibleDeviceGetsItsOwnLimitOrTheOneForAll() throws Exception {
        HamiCoreStandIn core = HamiCoreStandIn.of(answer(GPU + ",GPU-2", "2g", "512M"), host, 1);
        assertThat(core.limits()).containsExactly(new HamiCoreStandIn.Limit(GPU, 2L << 30, 10),
                new HamiCoreStandIn.Limit("GPU-2", 512L << 20, 10));

        HamiCoreStandIn shared = HamiCoreStandIn.of(answer(GPU).toBuilder()
                .putEnvs("CUDA_DEVICE_MEMORY_LIMIT", "4096m").build(), host, 1);
        assertThat(shared.limits()).containsExactly(new HamiCoreStandIn.Limit(GPU, 4096L << 20, 10));
        assertThat(SharedRegion.read(shared.cudaCall(CLOCK).file()).snapshot().devices()).hasSize(1);
        assertThat(HamiCoreStandIn.memoryBytes("1048576")).isEqualTo(1L << 20);
        assertThat(HamiCoreStandIn.memoryBytes("64k")).isEqualTo(64L << 10);
        assertThat(HamiCoreStandIn.memoryBytes(null)).isZero();
    }

    @Test
    void anAnswerWithoutARegionFileAMountForItOrADeviceIsRefusedWithWhatItLacks() {
        assertThatThrownBy(() -> HamiCoreStandIn.of(answer(GPU, "1m").toBuilder()
                .removeEnvs("CUDA_DEVICE_MEMORY_SHARED_CACHE").build(), host, 1))
                .hasMessage("CUDA_DEVICE_MEMORY_SHARED_CACHE: null (expected: an absolute path in the container)");
        assertThatThrownBy(() -> HamiCoreStandIn.of(answer(GPU, "1m").toBuilder().removeMounts(1).build(), host, 1))
                .hasMessageStartingWith("CUDA_DEVICE_MEMORY_SHARED_CACHE=/usr/local/vgpu/" + CACHE + " is in no"
                        + " mount of the Allocate answer (mounts: [/usr/local/vgpu/libvgpu.so,");
        assertThatThrownBy(() -> HamiCoreStandIn.of(answer(GPU, "1m").toBuilder()
                .putEnvs("CUDA_DEVICE_MEMORY_SHARED_CACHE", "/usr/local/vgpu/../../../../../etc/x.cache").build(),
                host, 1)).hasMessageStartingWith("CUDA_DEVICE_MEMORY_SHARED_CACHE=/etc/x.cache is in no mount");
        assertThatThrownBy(() -> HamiCoreStandIn.of(answer(GPU, "1m").toBuilder().setMounts(1, Mount.newBuilder()
                .setContainerPath("/usr/local/vgpu").setHostPath("/../../outside")).build(), host, 1))
                .hasMessage("CUDA_DEVICE_MEMORY_SHARED_CACHE=/usr/local/vgpu/" + CACHE + " leaves the host root"
                        + " through mount /../../outside");
        assertThatThrownBy(() -> HamiCoreStandIn.of(answer(""), host, 1))
                .hasMessage("NVIDIA_VISIBLE_DEVICES: \"\" (expected: the container's device UUIDs)");
    }
}
