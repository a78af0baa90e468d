package io.tenantgateway.deviceplugin.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.entry;

import io.tenantgateway.hami.Annotations;
import io.tenantgateway.hami.NodeVendor;
import io.tenantgateway.hami.RegisteredDevice;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.assertj.core.api.InstanceOfAssertFactories;
import org.junit.jupiter.api.Test;

/**
 * Allocate for the simulated Hygon and Ascend plugins (device-plugin/VENDOR-PLUGINS.md §1.5, §1.6, §2.5, §2.6): the
 * steps HAMi's plugins share, each vendor's answer and error texts, and the completion rule across vendors.
 */
class VendorAllocationTest {
    static final String DCU_A = "DCU-ABC123";
    static final String DCU_B = "DCU-DEF456";
    static final String NPU_0 = "1A2B3C4D-00000000-11111111-22222222-33333333";
    static final String NPU_5 = "5E6F7A8B-44444444-55555555-66666666-77777777";
    static final NodeVendor ASCEND = NodeVendor.ascend("Ascend910B4");
    static final String ASCEND_KEY = "hami.io/Ascend910B4-devices-to-allocate";
    static final String RUNTIME_KEY = "huawei.com/Ascend910B4";

    private final AllocatePolicy hygon = new AllocatePolicy(VendorAllocation.of(NodeVendor.HYGON,
            HamiCoreSettings.DEFAULTS), HamiCoreSettings.DEFAULTS, "worker-1");
    private final AllocatePolicy ascend = new AllocatePolicy(VendorAllocation.of(ASCEND, HamiCoreSettings.DEFAULTS),
            HamiCoreSettings.DEFAULTS, "worker-1");
    /** Device ID → its position in the register annotation. */
    private final Map<String, Long> dcus = Map.of(DCU_A, 0L, DCU_B, 1L);
    private final Map<String, Long> npus = Map.of(NPU_0, 0L, NPU_5, 5L);

    static PodView pod(Map<String, String> extra, String... containers) {
        Map<String, String> annotations = new LinkedHashMap<>();
        annotations.put(Annotations.POD_VGPU_NODE, "worker-1");
        annotations.put(Annotations.POD_BIND_PHASE, Annotations.BIND_PHASE_ALLOCATING);
        annotations.put(Annotations.POD_BIND_TIME, "1748772000");
        annotations.putAll(extra);
        return new PodView("team-a", "p1", "uid-1", "worker-1", "Pending", "7", annotations, List.of(),
                java.util.Arrays.stream(containers).map(ContainerView::of).toList());
    }

    private static AllocateDecision.Allocate allocated(AllocateDecision decision) {
        return assertThat(decision).asInstanceOf(InstanceOfAssertFactories.type(AllocateDecision.Allocate.class))
                .actual();
    }

    private static AllocateDecision.Refuse refused(AllocateDecision decision) {
        return assertThat(decision).asInstanceOf(InstanceOfAssertFactories.type(AllocateDecision.Refuse.class))
                .actual();
    }

    // ---------------------------------------------------------------- listing

    @Test
    void hygonListsEachDcuFourTimesAsFakeReplicasAndAscendEachChipVDeviceCountTimes() {
        RegisteredDevice dcu = RegisteredDevice.of(DCU_A, 0, 4, 65520, 100, "DCU-K100_AI", 0, "hami", true);
        assertThat(VendorAllocation.of(NodeVendor.HYGON, HamiCoreSettings.DEFAULTS).virtualDevices(List.of(dcu)))
                .extracting(VirtualDevice::id).containsExactly(DCU_A + "-fake-0", DCU_A + "-fake-1",
                        DCU_A + "-fake-2", DCU_A + "-fake-3");
        RegisteredDevice healthy = RegisteredDevice.of(NPU_0, 0, 4, 32768, 20, "Ascend910B4", 0, "", true);
        RegisteredDevice sick = RegisteredDevice.of(NPU_5, 5, 4, 32768, 20, "Ascend910B4", 0, "", false);
        List<VirtualDevice> listed = VendorAllocation.of(ASCEND, HamiCoreSettings.DEFAULTS)
                .virtualDevices(List.of(healthy, sick));
        assertThat(listed).extracting(VirtualDevice::id).containsExactly(NPU_0 + "-0", NPU_0 + "-1", NPU_0 + "-2",
                NPU_0 + "-3", NPU_5 + "-0", NPU_5 + "-1", NPU_5 + "-2", NPU_5 + "-3");
        assertThat(listed).extracting(VirtualDevice::healthy).containsExactly(true, true, true, true, false, false,
                false, false);
        assertThat(listed).extracting(VirtualDevice::gpuUuid).containsOnly(NPU_0, NPU_5);
    }

