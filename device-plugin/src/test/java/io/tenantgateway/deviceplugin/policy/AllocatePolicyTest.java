package io.tenantgateway.deviceplugin.policy;

import static org.assertj.core.api.Assertions.assertThat;

import org.assertj.core.api.InstanceOfAssertFactories;

import io.tenantgateway.hami.Annotations;
import io.tenantgateway.hami.ContainerDevice;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** HAMi's Allocate decision with the spec's values (shared/spec/device-plugin.md §2, steps 2–5). */
class AllocatePolicyTest {
    static final String GPU_A = "GPU-24aa1c7c-9a3b-4e51-8b8f-1d3b0f0e2a11";
    static final String GPU_B = "GPU-9b90c3e0-7f5d-4a3e-9c1b-2e4f6a8b0c22";
    static final String CACHE = "5b8b0d39-3f4e-4c36-9a0e-6a1a2c3d4e5f";
    static final String UID = "0f7e6d5c-4b3a-4291-8f7e-6d5c4b3a2910";
    private final AllocatePolicy policy = new AllocatePolicy(HamiCoreSettings.DEFAULTS, "worker-1");

    static PodView pod(String toAllocate, List<ContainerView> init, List<ContainerView> containers) {
        Map<String, String> annotations = new LinkedHashMap<>();
        annotations.put(Annotations.POD_VGPU_NODE, "worker-1");
        annotations.put(Annotations.POD_BIND_PHASE, Annotations.BIND_PHASE_ALLOCATING);
        annotations.put(Annotations.POD_BIND_TIME, "1748772000");
        if (toAllocate != null) {
            annotations.put(Annotations.POD_DEVICES_TO_ALLOCATE, toAllocate);
            annotations.put(Annotations.POD_DEVICES_ALLOCATED, toAllocate);
        }
        return new PodView("team-a", "p1", UID, "worker-1", "Pending", "7", annotations, init, containers);
    }

    /** A pod whose one container, {@code container}, is to get {@code toAllocate}. */
    static PodView podWith(String container, String toAllocate) {
        return pod(toAllocate, List.of(), List.of(ContainerView.of(container)));
    }

    private AllocateDecision decide(PodView pod, List<String> ids) {
        return policy.decide(pod, ids, Set.of(GPU_A, GPU_B), "libvgpu.so", CACHE);
    }

    /** The decision for kubelet's {@code ids}, which must be an Allocate. */
    private AllocateDecision.Allocate allocate(PodView pod, String... ids) {
        return assertThat(decide(pod, List.of(ids))).asInstanceOf(
                InstanceOfAssertFactories.type(AllocateDecision.Allocate.class)).actual();
    }

    /** The decision for kubelet's {@code ids}, which must be a Refuse. */
    private AllocateDecision.Refuse refuse(PodView pod, String... ids) {
        return assertThat(decide(pod, List.of(ids))).asInstanceOf(
                InstanceOfAssertFactories.type(AllocateDecision.Refuse.class)).actual();
    }

    @Test
    void oneContainerGetsHamisEnvironmentAndMountsExactly() {
        PodView pod = podWith("cuda", GPU_A + ",NVIDIA,24576,30:;");

        AllocateDecision.Allocate decision = allocate(pod, GPU_A + "-3");

        assertThat(decision.entryIndex()).isZero();
        assertThat(decision.containerName()).isEqualTo("cuda");
        assertThat(decision.devices()).containsExactly(ContainerDevice.nvidia(GPU_A, 24576, 30));
        assertThat(decision.allocation().envs()).containsExactly(
                Map.entry("NVIDIA_VISIBLE_DEVICES", GPU_A),
                Map.entry("CUDA_DEVICE_MEMORY_LIMIT_0", "24576m"),
                Map.entry("CUDA_DEVICE_SM_LIMIT", "30"),
                Map.entry("CUDA_DEVICE_MEMORY_SHARED_CACHE", "/usr/local/vgpu/" + CACHE + ".cache"));
        assertThat(decision.allocation().mounts()).containsExactly(
                new Mount("/usr/local/vgpu/libvgpu.so", "/usr/local/vgpu/libvgpu.so", true),
                new Mount("/usr/local/vgpu", "/usr/local/vgpu/containers/" + UID + "_cuda", false),
                new Mount("/tmp/vgpulock", "/tmp/vgpulock", false),
                new Mount("/etc/ld.so.preload", "/usr/local/vgpu/ld.so.preload", true));
        assertThat(decision.remaining()).isEqualTo(";");
        assertThat(decision.last()).isTrue();
    }

