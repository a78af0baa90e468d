package io.tenantgateway.hami;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tenantgateway.hami.RegisterCodec.Result;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RegisterCodecTest {
    private static final String NVIDIA = "hami.io/node-nvidia-register";
    private static final String HYGON = "hami.io/node-dcu-register";
    private static final String ASCEND = "hami.io/node-register-Ascend910B4";
    private static final String METAX = "metax-tech.com/node-gpu-devices";
    private static final String DRS = "enflame.com/gcu-drs-capacity";
    private static final String HYGON_EXAMPLE =
            "DCU-a,2,32752,100,DCU-K100,0,true,0,hami-core:DCU-b,2,32752,100,DCU-K100,1,true,1,hami-core:";
    private static final String ASCEND_EXAMPLE = "[{\"id\":\"Ascend910B4-9f1e\",\"index\":5,\"count\":4,\"devmem\":32768,"
            + "\"devcore\":20,\"type\":\"Ascend910B4\",\"health\":true,\"custominfo\":{\"NetworkID\":1}}]";

    private static Result decode(String key, String value, HamiRelease release) {
        return RegisterCodec.decode(key, value, release, "node-a");
    }

    /** {@code d} with the common word the scheduler adds as devicevendor. */
    static RegisteredDevice vendor(RegisteredDevice d, String commonWord) {
        return new RegisteredDevice(d.id(), d.index(), d.count(), d.devmem(), d.devcore(), d.type(), d.numa(),
                d.mode(), d.health(), commonWord, d.custominfo());
    }

    private static List<RegisteredDevice> devices(String key, String value, HamiRelease release) {
        Result result = decode(key, value, release);
        assertThat(result.error()).as("error").isNull();
        return result.devices();
    }

    @ParameterizedTest
    @CsvSource({
        "hami.io/node-nvidia-register, NVIDIA, JSON",
        "hami.io/node-dcu-register, Hygon, LEGACY_TEXT",
        "hami.io/node-MR-V100-register, Iluvatar, LEGACY_TEXT",
        "hami.io/node-register-Ascend910B4, Ascend, JSON",
        "hami.io/node-register-xpu, Kunlun vXPU, JSON",
        "hami.io/node-amd-register, AMD, JSON",
        "hami.io/node-va-register, Vastai, JSON",
        "hami.io/node-biren-register, Biren, JSON",
        "metax-tech.com/node-gpu-devices, Metax sGPU, METAX_SGPU",
        "enflame.com/gcu-drs-capacity, Enflame DRS, ENFLAME_DRS",
    })
    void theTableDecidesTheVendorAndFormatByKey(String key, String vendor, RegisterFormat format) {
        RegisterVendor row = RegisterVendor.forKey(key).orElseThrow();
        assertThat(row.vendor()).isEqualTo(vendor);
        assertThat(row.format()).isEqualTo(format);
    }

    @Test
    void vastaiAndBirenDevicesReadWithWholeCoresAsTheSchedulerSetsThem() {
        String value = "[{\"id\":\"VA-1\",\"count\":4,\"devmem\":16384,\"devcore\":30,\"type\":\"VA\","
                + "\"health\":true}]";
        assertThat(decode("hami.io/node-va-register", value, HamiRelease.V2_10).devices().get(0).devcore())
                .isEqualTo(100);
        assertThat(decode("hami.io/node-biren-register", value, HamiRelease.V2_10).devices().get(0).devcore())
                .isEqualTo(100);
        assertThat(decode("hami.io/node-register-xpu", value, HamiRelease.V2_10).devices().get(0).devcore())
                .as("others keep theirs").isEqualTo(30);
    }

    @Test
    void otherKeysAreNotRegisterKeys() {
        assertThat(RegisterVendor.forKey("hami.io/node-handshake")).isEmpty();
        assertThat(RegisterVendor.forKey("hami.io/node--register")).isEmpty();
        assertThatThrownBy(() -> RegisterCodec.decode("hami.io/mutex.lock", "x", HamiRelease.V2_10, "n"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("hami.io/mutex.lock (expected: ");
    }

    @Test
    void jsonRoundTripsByteForByteWithCustomInfo() {
        List<RegisteredDevice> read = devices(ASCEND, ASCEND_EXAMPLE, HamiRelease.V2_10);
        assertThat(read).as("the scheduler adds the chip's common word as devicevendor")
                .containsExactly(new RegisteredDevice("Ascend910B4-9f1e", 5, 4, 32768, 20, "Ascend910B4", 0, "",
                        true, "Ascend910B4", Map.of("NetworkID", 1L)));
        assertThat(RegisterCodec.encodeJson(read, HamiRelease.V2_10)).isEqualTo(ASCEND_EXAMPLE.replace(
                "\"health\":true,", "\"health\":true,\"devicevendor\":\"Ascend910B4\","));
        assertThat(RegisterCodec.encode(ASCEND, ASCEND_EXAMPLE, HamiRelease.V2_10)).isEqualTo(ASCEND_EXAMPLE);
    }

    @Test
    void v29WritersAppendDevicePairScoreAndReadersIgnoreItAndMatchKeysCaseInsensitively() {
        String v29 = RegisterCodec.encode(NVIDIA, "[{\"ID\":\"GPU-a\",\"Count\":10,\"health\":true}]", HamiRelease.V2_9);
        assertThat(v29).isEqualTo("[{\"id\":\"GPU-a\",\"count\":10,\"health\":true,\"devicepairscore\":{}}]");
        assertThat(devices(NVIDIA, v29, HamiRelease.V2_10))
                .containsExactly(vendor(RegisteredDevice.of("GPU-a", 0, 10, 0, 0, "", 0, "", true), "NVIDIA"));
    }

    @Test
    void customInfoKeysAreWrittenSortedAsGoMapsAre() {
        String in = "[{\"id\":\"x\",\"devicevendor\":\"V\",\"custominfo\":{\"b\":\"<\",\"a\":[1.5,true,null]}}]";
        assertThat(RegisterCodec.encode(NVIDIA, in, HamiRelease.V2_10))
                .isEqualTo("[{\"id\":\"x\",\"devicevendor\":\"V\",\"custominfo\":{\"a\":[1.5,true,null],\"b\":\"\\u003c\"}}]");
    }

    @Test
    void jsonVendorsRejectLegacyTextWithGosMessages() {
        assertThat(decode(NVIDIA, HYGON_EXAMPLE, HamiRelease.V2_10).error())
                .isEqualTo("invalid character 'D' looking for beginning of value");
        assertThat(decode(ASCEND, "", HamiRelease.V2_9).error()).isEqualTo("unexpected end of JSON input");
        assertThat(decode(ASCEND, "{}", HamiRelease.V2_10).error())
                .isEqualTo("json: cannot unmarshal object into Go value of type []*device.DeviceInfo");
        assertThat(decode(NVIDIA, "[{\"id\":\"a\",\"count\":\"10\"}]", HamiRelease.V2_10).error())
                .isEqualTo("json: cannot unmarshal string into Go struct field DeviceInfo.count of type int32");
        assertThat(decode(NVIDIA, "[{\"index\":-1}]", HamiRelease.V2_10).error())
                .isEqualTo("json: cannot unmarshal number -1 into Go struct field DeviceInfo.index of type uint");
        assertThat(decode(NVIDIA, "[null]", HamiRelease.V2_10).error()).contains("crash");
    }

    @Test
    void missingAndEmptyMessagesFollowTheTable() {
        assertThat(decode(ASCEND, null, HamiRelease.V2_10).error()).isEqualTo("annos not found " + ASCEND);
        assertThat(decode(DRS, null, HamiRelease.V2_10).error()).isEqualTo("annotation not found " + DRS);
        assertThat(decode(ASCEND, "[]", HamiRelease.V2_10).error()).isEqualTo("no device found on node");
        assertThat(decode("hami.io/node-register-xpu", "null", HamiRelease.V2_10).error())
                .isEqualTo("no device found on node");
        assertThat(decode(HYGON, ":", HamiRelease.V2_10).error()).isEqualTo("no gpu found on node");
        assertThat(decode(METAX, "[]", HamiRelease.V2_10).error()).isEqualTo("no sdevice found on node");
    }

    @Test
    void legacyTextRoundTripsAndAcceptsTheSevenFieldForm() {
        List<RegisteredDevice> read = devices(HYGON, HYGON_EXAMPLE, HamiRelease.V2_10);
        assertThat(read).containsExactly(
                vendor(RegisteredDevice.of("DCU-a", 0, 2, 32752, 100, "DCU-K100", 0, "hami-core", true), "DCU"),
                vendor(RegisteredDevice.of("DCU-b", 1, 2, 32752, 100, "DCU-K100", 1, "hami-core", true), "DCU"));
        assertThat(RegisterCodec.encodeLegacy(read)).isEqualTo(HYGON_EXAMPLE);
        assertThat(devices(HYGON, HYGON_EXAMPLE, HamiRelease.V2_9)).isEqualTo(read);
        assertThat(RegisterCodec.encode(HYGON, "[{\"id\":\"DCU-a\",\"count\":2,\"devmem\":32752,\"devcore\":100,"
                + "\"type\":\"DCU-K100\",\"mode\":\"hami-core\",\"health\":true}]", HamiRelease.V2_9))
                .isEqualTo("DCU-a,2,32752,100,DCU-K100,0,true,0,hami-core:");
        assertThat(devices("hami.io/node-MR-V100-register", "g,1,2,3,MR-V100,0,false:", HamiRelease.V2_10))
                .containsExactly(vendor(RegisteredDevice.of("g", 0, 1, 2, 3, "MR-V100", 0, "hami-core", false),
                        "MR-V100"));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "DCU-a,2,32752,100,DCU-K100,0,true                  | node annotation missing device separator",
        "DCU-a:                                            | 'malformed node annotation segment: \"DCU-a\"'",
        "a,1,2:                                            | unexpected field count 3 in node annotation",
        "a,x,2,3,T,0,true:                                 | 'invalid count field: strconv.ParseInt: parsing \"x\": invalid syntax'",
        "a,1,3000000000,3,T,0,true:                        | 'invalid memory field: strconv.ParseInt: parsing \"3000000000\": value out of range'",
        "a,1,2,,T,0,true:                                  | 'invalid core field: strconv.ParseInt: parsing \"\": invalid syntax'",
        "a,1,2,3,T,x,yes:                                  | 'invalid health field: strconv.ParseBool: parsing \"yes\": invalid syntax'",
        "a,1,2,3,T,x,true:                                 | 'invalid numa field: strconv.Atoi: parsing \"x\": invalid syntax'",
        "a,1,2,3,T,0,true,1.5,hami-core:                   | 'invalid index field: strconv.Atoi: parsing \"1.5\": invalid syntax'",
        "a,1,2,3,T,0,true,-2,hami-core:                    | index field must not be negative: -2",
        "'[{\"id\":\"a\"}]'                                | 'malformed node annotation segment: \"[{\\\"id\\\"\"'",
    })
    void v210LegacyDecoderErrors(String value, String error) {
        assertThat(decode(HYGON, value.strip(), HamiRelease.V2_10).error()).isEqualTo(error.strip());
    }

    @Test
    void v29LegacyDecoderHasOneErrorSkipsSegmentsWithoutACommaAndReadsBadNumbersAsGoDoes() {
        String failed = "node annotations not decode successfully";
        assertThat(decode(HYGON, "a,1,2,3,T,0,true", HamiRelease.V2_9).error()).isEqualTo(failed);
        assertThat(decode(HYGON, "a,1,2:", HamiRelease.V2_9).error()).isEqualTo(failed);
        assertThat(decode(HYGON, "[{\"id\":\"a\",\"count\":1}]", HamiRelease.V2_9).error()).isEqualTo(failed);
        assertThat(devices(HYGON, "junk:a,x,3000000000,3,T,n,yes,-2,mig:", HamiRelease.V2_9))
                .containsExactly(vendor(RegisteredDevice.of("a", -2, 0, Integer.MAX_VALUE, 3, "T", 0, "mig", false),
                        "DCU"));
    }

    @Test
    void metaxSgpuRoundTripsAndReadsAsTheSchedulerDoes() {
        String value = "[{\"uuid\":\"m-0\",\"bdf\":\"0000:1b:00.0\",\"model\":\"MXC500\",\"totalDevCount\":16,"
                + "\"totalCompute\":100,\"totalVRam\":65536,\"availableDevCount\":16,\"availableCompute\":100,"
                + "\"availableVRam\":65536,\"numa\":1,\"healthy\":true,\"qosPolicy\":\"best-effort\"},{\"uuid\":\"\"}]";
        assertThat(RegisterCodec.encode(METAX, value, HamiRelease.V2_10)).isEqualTo(value);
        assertThat(devices(METAX, value, HamiRelease.V2_10)).as("type and devicevendor Metax-SGPU, custominfo from"
                + " the entry").containsExactly(
                new RegisteredDevice("m-0", 0, 16, 65536, 100, "Metax-SGPU", 1, "", true, "Metax-SGPU",
                        Map.of("Model", "MXC500", "QosPolicy", "best-effort", "LinkZone", 0L)),
                new RegisteredDevice("", 1, 0, 0, 0, "Metax-SGPU", 0, "", false, "Metax-SGPU",
                        Map.of("Model", "", "QosPolicy", "", "LinkZone", 0L)));
        assertThat(decode(METAX, "m-0,1:", HamiRelease.V2_10).error())
                .isEqualTo("invalid character 'm' looking for beginning of value");
    }

    @Test
    void enflameDrsReadsTheSpecExampleAndRoundTrips() {
        String value = "{\"devices\":[{\"index\":\"1\",\"minor\":\"3\",\"capacity\":4}],"
                + "\"profiles\":{\"2g.12gb\":\"0\",\"4g.24gb\":\"1\"}}";
        assertThat(devices(DRS, value, HamiRelease.V2_10)).containsExactly(new RegisteredDevice(
                "node-a-enflame-drs-1", 1, 4, 24576, 100, "Enflame", 0, "", true, "Enflame",
                Map.of("minor", "3", "index", "1", "maxSlice", 4L,
                        "profiles", Map.of("2g.12gb", "0", "4g.24gb", "1"))));
        assertThat(RegisterCodec.encode(DRS, "{\"profiles\":{\"4g.24gb\":\"1\",\"2g.12gb\":\"0\"},"
                + "\"devices\":[{\"capacity\":4,\"minor\":\"3\",\"index\":\"1\"}]}", HamiRelease.V2_10))
                .isEqualTo(value);
    }

    @Test
    void enflameDrsErrors() {
        assertThat(decode(DRS, "{\"devices\":[{\"index\":\"0\",\"capacity\":4}],\"profiles\":{\"x\":\"0\"}}",
                HamiRelease.V2_10).error()).isEqualTo("no valid drs profiles found on node node-a");
        assertThat(decode(DRS, "{\"devices\":[{\"index\":\"0\",\"capacity\":\"0\"}],\"profiles\":{\"1g.6gb\":\"0\"}}",
                HamiRelease.V2_10).error()).isEqualTo("invalid drs capacity on node node-a");
        assertThat(decode(DRS, "{\"devices\":[],\"profiles\":{\"1g.6gb\":\"0\"}}", HamiRelease.V2_10).error())
                .isEqualTo("no drs devices found on node node-a");
        assertThat(decode(DRS, "x:1", HamiRelease.V2_10).error())
                .isEqualTo("failed to parse enflame.com/gcu-drs-capacity: invalid character 'x' looking for "
                        + "beginning of value");
    }

    @Test
    void capacityDerivedDevicesKeepOnlyIntegersAndTheReleasesVendors() {
        Map<String, Result> derived = RegisterCodec.fromCapacity(Map.of("cambricon.com/mlu.smlu.vcore", "200",
                "cambricon.com/mlu.smlu.vmemory", "96", "amd.com/gpu", "2", "aws.amazon.com/neuron", "x",
                "cpu", "8"), HamiRelease.V2_10, "n");
        assertThat(derived).as("AMD derives from capacity in v2.9 only; cpu is no vendor's")
                .containsOnlyKeys("cambricon.com/mlu.smlu.vcore", "aws.amazon.com/neuron");
        assertThat(derived.get("aws.amazon.com/neuron").error())
                .isEqualTo("invalid capacity aws.amazon.com/neuron: \"x\" (expected: a non-negative integer)");
    }

    @Test
    void capacityBeyondTheDerivedDeviceBoundIsAnErrorNotAMillionObjects() {
        assertThat(RegisterCodec.fromCapacity(Map.of("aws.amazon.com/neuron", "1024"), HamiRelease.V2_10, "n")
                .get("aws.amazon.com/neuron").devices()).hasSize(RegisterCodec.MAX_DERIVED_DEVICES);
        assertThat(RegisterCodec.fromCapacity(Map.of("cambricon.com/mlu.smlu.vcore", "300000000000"),
                HamiRelease.V2_10, "n").get("cambricon.com/mlu.smlu.vcore").error())
                .isEqualTo("too many devices in capacity cambricon.com/mlu.smlu.vcore: \"300000000000\" gives"
                        + " 3000000000 (expected: at most 1024)");
    }

    @Test
    void aNodesRegistrationsAreItsRegisterAnnotationsInOrderThenItsCapacity() {
        Map<String, String> annotations = new java.util.LinkedHashMap<>();
        annotations.put(HYGON, HYGON_EXAMPLE);
        annotations.put("hami.io/node-handshake", "Reported 2026-01-01 00:00:00");
        annotations.put(ASCEND, "x");
        Map<String, Result> decoded = RegisterCodec.decodeNode(annotations, Map.of("aws.amazon.com/neuron", "2",
                "cpu", "8"), HamiRelease.V2_10, "node-a");

        assertThat(decoded).containsOnlyKeys(HYGON, ASCEND, "aws.amazon.com/neuron");
        assertThat(List.copyOf(decoded.keySet())).containsExactly(HYGON, ASCEND, "aws.amazon.com/neuron");
        assertThat(decoded.get(HYGON)).isEqualTo(decode(HYGON, HYGON_EXAMPLE, HamiRelease.V2_10));
        assertThat(decoded.get(ASCEND).error()).isEqualTo("invalid character 'x' looking for beginning of value");
        assertThat(decoded.get("aws.amazon.com/neuron").devices()).hasSize(2);
        assertThat(RegisterCodec.vendorOf(ASCEND)).hasValue("Ascend");
        assertThat(RegisterCodec.vendorOf("aws.amazon.com/neuron")).hasValue("AWS Neuron");
        assertThat(RegisterCodec.vendorOf("cpu")).isEmpty();
    }

    @Test
    void goQuoteAndStrconvTexts() {
        assertThat(GoStrconv.quote("a\"b\\\n\u0001é")).isEqualTo("\"a\\\"b\\\\\\n\\x01é\"");
        assertThat(GoStrconv.parseInt("+7", 32).value()).isEqualTo(7);
        assertThat(GoStrconv.parseInt("-2147483649", 32)).isEqualTo(new GoStrconv.Parsed(Integer.MIN_VALUE,
                "strconv.ParseInt: parsing \"-2147483649\": value out of range"));
        assertThat(GoStrconv.atoi("1_0").error()).isEqualTo("strconv.Atoi: parsing \"1_0\": invalid syntax");
    }
}