    // ---------------------------------------------------------------- Hygon

    @Test
    void hygonAnswersNothingAndErasesTheEntry() {
        PodView pod = pod(Map.of("hami.io/dcu-devices-to-allocate", ";" + DCU_B + ",DCU,4096,30:;"), "setup",
                "main");

        AllocateDecision.Allocate decision = allocated(hygon.decide(pod, List.of(DCU_B + "-fake-2"), dcus, "", ""));

        assertThat(decision.containerName()).isEqualTo("main");
        assertThat(decision.allocation().envs()).isEmpty();
        assertThat(decision.allocation().mounts()).isEmpty();
        assertThat(decision.remaining()).isEqualTo(";;");
        assertThat(decision.last()).isTrue();
    }

    @Test
    void hygonRefusesWithItsPluginsTexts() {
        assertThat(refused(hygon.decide(pod(Map.of(), "main"), List.of(DCU_A + "-fake-0"), dcus, "", "")).message())
                .isEqualTo("device request not found");
        PodView two = pod(Map.of("hami.io/dcu-devices-to-allocate", DCU_A + ",DCU,4096,30:" + DCU_B
                + ",DCU,4096,30:;"), "main");
        AllocateDecision.Refuse mismatch = refused(hygon.decide(two, List.of(DCU_A + "-fake-0"), dcus, "", ""));
        assertThat(mismatch.message()).isEqualTo("device number not matched");
        assertThat(mismatch.failPod()).isTrue();
        PodView unknown = pod(Map.of("hami.io/dcu-devices-to-allocate", "DCU-ZZZ999,DCU,4096,30:;"), "main");
        assertThat(refused(hygon.decide(unknown, List.of(DCU_A + "-fake-0"), dcus, "", "")).message())
                .isEqualTo("device serial number ZZZ999 not found in mapper");
        PodView malformed = pod(Map.of("hami.io/dcu-devices-to-allocate", "GPU-1,DCU,4096,30:;"), "main");
        assertThat(refused(hygon.decide(malformed, List.of(DCU_A + "-fake-0"), dcus, "", "")).message())
                .isEqualTo("invalid request device uuid GPU-1");
    }

    // ---------------------------------------------------------------- Ascend

    @Test
    void ascendTemplateModeGivesThePhysicalIdsAndTheTemplate() {
        PodView pod = pod(Map.of(ASCEND_KEY, NPU_5 + ",Ascend910B4,8192,0:;", RUNTIME_KEY,
                "[{\"UUID\":\"" + NPU_5 + "\",\"temp\":\"vir05_1c_8g\",\"memory\":8192}]"), "npu");

        AllocateDecision.Allocate decision = allocated(ascend.decide(pod, List.of(NPU_5 + "-2"), npus, "", ""));

        assertThat(decision.allocation().envs()).containsExactly(entry("ASCEND_VISIBLE_DEVICES", "5"),
                entry("ASCEND_VNPU_SPECS", "vir05_1c_8g"));
        assertThat(decision.allocation().mounts()).isEmpty();
        assertThat(decision.remaining()).isEqualTo(";");
    }

    @Test
    void ascendWholeChipsAreVisibleInEntryOrderWithoutATemplate() {
        PodView pod = pod(Map.of(ASCEND_KEY, NPU_5 + ",Ascend910B4,32768,0:" + NPU_0 + ",Ascend910B4,32768,0:;",
                RUNTIME_KEY, "[{\"UUID\":\"" + NPU_5 + "\",\"memory\":32768},{\"UUID\":\"" + NPU_0
                        + "\",\"memory\":32768}]"), "npu");

        AllocateDecision.Allocate decision = allocated(ascend.decide(pod, List.of(NPU_0 + "-0", NPU_5 + "-0"), npus,
                "", ""));

        assertThat(decision.allocation().envs()).containsExactly(entry("ASCEND_VISIBLE_DEVICES", "5,0"));
    }

    @Test
    void ascendHamiCoreModeGivesTheQuotaEnvironment() {
        PodView pod = pod(Map.of(ASCEND_KEY, NPU_0 + ",Ascend910B4,4096,40:;", RUNTIME_KEY,
                "[{\"UUID\":\"" + NPU_0 + "\",\"memory\":4096,\"core\":40}]", "huawei.com/vnpu-mode", "hami-core"),
                "npu");

        AllocateDecision.Allocate decision = allocated(ascend.decide(pod, List.of(NPU_0 + "-1"), npus, "", ""));

        assertThat(decision.allocation().envs()).containsExactly(entry("ASCEND_VISIBLE_DEVICES", "0"),
                entry("NPU_MEM_QUOTA", "4096"), entry("NPU_PRIORITY", "40"),
                entry("NPU_GLOBAL_SHM_PATH", "/hami-shared-region/0_global_registry"),
                entry("NPU_LOCAL_SHM_PATH", "/hami-vnpu-shmem/vnpu_local_shmem"));
        assertThat(decision.allocation().mounts()).as("host paths a simulated node does not have").isEmpty();
    }