    @Test
    void severalDevicesGetOneLimitEachInEntryOrderAndTheFirstDevicesCores() {
        PodView pod = podWith("train", GPU_B + ",NVIDIA,3000,40:" + GPU_A + ",NVIDIA,5000,60:;");

        AllocateDecision.Allocate decision = allocate(pod, GPU_A + "-0", GPU_B + "-1");

        assertThat(decision.allocation().envs()).containsEntry("NVIDIA_VISIBLE_DEVICES", GPU_B + "," + GPU_A)
                .containsEntry("CUDA_DEVICE_MEMORY_LIMIT_0", "3000m")
                .containsEntry("CUDA_DEVICE_MEMORY_LIMIT_1", "5000m")
                .containsEntry("CUDA_DEVICE_SM_LIMIT", "40");
    }

    @Test
    void replicasOfOneGpuAreNamedOnceInVisibleDevices() {
        PodView pod = podWith("c", GPU_A + ",NVIDIA,1000,10:" + GPU_A + ",NVIDIA,1000,10:;");

        AllocateDecision.Allocate decision = allocate(pod, GPU_A + "-0", GPU_A + "-1");

        assertThat(decision.allocation().envs()).containsEntry("NVIDIA_VISIBLE_DEVICES", GPU_A)
                .containsEntry("CUDA_DEVICE_MEMORY_LIMIT_1", "1000m");
    }

    /** HAMi #2899: an init container without a GPU keeps its empty entry; the next entry is the first container's. */
    @Test
    void entriesArePositionalInitContainersFirst() {
        PodView pod = pod(";" + GPU_B + ",NVIDIA,6144,30:;;" + GPU_A + ",NVIDIA,2048,20:;",
                List.of(ContainerView.of("setup")), List.of(ContainerView.of("main"), ContainerView.of("sidecar"),
                        ContainerView.of("worker")));

        AllocateDecision.Allocate first = allocate(pod, GPU_B + "-0");
        assertThat(first.entryIndex()).isEqualTo(1);
        assertThat(first.containerName()).isEqualTo("main");
        assertThat(first.remaining()).isEqualTo(";;;" + GPU_A + ",NVIDIA,2048,20:;");
        assertThat(first.last()).isFalse();

        PodView after = pod(first.remaining(), pod.initContainers(), pod.containers());
        AllocateDecision.Allocate second = allocate(after, GPU_A + "-5");
        assertThat(second.entryIndex()).isEqualTo(3);
        assertThat(second.containerName()).isEqualTo("worker");
        assertThat(second.allocation().mounts().get(1).hostPath())
                .isEqualTo("/usr/local/vgpu/containers/" + UID + "_worker");
        assertThat(second.remaining()).isEqualTo(";;;;");
        assertThat(second.last()).isTrue();
    }

    @Test
    void anInitContainerWithAGpuIsServedFirst() {
        PodView pod = pod(GPU_A + ",NVIDIA,1024,10:;" + GPU_A + ",NVIDIA,4096,50:;", List.of(ContainerView.of("init")),
                List.of(ContainerView.of("app")));

        AllocateDecision.Allocate first = allocate(pod, GPU_A + "-0");

        assertThat(first.containerName()).isEqualTo("init");
        assertThat(first.allocation().envs()).containsEntry("CUDA_DEVICE_MEMORY_LIMIT_0", "1024m");
        assertThat(first.remaining()).isEqualTo(";" + GPU_A + ",NVIDIA,4096,50:;");
    }

    @Test
    void cudaDisableControlTrueLeavesThePreloadOut() {
        for (String value : List.of("true", "1", "T", "TRUE", "True", "t")) {
            PodView pod = pod(GPU_A + ",NVIDIA,1000,0:;", List.of(),
                    List.of(new ContainerView("c", Map.of("CUDA_DISABLE_CONTROL", value))));
            AllocateDecision.Allocate decision = allocate(pod, GPU_A + "-0");
            assertThat(decision.allocation().mounts()).as(value).extracting(Mount::containerPath)
                    .containsExactly("/usr/local/vgpu/libvgpu.so", "/usr/local/vgpu", "/tmp/vgpulock");
        }
        PodView notTrue = pod(GPU_A + ",NVIDIA,1000,0:;", List.of(),
                List.of(new ContainerView("c", Map.of("CUDA_DISABLE_CONTROL", "yes"))));
        assertThat(allocate(notTrue, GPU_A + "-0").allocation().mounts())
                .extracting(Mount::containerPath).contains("/etc/ld.so.preload");
    }

