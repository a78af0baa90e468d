package io.tenantgateway.tools.lab;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tenantgateway.hami.ContainerDevice;
import io.tenantgateway.hami.HamiRelease;
import io.tenantgateway.hami.NodeVendor;
import io.tenantgateway.hami.RegisterCodec;
import io.tenantgateway.hami.RegisteredDevice;
import io.tenantgateway.tools.hamisim.AscendTemplates;
import io.tenantgateway.tools.lab.FirstFitPlacement.Fit;
import io.tenantgateway.tools.lab.FirstFitPlacement.Placement;
import io.tenantgateway.tools.lab.FirstFitPlacement.Refused;
import io.tenantgateway.tools.lab.FirstFitPlacement.Usage;
import io.tenantgateway.tools.lab.VendorFirstFitPlacement.DeviceRequest;
import io.tenantgateway.webhook.policy.AscendChip;
import io.tenantgateway.webhook.policy.DeviceConfig;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** HAMi v2.10's Fit for Hygon DCU and Ascend, first fit in register order (VENDOR-PLUGINS.md §1.7, §5). */
@Timeout(60)
class VendorFirstFitPlacementTest {
    private static final NodeVendor B4 = NodeVendor.ascend("Ascend910B4");
    private static final AscendChip B4_CHIP = AscendTemplates.chip(DeviceConfig.defaults().vnpus(), "Ascend910B4")
            .orElseThrow();

    /** Two DCUs as DCU-DP HEAD registers them (legacy text, 9 fields, 4 slices each), read as HAMi v2.10 reads them. */
    private static final List<RegisteredDevice> DCUS = decode(NodeVendor.HYGON,
            "DCU-K100A,4,65520,100,DCU-K100,0,true,0,hami:DCU-K100B,4,65520,100,DCU-K100,0,true,1,hami:");

    /** Two 910B4 chips as the Ascend plugin registers them (JSON, VDeviceCount 4, aiCore 20). */
    private static final List<RegisteredDevice> NPUS = decode(B4, "["
            + "{\"id\":\"1A2B3C4D-00000000-00000000-00000000-00000001\",\"count\":4,\"devmem\":32768,\"devcore\":20,"
            + "\"type\":\"Ascend910B4\",\"health\":true,\"custominfo\":{\"NetworkID\":0},\"devicepairscore\":{}},"
            + "{\"id\":\"1A2B3C4D-00000000-00000000-00000000-00000002\",\"index\":1,\"count\":4,\"devmem\":32768,"
            + "\"devcore\":20,\"type\":\"Ascend910B4\",\"health\":true,\"custominfo\":{\"NetworkID\":0},"
            + "\"devicepairscore\":{}}]");
    private static final String NPU_0 = "1A2B3C4D-00000000-00000000-00000000-00000001";
    private static final String NPU_1 = "1A2B3C4D-00000000-00000000-00000000-00000002";

    private static List<RegisteredDevice> decode(NodeVendor vendor, String value) {
        RegisterCodec.Result result = RegisterCodec.decode(vendor.registerKey(), value, HamiRelease.V2_10, "worker");
        assertThat(result.error()).isNull();
        return result.devices();
    }

    private static Map<String, String> limits(String... keyValues) {
        Map<String, String> limits = new LinkedHashMap<>();
        for (int i = 0; i < keyValues.length; i += 2) {
            limits.put(keyValues[i], keyValues[i + 1]);
        }
        return limits;
    }

    private static List<Optional<DeviceRequest>> dcu(String count, String memory, String cores) {
        Map<String, String> limits = limits("hygon.com/dcunum", count);
        if (memory != null) {
            limits.put("hygon.com/dcumem", memory);
        }
        if (cores != null) {
            limits.put("hygon.com/dcucores", cores);
        }
        return List.of(DeviceRequest.hygon("dcu", limits, 1));
    }

    private static List<Optional<DeviceRequest>> npu(String count, String memory, String cores) {
        Map<String, String> limits = limits("huawei.com/Ascend910B4", count);
        if (memory != null) {
            limits.put("huawei.com/Ascend910B4-memory", memory);
        }
        if (cores != null) {
            limits.put("huawei.com/Ascend910B4-core", cores);
        }
        return List.of(DeviceRequest.ascend("npu", limits, B4_CHIP));
    }

