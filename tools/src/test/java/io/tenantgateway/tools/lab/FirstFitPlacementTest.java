package io.tenantgateway.tools.lab;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tenantgateway.tools.lab.FirstFitPlacement.Fit;
import io.tenantgateway.tools.lab.FirstFitPlacement.GpuRequest;
import io.tenantgateway.tools.lab.FirstFitPlacement.Placement;
import io.tenantgateway.tools.lab.FirstFitPlacement.Refused;
import io.tenantgateway.tools.lab.FirstFitPlacement.Usage;
import io.tenantgateway.hami.ContainerDevice;
import io.tenantgateway.hami.GpuDevice;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(60)
class FirstFitPlacementTest {
    private static final GpuDevice A100 = device("GPU-a100-0000-0000", 0, 10, 81920, 100, "NVIDIA A100-SXM4-80GB");
    private static final GpuDevice L4_0 = device("GPU-l4-0-0000-0000", 0, 10, 23034, 100, "NVIDIA L4");
    private static final GpuDevice L4_1 = device("GPU-l4-1-0000-0000", 1, 10, 23034, 100, "NVIDIA L4");

    private static GpuDevice device(String id, int index, int count, int memory, int cores, String type) {
        return new GpuDevice(id, index, count, memory, cores, type, 0, GpuDevice.MODE_HAMI_CORE, true);
    }

    private static List<Optional<GpuRequest>> one(String gpu, String memory, String cores) {
        Map<String, String> limits = new HashMap<>();
        limits.put("nvidia.com/gpu", gpu);
        if (memory != null) {
            limits.put("nvidia.com/gpumem", memory);
        }
        if (cores != null) {
            limits.put("nvidia.com/gpucores", cores);
        }
        return List.of(GpuRequest.fromLimits("cuda", limits));
    }

    /** Places pods one after another, each seeing what the earlier ones hold, as the scheduler does. */
    private static List<Placement> placeAll(List<GpuDevice> devices, int pods, List<Optional<GpuRequest>> request) {
        Map<String, Usage> usage = new HashMap<>();
        List<Placement> results = new java.util.ArrayList<>();
        for (int i = 0; i < pods; i++) {
            Placement placement = FirstFitPlacement.place(devices, usage, request);
            results.add(placement);
            if (placement instanceof Fit fit) {
                for (ContainerDevice d : fit.devices().get(0)) {
                    usage.merge(d.uuid(), Usage.NONE.plus(d.memoryMiB(), d.cores()),
                            (x, y) -> new Usage(x.memoryMiB() + y.memoryMiB(), x.cores() + y.cores(), x.pods() + y.pods()));
                }
            }
        }
        return results;
    }

    @Test
    void fourTwentyGibQuarterPodsFillAnA100AndTheFifthIsRefusedForMemory() {
        List<Placement> results = placeAll(List.of(A100), 5, one("1", "20480", "25"));

        assertThat(results.subList(0, 4)).allSatisfy(p -> assertThat(p).isInstanceOfSatisfying(Fit.class, fit ->
                assertThat(fit.devices()).containsExactly(List.of(ContainerDevice.nvidia(A100.id(), 20480, 25)))));
        assertThat(results.get(4)).isInstanceOfSatisfying(Refused.class, refused -> assertThat(refused.reason())
                .isEqualTo("no GPU fits container cuda (1 × 20480 MiB, 25 % cores): #0 GPU-a100-000"
                        + " memory: 0 of 81920 MiB free, 20480 requested"));
    }

    @Test
    void firstFitSpreadsOnlyWhenTheFirstDeviceIsFull() {
        List<Placement> big = placeAll(List.of(L4_0, L4_1), 3, one("1", "16384", "50"));
        assertThat(((Fit) big.get(0)).devices().get(0).get(0).uuid()).isEqualTo(L4_0.id());
        assertThat(((Fit) big.get(1)).devices().get(0).get(0).uuid()).isEqualTo(L4_1.id());
        assertThat(big.get(2)).isInstanceOfSatisfying(Refused.class, r -> assertThat(r.reason())
                .contains("#0 GPU-l4-0-000 memory: 6650 of 23034 MiB free, 16384 requested",
                        "#1 GPU-l4-1-000 memory: 6650 of 23034 MiB free"));

        List<Placement> small = placeAll(List.of(L4_0, L4_1), 2, one("1", "1024", "10"));
        assertThat(small).allSatisfy(p -> assertThat(((Fit) p).devices().get(0).get(0).uuid()).isEqualTo(L4_0.id()));
    }