    @Test
    void scalingLogLevelAndCoreLimitAddTheirVariables() {
        AllocatePolicy tuned = new AllocatePolicy(new HamiCoreSettings("/usr/local", 1.5, "4", true), "worker-1");
        PodView pod = podWith("c", GPU_A + ",NVIDIA,1000,0:;");

        AllocateDecision.Allocate decision = (AllocateDecision.Allocate) tuned.decide(pod, List.of(GPU_A + "-0"),
                Set.of(GPU_A), "libvgpu.so.v2.10.0", CACHE);

        assertThat(decision.allocation().envs()).containsEntry("CUDA_OVERSUBSCRIBE", "true")
                .containsEntry("LIBCUDA_LOG_LEVEL", "4").containsEntry("GPU_CORE_UTILIZATION_POLICY", "disable")
                .containsEntry("CUDA_DEVICE_SM_LIMIT", "0");
        assertThat(decision.allocation().mounts().get(0))
                .isEqualTo(new Mount("/usr/local/vgpu/libvgpu.so", "/usr/local/vgpu/libvgpu.so.v2.10.0", true));
        AllocatePolicy exact = new AllocatePolicy(HamiCoreSettings.DEFAULTS.withDeviceMemoryScaling(1.0), "w");
        assertThat(((AllocateDecision.Allocate) exact.decide(pod, List.of(GPU_A + "-0"), Set.of(GPU_A),
                "libvgpu.so", CACHE)).allocation().envs()).doesNotContainKeys("CUDA_OVERSUBSCRIBE",
                "LIBCUDA_LOG_LEVEL", "GPU_CORE_UTILIZATION_POLICY");
    }

    @Test
    void aDifferentNumberOfDevicesThanKubeletAllocatedIsHamisError() {
        PodView pod = podWith("cuda", GPU_A + ",NVIDIA,1000,10:;");

        AllocateDecision.Refuse refuse = refuse(pod, GPU_A + "-0", GPU_A + "-1");

        assertThat(refuse.message()).isEqualTo("device number not matched");
        assertThat(refuse.detail()).isEqualTo("container cuda of team-a/p1: entry 0 names 1 device(s), kubelet"
                + " allocated 2 [" + GPU_A + "-0, " + GPU_A + "-1]");
        assertThat(refuse.failPod()).isTrue();
    }

    @Test
    void aMissingOrUnreadableAnnotationIsDeviceRequestNotFound() {
        AllocateDecision.Refuse missing = refuse(podWith("c", null), GPU_A + "-0");
        assertThat(missing.message()).isEqualTo("device request not found");
        assertThat(missing.detail()).isEqualTo("pod team-a/p1 has no hami.io/vgpu-devices-to-allocate annotation");
        assertThat(missing.failPod()).isTrue();

        AllocateDecision.Refuse garbled = refuse(podWith("c", "GPU-a,NVIDIA,x,1:;"), GPU_A + "-0");
        assertThat(garbled.message()).isEqualTo("device request not found");
        assertThat(garbled.detail()).startsWith("hami.io/vgpu-devices-to-allocate of team-a/p1: device list");
    }

    @Test
    void anAllocatedPodIsNeverFailedByALateCall() {
        PodView done = podWith("c", ";");
        Map<String, String> success = new LinkedHashMap<>(done.annotations());
        success.put(Annotations.POD_BIND_PHASE, Annotations.BIND_PHASE_SUCCESS);
        PodView allocated = new PodView("team-a", "p1", UID, "worker-1", "Pending", "9", success, List.of(),
                done.containers());

        AllocateDecision.Refuse late = refuse(allocated, GPU_A + "-0");
        assertThat(late.message()).isEqualTo("device request not found");
        assertThat(late.failPod()).isFalse();
        assertThat(refuse(done, GPU_A + "-0").failPod()).isTrue();
    }

    @Test
    void anEntryBeyondTheContainersOrForAnotherNodesGpuFails() {
        AllocateDecision.Refuse beyond = refuse(podWith("only", ";" + GPU_A + ",NVIDIA,1,1:;"), GPU_A + "-0");
        assertThat(beyond.detail()).isEqualTo("entry 1 of hami.io/vgpu-devices-to-allocate of team-a/p1 has no"
                + " container (the pod has 0 init and 1 containers)");

        String elsewhere = "GPU-ffffffff-0000-4000-8000-0000000000ff";
        AllocateDecision.Refuse foreign = refuse(podWith("c", elsewhere + ",NVIDIA,1,1:;"), GPU_A + "-0");
        assertThat(foreign.message()).isEqualTo("devices [" + elsewhere + "] are not registered on node worker-1");
        assertThat(foreign.failPod()).isTrue();
    }
}