    /** Places pods one after another, each seeing what the earlier ones hold, as the scheduler does. */
    private static List<Placement> placeAll(NodeVendor vendor, List<RegisteredDevice> devices, boolean hamiCore,
            List<List<Optional<DeviceRequest>>> pods) {
        Map<String, Usage> usage = new HashMap<>();
        List<Placement> results = new ArrayList<>();
        for (List<Optional<DeviceRequest>> pod : pods) {
            Placement placement = VendorFirstFitPlacement.place(vendor, devices, usage, pod, hamiCore);
            results.add(placement);
            if (placement instanceof Fit fit) {
                fit.devices().forEach(entry -> entry.forEach(d -> usage.merge(d.uuid(),
                        Usage.NONE.plus(d.memoryMiB(), d.cores()), (x, y) -> new Usage(x.memoryMiB() + y.memoryMiB(),
                                x.cores() + y.cores(), x.pods() + y.pods()))));
            }
        }
        return results;
    }

    private static List<List<Optional<DeviceRequest>>> times(int n, List<Optional<DeviceRequest>> pod) {
        return java.util.Collections.nCopies(n, pod);
    }

    private static List<List<ContainerDevice>> fit(Placement placement) {
        assertThat(placement).isInstanceOf(Fit.class);
        return ((Fit) placement).devices();
    }

    private static String refusal(Placement placement) {
        assertThat(placement).isInstanceOf(Refused.class);
        return ((Refused) placement).reason();
    }

    // --- Hygon DCU -------------------------------------------------------------------------------------------

    @Test
    void hygonRequestsReadTheLimitsWithHamisDefaults() {
        assertThat(DeviceRequest.hygon("c", limits("hygon.com/dcunum", "2"), 1))
                .contains(new DeviceRequest("c", 2, 0, 100));
        assertThat(DeviceRequest.hygon("c", limits("hygon.com/dcunum", "1", "hygon.com/dcumem", "4096",
                "hygon.com/dcucores", "30"), 1)).contains(new DeviceRequest("c", 1, 4096, 30));
        assertThat(DeviceRequest.hygon("c", limits("hygon.com/dcunum", "1", "hygon.com/dcumem", "4"), 1024))
                .as("memoryFactor").contains(new DeviceRequest("c", 1, 4096, 100));
        assertThat(DeviceRequest.hygon("c", limits("nvidia.com/gpu", "1"), 1)).isEmpty();
        assertThat(DeviceRequest.hygon("c", limits("hygon.com/dcunum", "0"), 1)).as("count 0").isEmpty();
        assertThat(DeviceRequest.hygon("c", limits("hygon.com/dcunum", "1", "hygon.com/dcumem", "-1"), 1))
                .as("negative memory").isEmpty();
        assertThatThrownBy(() -> DeviceRequest.hygon("c", limits("hygon.com/dcunum", "one"), 1))
                .hasMessage("container c: hygon.com/dcunum: one (expected: an integer)");
    }

    @Test
    void hygonASliceTakesTheFirstDeviceWithItsMemoryAndCores() {
        assertThat(fit(VendorFirstFitPlacement.place(NodeVendor.HYGON, DCUS, Map.of(), dcu("1", "4096", "30"),
                false))).containsExactly(List.of(new ContainerDevice("DCU-K100A", "DCU", 4096, 30)));
    }

    @Test
    void hygonNoMemoryMeansTheWholeDeviceAndNoCoresMeansAllOfThem() {
        List<Placement> results = placeAll(NodeVendor.HYGON, DCUS, false, times(3, dcu("1", null, null)));

        assertThat(fit(results.get(0))).containsExactly(List.of(new ContainerDevice("DCU-K100A", "DCU", 65520,
                100)));
        assertThat(fit(results.get(1))).containsExactly(List.of(new ContainerDevice("DCU-K100B", "DCU", 65520,
                100)));
        assertThat(refusal(results.get(2))).isEqualTo("no Hygon device fits container dcu (1 × whole device, 100 "
                + "cores): #0 DCU-K100A memory: 0 of 65520 MiB free, 65520 requested; #1 DCU-K100B memory: 0 of "
                + "65520 MiB free, 65520 requested");
    }