    @Test
    void splitCountLimitsHowManyPodsShareADevice() {
        GpuDevice unshared = device("GPU-solo-0000-0000", 0, 1, 81920, 100, "NVIDIA A100-SXM4-80GB");
        List<Placement> results = placeAll(List.of(unshared), 2, one("1", "20480", "25"));

        assertThat(results.get(0)).isInstanceOf(Fit.class);
        assertThat(((Refused) results.get(1)).reason()).endsWith("#0 GPU-solo-000 shared by 1 of 1 pods (split count)");
    }

    @Test
    void coresAreCheckedAfterMemoryAndFullCoresMeanExclusive() {
        List<Placement> cores = placeAll(List.of(A100), 3, one("1", "1000", "40"));
        assertThat(((Refused) cores.get(2)).reason()).endsWith("cores: 20 % free, 40 % requested");

        Map<String, Usage> oneSmallPod = Map.of(A100.id(), new Usage(1000, 0, 1));
        Placement exclusive = FirstFitPlacement.place(List.of(A100), oneSmallPod, one("1", null, "100"));
        assertThat(((Refused) exclusive).reason()).contains("memory: 80920 of 81920 MiB free, 81920 requested");
        Placement exclusiveSmall = FirstFitPlacement.place(List.of(A100), oneSmallPod, one("1", "1000", "100"));
        assertThat(((Refused) exclusiveSmall).reason())
                .endsWith("exclusive use (100 % cores) requested, shared by 1 pods");
    }

    @Test
    void noMemoryRequestMeansTheWholeDeviceAndPercentagesScale() {
        Fit whole = (Fit) FirstFitPlacement.place(List.of(L4_0), Map.of(), one("1", null, null));
        assertThat(whole.devices().get(0)).containsExactly(ContainerDevice.nvidia(L4_0.id(), 23034, 0));

        Fit half = (Fit) FirstFitPlacement.place(List.of(A100), Map.of(), List.of(GpuRequest.fromLimits("cuda",
                Map.of("nvidia.com/gpu", "1", "nvidia.com/gpumem-percentage", "50"))));
        assertThat(half.devices().get(0)).containsExactly(ContainerDevice.nvidia(A100.id(), 40960, 0));
    }

    @Test
    void multiGpuContainersGetDistinctDevicesAndContainersWithoutGpuGetEmptyEntries() {
        List<Optional<GpuRequest>> pod = List.of(Optional.empty(), GpuRequest.fromLimits("train",
                Map.of("nvidia.com/gpu", "2", "nvidia.com/gpumem", "8000")));
        Fit fit = (Fit) FirstFitPlacement.place(List.of(L4_0, L4_1), Map.of(), pod);

        assertThat(fit.devices()).containsExactly(List.of(), List.of(ContainerDevice.nvidia(L4_0.id(), 8000, 0),
                ContainerDevice.nvidia(L4_1.id(), 8000, 0)));
        Placement three = FirstFitPlacement.place(List.of(L4_0, L4_1), Map.of(), one("3", "8000", null));
        assertThat(((Refused) three).reason()).isEqualTo("no GPU fits container cuda (3 × 8000 MiB, 0 % cores): only 2"
                + " of 3 GPUs fit");
    }

    @Test
    void unhealthyAndForeignDevicesAreSkipped() {
        GpuDevice sick = new GpuDevice("GPU-sick-0000-0000", 0, 10, 81920, 100, "NVIDIA A100", 0, "", false);
        GpuDevice other = device("GPU-mlu-0000-0000", 1, 10, 81920, 100, "MLU370");
        Placement placement = FirstFitPlacement.place(List.of(sick, other), Map.of(), one("1", "1000", "10"));

        assertThat(((Refused) placement).reason()).endsWith("#0 GPU-sick-000 unhealthy; #1 GPU-mlu-0000 type MLU370"
                + " is not NVIDIA");
        assertThat(((Refused) FirstFitPlacement.place(List.of(), Map.of(), one("1", null, null))).reason())
                .endsWith(": no GPUs registered");
    }

    @Test
    void readsOnlyContainersThatAskForAGpuAndRejectsBadNumbers() {
        assertThat(GpuRequest.fromLimits("web", Map.of("cpu", "1"))).isEmpty();
        assertThatThrownBy(() -> GpuRequest.fromLimits("cuda", Map.of("nvidia.com/gpu", "1",
                "nvidia.com/gpumem", "20Gi")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("container cuda: nvidia.com/gpumem: 20Gi (expected: an integer)");
        assertThatThrownBy(() -> GpuRequest.fromLimits("cuda", Map.of("nvidia.com/gpu", "1",
                "nvidia.com/gpucores", "150")))
                .hasMessageContaining("gpucores 150 (expected: gpu >= 1, gpumem >= 0, percentages 0-100)");
    }
}
