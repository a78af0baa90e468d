package io.tenantgateway.hami;

import static org.assertj.core.api.Assertions.assertThat;

import io.tenantgateway.hami.RegisterCodec.Result;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The devices HAMi's scheduler derives from node capacity, vendor by vendor, with the values of each vendor's
 * {@code GetNodeDevices}: id {@code <node>-<word>-<i>}, type and devicevendor the common word, count, devmem, devcore,
 * numa and custominfo.
 */
class CapacityDevicesTest {
    private static final String NODE = "test";

    private static List<RegisteredDevice> devices(Map<String, String> capacity, HamiRelease release, String key) {
        Result result = RegisterCodec.fromCapacity(capacity, release, NODE).get(key);
        assertThat(result).as("a result for " + key).isNotNull();
        assertThat(result.error()).as("error of " + key).isNull();
        return result.devices();
    }

    private static RegisteredDevice device(String id, int index, int count, int devmem, int devcore, String type,
                                           int numa) {
        return new RegisteredDevice(id, index, count, devmem, devcore, type, numa, "", true, type, Map.of());
    }

    @ParameterizedTest
    @EnumSource(HamiRelease.class)
    void cambriconIsOneDevicePerHundredCoreUnitsAPartialOneCounting(HamiRelease release) {
        assertThat(devices(Map.of("cambricon.com/mlu.smlu.vcore", "1", "cambricon.com/mlu.smlu.vmemory", "1"),
                release, "cambricon.com/mlu.smlu.vcore"))
                .containsExactly(device("test-cambricon-mlu-0", 0, 100, 25600, 100, "MLU", 0));
        assertThat(devices(Map.of("cambricon.com/mlu.smlu.vcore", "150", "cambricon.com/mlu.smlu.vmemory", "96"),
                release, "cambricon.com/mlu.smlu.vcore")).as("96 × 256 × 100 ÷ 150 = 16384, two devices")
                .containsExactly(device("test-cambricon-mlu-0", 0, 100, 16384, 100, "MLU", 0),
                        device("test-cambricon-mlu-1", 1, 100, 16384, 100, "MLU", 0));
    }

    @ParameterizedTest
    @EnumSource(HamiRelease.class)
    void mthreadsIsOneDevicePerSixteenCoreUnits(HamiRelease release) {
        assertThat(devices(Map.of("mthreads.com/sgpu-core", "1", "mthreads.com/sgpu-memory", "1"), release,
                "mthreads.com/sgpu-core")).containsExactly(device("test-mthreads-0", 0, 100, 8192, 16, "Mthreads", 0));
        assertThat(devices(Map.of("mthreads.com/sgpu-core", "32", "mthreads.com/sgpu-memory", "64"), release,
                "mthreads.com/sgpu-core")).extracting(RegisteredDevice::devmem)
                .as("64 × 512 × 16 ÷ 32").containsExactly(16384, 16384);
        assertThat(RegisterCodec.fromCapacity(Map.of("mthreads.com/sgpu-core", "0"), release, NODE)
                .get("mthreads.com/sgpu-core").error()).isEqualTo("device not found mthreads.com/sgpu-core");
    }

    @ParameterizedTest
    @EnumSource(HamiRelease.class)
    void metaxGpuIsOneWholeDevicePerCount(HamiRelease release) {
        assertThat(devices(Map.of("metax-tech.com/gpu", "1"), release, "metax-tech.com/gpu"))
                .containsExactly(device("test-metax-0", 0, 1, 65536, 100, "Metax-GPU", 0));
    }

    @ParameterizedTest
    @EnumSource(HamiRelease.class)
    void kunlunPutsTheUpperHalfOnNumaOne(HamiRelease release) {
        assertThat(devices(Map.of("kunlunxin.com/xpu", "4"), release, "kunlunxin.com/xpu")).containsExactly(
                device("test-kunlun-0", 0, 100, 98304, 100, "kunlun", 0),
                device("test-kunlun-1", 1, 100, 98304, 100, "kunlun", 0),
                device("test-kunlun-2", 2, 100, 98304, 100, "kunlun", 1),
                device("test-kunlun-3", 3, 100, 98304, 100, "kunlun", 1));
        assertThat(devices(Map.of("kunlunxin.com/xpu", "3"), release, "kunlunxin.com/xpu"))
                .extracting(RegisteredDevice::numa).as("from index 3 ÷ 2 = 1 on").containsExactly(0, 1, 1);
        assertThat(RegisterCodec.fromCapacity(Map.of("kunlunxin.com/xpu", "0"), release, NODE)
                .get("kunlunxin.com/xpu").error()).isEqualTo("device not found kunlunxin.com/xpu");
    }