    @Test
    void hygonMemoryRunsOutBeforeTheNextDeviceIsUsed() {
        List<Placement> results = placeAll(NodeVendor.HYGON, DCUS, false, times(3, dcu("1", "32768", "10")));

        assertThat(fit(results.get(0)).get(0).get(0).uuid()).isEqualTo("DCU-K100A");
        // 65520 − 32768 = 32752 MiB left on the first DCU: not enough for another 32768.
        assertThat(fit(results.get(1)).get(0).get(0).uuid()).isEqualTo("DCU-K100B");
        assertThat(refusal(results.get(2))).contains("#0 DCU-K100A memory: 32752 of 65520 MiB free, 32768 "
                + "requested");
    }

    @Test
    void hygonCoresRunOutAndAreClampedTo100() {
        List<Placement> results = placeAll(NodeVendor.HYGON, DCUS.subList(0, 1), false,
                List.of(dcu("1", "1024", "60"), dcu("1", "1024", "60")));
        assertThat(refusal(results.get(1))).isEqualTo("no Hygon device fits container dcu (1 × 1024 MiB, 60 "
                + "cores): #0 DCU-K100A cores: 40 of 100 free, 60 requested");

        assertThat(fit(VendorFirstFitPlacement.place(NodeVendor.HYGON, DCUS, Map.of(), dcu("1", "1024", "150"),
                false)).get(0).get(0).cores()).isEqualTo(100);
    }

    @Test
    void hygonAllCoresAreExclusiveAndCorelessRequestsDoNotFitAFullDevice() {
        Map<String, Usage> oneSmall = Map.of("DCU-K100A", Usage.NONE.plus(1024, 0));
        assertThat(refusal(VendorFirstFitPlacement.place(NodeVendor.HYGON, DCUS.subList(0, 1), oneSmall,
                dcu("1", "1024", null), false))).endsWith("#0 DCU-K100A exclusive use (100 of 100 cores) "
                + "requested, shared by 1");

        Map<String, Usage> full = Map.of("DCU-K100A", Usage.NONE.plus(1024, 100));
        assertThat(refusal(VendorFirstFitPlacement.place(NodeVendor.HYGON, DCUS.subList(0, 1), full,
                dcu("1", "1024", "0"), false))).endsWith("#0 DCU-K100A cores fully allocated");
    }

    @Test
    void hygonFourSlicesPerDevice() {
        List<Placement> results = placeAll(NodeVendor.HYGON, DCUS.subList(0, 1), false,
                times(5, dcu("1", "1024", "10")));

        assertThat(results.subList(0, 4)).allMatch(Fit.class::isInstance);
        assertThat(refusal(results.get(4))).endsWith("#0 DCU-K100A shared by 4 of 4 (split count)");
    }

    @Test
    void hygonCountsAreTakenFromDistinctDevicesAndCheckedAgainstTheRegister() {
        assertThat(fit(VendorFirstFitPlacement.place(NodeVendor.HYGON, DCUS, Map.of(), dcu("2", "1024", "10"),
                false)).get(0)).extracting(ContainerDevice::uuid).containsExactly("DCU-K100A", "DCU-K100B");
        assertThat(refusal(VendorFirstFitPlacement.place(NodeVendor.HYGON, DCUS, Map.of(), dcu("3", "1024",
                "10"), false))).isEqualTo("no Hygon device fits container dcu (3 × 1024 MiB, 10 cores): 2 of "
                + "type DCU registered, 3 requested");
        assertThat(refusal(VendorFirstFitPlacement.place(NodeVendor.HYGON, List.of(), Map.of(), dcu("1", "1024",
                "10"), false))).endsWith("0 of type DCU registered, 1 requested");
    }

    @Test
    void hygonUnhealthyDevicesAreSkipped() {
        List<RegisteredDevice> devices = decode(NodeVendor.HYGON,
                "DCU-SICK,4,65520,100,DCU-K100,0,false,0,hami:DCU-K100B,4,65520,100,DCU-K100,0,true,1,hami:");

        assertThat(fit(VendorFirstFitPlacement.place(NodeVendor.HYGON, devices, Map.of(), dcu("1", "1024",
                "10"), false)).get(0).get(0).uuid()).isEqualTo("DCU-K100B");
    }

    // --- Ascend ------------------------------------------------------------------------------------------------

    @Test
    void ascendRequestsReadTheChipsResourcesWithHamisDefaults() {
        assertThat(DeviceRequest.ascend("c", limits("huawei.com/Ascend910B4", "1",
                "huawei.com/Ascend910B4-memory", "8192"), B4_CHIP)).contains(new DeviceRequest("c", 1, 8192, 0));
        assertThat(DeviceRequest.ascend("c", limits("huawei.com/Ascend910B4", "1",
                "huawei.com/Ascend910B4-memory", "4096", "huawei.com/Ascend910B4-core", "40"), B4_CHIP))
                .contains(new DeviceRequest("c", 1, 4096, 40));
        assertThat(DeviceRequest.ascend("c", limits("huawei.com/Ascend910B3", "1"), B4_CHIP)).isEmpty();
    }