    @Test
    void ascendRefusesWithItsPluginsTexts() {
        String entry = NPU_0 + ",Ascend910B4,8192,0:;";
        String runtime = "[{\"UUID\":\"" + NPU_0 + "\",\"temp\":\"vir05_1c_8g\"}]";
        AllocateDecision.Refuse noRuntime = refused(ascend.decide(pod(Map.of(ASCEND_KEY, entry), "npu"),
                List.of(NPU_0 + "-0"), npus, "", ""));
        assertThat(noRuntime.message()).isEqualTo("build runtimeInfo lookup: annotation huawei.com/Ascend910B4 not"
                + " set");
        assertThat(noRuntime.failPod()).isTrue();
        assertThat(refused(ascend.decide(pod(Map.of(RUNTIME_KEY, "{}"), "npu"), List.of(NPU_0 + "-0"), npus, "",
                "")).message()).isEqualTo("build runtimeInfo lookup: annotation huawei.com/Ascend910B4 value {}"
                        + " invalid: json: cannot unmarshal object into Go value of type []server.RuntimeInfo");
        assertThat(refused(ascend.decide(pod(Map.of(RUNTIME_KEY, runtime), "npu"), List.of(NPU_0 + "-0"), npus, "",
                "")).message()).isEqualTo("decode device annotations: device Ascend910B4 not found in pod"
                        + " annotations");
        assertThat(refused(ascend.decide(pod(Map.of(RUNTIME_KEY, runtime, ASCEND_KEY, ";"), "npu"),
                List.of(NPU_0 + "-0"), npus, "", "")).message())
                .isEqualTo("get next container devices: no pending device allocation found");
        assertThat(refused(ascend.decide(pod(Map.of(RUNTIME_KEY, runtime, ASCEND_KEY, entry), "npu"),
                List.of(NPU_0 + "-0", NPU_0 + "-1"), npus, "", "")).message())
                .isEqualTo("device number not matched: annotation has 1, request has 2");
        assertThat(refused(ascend.decide(pod(Map.of(RUNTIME_KEY, runtime, ASCEND_KEY,
                "FFFFFFFF-0-0-0-0,Ascend910B4,8192,0:;"), "npu"), List.of(NPU_0 + "-0"), npus, "", "")).message())
                .isEqualTo("build container allocate response: unknown uuid: FFFFFFFF-0-0-0-0");
    }

    /** A late call for a pod already allocated is refused without failing it, whatever the vendor checks first. */
    @Test
    void anAllocatedPodIsNotFailedByALateAscendCall() {
        PodView done = pod(Map.of(Annotations.POD_BIND_PHASE, Annotations.BIND_PHASE_SUCCESS, ASCEND_KEY, ";"),
                "npu");

        AllocateDecision.Refuse refuse = refused(ascend.decide(done, List.of(NPU_0 + "-0"), npus, "", ""));

        assertThat(refuse.message()).startsWith("build runtimeInfo lookup");
        assertThat(refuse.failPod()).isFalse();
    }

    // ---------------------------------------------------------------- completion across vendors

    @Test
    void theLastEntryOfOneVendorIsNotTheLastWhileAnotherVendorWaits() {
        Map<String, String> annotations = new LinkedHashMap<>();
        annotations.put(Annotations.POD_DEVICES_TO_ALLOCATE, ";GPU-1,NVIDIA,4096,25:;");
        annotations.put(ASCEND_KEY, NPU_0 + ",Ascend910B4,32768,0:;;");
        annotations.put(RUNTIME_KEY, "[{\"UUID\":\"" + NPU_0 + "\",\"memory\":32768}]");
        PodView both = pod(annotations, "npu", "cuda");

        AllocateDecision.Allocate first = allocated(ascend.decide(both, List.of(NPU_0 + "-0"), npus, "", ""));
        assertThat(first.remaining()).isEqualTo(";;");
        assertThat(first.last()).as("NVIDIA's entry is still to come").isFalse();

        annotations.put(ASCEND_KEY, first.remaining());
        AllocatePolicy nvidia = new AllocatePolicy(HamiCoreSettings.DEFAULTS, "worker-1");
        AllocateDecision.Allocate second = allocated(nvidia.decide(pod(annotations, "npu", "cuda"),
                List.of("GPU-1-0"), java.util.Set.of("GPU-1"), "libvgpu.so", "c"));
        assertThat(second.containerName()).isEqualTo("cuda");
        assertThat(second.last()).isTrue();
    }
}