    @ParameterizedTest
    @EnumSource(HamiRelease.class)
    void enflameGcuIsOneDevicePerCount(HamiRelease release) {
        assertThat(devices(Map.of("enflame.com/gcu", "2"), release, "enflame.com/gcu")).containsExactly(
                device("test-GCU-0", 0, 1, 100, 100, "GCU", 0), device("test-GCU-1", 1, 1, 100, 100, "GCU", 0));
    }

    @Test
    void enflameSharedDerivesFromCapacityInV29Only() {
        assertThat(devices(Map.of("enflame.com/gcu-count", "1", "enflame.com/shared-gcu", "4"), HamiRelease.V2_9,
                "enflame.com/gcu-count")).containsExactly(device("test-enflame-0", 0, 100, 100, 100, "Enflame", 0));
        assertThat(RegisterCodec.fromCapacity(Map.of("enflame.com/gcu-count", "1"), HamiRelease.V2_10, NODE))
                .as("v2.10 reads enflame.com/gcu-drs-capacity instead").isEmpty();
    }

    @ParameterizedTest
    @EnumSource(HamiRelease.class)
    void awsNeuronCountIsCoresPerDeviceAndDevcoreTheirMask(HamiRelease release) {
        Map<String, Result> derived = RegisterCodec.fromCapacity(Map.of("aws.amazon.com/neuron", "2",
                        "aws.amazon.com/neuroncore", "4"), Map.of(CapacityVendor.INSTANCE_TYPE_LABEL, "inf2.xlarge"),
                release, NODE);
        Map<String, Object> custom = Map.of("AWSNodeType", "inf2.xlarge");
        assertThat(derived.get("aws.amazon.com/neuron").devices()).containsExactly(
                new RegisteredDevice("test-AWSNeuron-0", 0, 2, 0, 3, "AWSNeuron", 0, "", true, "AWSNeuron", custom),
                new RegisteredDevice("test-AWSNeuron-1", 1, 2, 0, 3, "AWSNeuron", 0, "", true, "AWSNeuron", custom));
        assertThat(devices(Map.of("aws.amazon.com/neuron", "1", "aws.amazon.com/neuroncore", "4"), release,
                "aws.amazon.com/neuron")).singleElement().satisfies(d -> {
                    assertThat(d.count()).isEqualTo(4);
                    assertThat(d.devcore()).as("four cores: mask 0b1111").isEqualTo(15);
                    assertThat(d.custominfo()).as("no instance-type label").isEqualTo(Map.of("AWSNodeType", ""));
                });
        assertThat(RegisterCodec.fromCapacity(Map.of("aws.amazon.com/neuron", "0"), release, NODE)
                .get("aws.amazon.com/neuron").error()).isEqualTo("device not found aws.amazon.com/neuron");
    }

    @Test
    void amdDerivesFromCapacityInV29Only() {
        assertThat(devices(Map.of("amd.com/gpu", "1"), HamiRelease.V2_9, "amd.com/gpu"))
                .containsExactly(device("test-AMDGPU-0", 0, 1, 192000, 100, "AMDGPU", 0));
        assertThat(RegisterCodec.fromCapacity(Map.of("amd.com/gpu", "1"), HamiRelease.V2_10, NODE))
                .as("v2.10 reads hami.io/node-amd-register instead").isEmpty();
    }

    @Test
    void everyRowsTypeIsItsDevicevendor() {
        for (CapacityVendor vendor : CapacityVendor.TABLE) {
            HamiRelease release = vendor.releases().iterator().next();
            Map<String, String> capacity = new java.util.HashMap<>();
            capacity.put(vendor.countResource(), "16");
            vendor.otherResources().forEach(r -> capacity.put(r, "16"));
            List<RegisteredDevice> derived = devices(capacity, release, vendor.countResource());
            assertThat(derived).as(vendor.vendor()).isNotEmpty().allSatisfy(d -> {
                assertThat(d.devicevendor()).isEqualTo(vendor.type());
                assertThat(d.type()).isEqualTo(vendor.type());
                assertThat(d.id()).startsWith(NODE + "-" + vendor.idWord() + "-");
            });
        }
    }
}