    @Test
    void ascendTemplateSlicesFillTheCountSlotsOfAChip() {
        List<Placement> results = placeAll(B4, NPUS.subList(0, 1), false, times(5, npu("1", "8192", null)));

        assertThat(results.subList(0, 4)).allSatisfy(r -> assertThat(fit(r))
                .containsExactly(List.of(new ContainerDevice(NPU_0, "Ascend910B4", 8192, 0))));
        // four 8192 slices fill 32768 too; the split count is checked first, as in HAMi
        assertThat(refusal(results.get(4))).isEqualTo("no Ascend910B4 device fits container npu (1 × 8192 MiB, "
                + "0 cores): #0 1A2B3C4D-000 shared by 4 of 4 (split count)");
    }

    @Test
    void ascendAWholeChipDoesNotFitNextToASlice() {
        List<Placement> results = placeAll(B4, NPUS, false, List.of(npu("1", "16384", null),
                npu("1", "32768", null), npu("1", "32768", null)));

        assertThat(fit(results.get(0)).get(0).get(0).uuid()).isEqualTo(NPU_0);
        assertThat(fit(results.get(1)).get(0).get(0)).isEqualTo(new ContainerDevice(NPU_1, "Ascend910B4", 32768,
                0));
        assertThat(refusal(results.get(2))).isEqualTo("no Ascend910B4 device fits container npu (1 × 32768 MiB, "
                + "0 cores): #0 1A2B3C4D-000 memory: 16384 of 32768 MiB free, 32768 requested; #1 1A2B3C4D-000 "
                + "memory: 0 of 32768 MiB free, 32768 requested");
    }

    @Test
    void ascendCoresCountAgainstTheAiCoresInTemplateModeAndAgainst100InHamiCore() {
        assertThat(refusal(VendorFirstFitPlacement.place(B4, NPUS.subList(0, 1), Map.of(), npu("1", "4096",
                "40"), false))).endsWith("cores: 20 of 20 free, 40 requested");

        List<Placement> hamiCore = placeAll(B4, NPUS.subList(0, 1), true, List.of(npu("1", "4096", "40"),
                npu("1", "4096", "40"), npu("1", "4096", "40")));
        assertThat(fit(hamiCore.get(0))).containsExactly(List.of(new ContainerDevice(NPU_0, "Ascend910B4", 4096,
                40)));
        assertThat(hamiCore.get(1)).isInstanceOf(Fit.class);
        assertThat(refusal(hamiCore.get(2))).endsWith("cores: 20 of 100 free, 40 requested");
    }

    @Test
    void ascendEveryContainerGetsItsEntryAndSeesTheEarlierOnes() {
        Map<String, String> slice = limits("huawei.com/Ascend910B4", "1", "huawei.com/Ascend910B4-memory",
                "16384");
        List<Optional<DeviceRequest>> pod = List.of(DeviceRequest.ascend("init", slice, B4_CHIP),
                Optional.empty(), DeviceRequest.ascend("main", slice, B4_CHIP),
                DeviceRequest.ascend("side", slice, B4_CHIP));

        assertThat(fit(VendorFirstFitPlacement.place(B4, NPUS, Map.of(), pod, false))).containsExactly(
                List.of(new ContainerDevice(NPU_0, "Ascend910B4", 16384, 0)), List.of(),
                List.of(new ContainerDevice(NPU_0, "Ascend910B4", 16384, 0)),
                List.of(new ContainerDevice(NPU_1, "Ascend910B4", 16384, 0)));
    }

    @Test
    void ascendOnlyDevicesOfTheChipsTypeCount() {
        List<RegisteredDevice> devices = decode(B4, "[{\"id\":\"OTHER\",\"count\":4,\"devmem\":65536,"
                + "\"devcore\":20,\"type\":\"Ascend910B3\",\"health\":true}]");

        assertThat(refusal(VendorFirstFitPlacement.place(B4, devices, Map.of(), npu("1", "8192", null), false)))
                .endsWith("0 of type Ascend910B4 registered, 1 requested");
    }
}
