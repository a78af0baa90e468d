package io.tenantgateway.hami;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HamiDeviceCodecTest {

    @Test
    void encodesTheSpecExampleByteForByte() {
        GpuDevice rtx4090 = new GpuDevice("GPU-4b3f5f6c-2a4e-7e0b-8f6d-1c0a2b3c4d5e", 4, 10, 23028, 100,
                "NVIDIA GeForce RTX 4090", 0, "hami-core", true);

        assertThat(HamiDeviceCodec.encode(List.of(rtx4090))).isEqualTo(
                "[{\"id\":\"GPU-4b3f5f6c-2a4e-7e0b-8f6d-1c0a2b3c4d5e\",\"index\":4,\"count\":10,\"devmem\":23028,"
                        + "\"devcore\":100,\"type\":\"NVIDIA GeForce RTX 4090\",\"mode\":\"hami-core\",\"health\":true}]");
    }

    @Test
    void omitsZeroFalseAndEmptyFieldsAndKeepsNonZeroNuma() {
        GpuDevice empty = new GpuDevice("", 0, 0, 0, 0, "", 0, "", false);
        GpuDevice unhealthyOnNuma1 = new GpuDevice("GPU-x", 2, 10, 1024, 100, "NVIDIA T4", 1, "mig", false);

        assertThat(HamiDeviceCodec.encode(List.of(empty))).isEqualTo("[{}]");
        assertThat(HamiDeviceCodec.encode(List.of(unhealthyOnNuma1))).isEqualTo(
                "[{\"id\":\"GPU-x\",\"index\":2,\"count\":10,\"devmem\":1024,\"devcore\":100,\"type\":\"NVIDIA T4\","
                        + "\"numa\":1,\"mode\":\"mig\"}]");
        assertThat(HamiDeviceCodec.encode(List.of())).isEqualTo("[]");
    }

    @Test
    void neverWritesNullElements() {
        assertThatThrownBy(() -> HamiDeviceCodec.encode(Arrays.asList((GpuDevice) null)))
                .isInstanceOf(NullPointerException.class)
                .hasMessage("devices[0]");
    }

    @Test
    void escapesStringsTheWayGoDoes() {
        StringBuilder out = new StringBuilder();
        HamiDeviceCodec.appendGoJsonString("a\"b\\c<d>&e\n\t\u0001\u2028\ud800é", out);

        assertThat(out).hasToString("\"a\\\"b\\\\c\\u003cd\\u003e\\u0026e\\n\\t\\u0001\\u2028\ufffdé\"");
    }

    @Test
    void decodesJsonLikeGoUnmarshal() {
        // v2.9 writes devicepairscore; keys match case-insensitively; null keeps the zero value.
        String v29 = "[{\"ID\":\"GPU-a\",\"index\":1,\"count\":10,\"devmem\":23028,\"devcore\":100,\"type\":\"NVIDIA L4\","
                + "\"numa\":null,\"mode\":\"hami-core\",\"health\":true,\"devicepairscore\":{},\"devicevendor\":\"NVIDIA\"}]";

        assertThat(HamiDeviceCodec.decode(v29)).containsExactly(
                new GpuDevice("GPU-a", 1, 10, 23028, 100, "NVIDIA L4", 0, "hami-core", true));
        assertThat(HamiDeviceCodec.decode("  []  ")).isEmpty();
    }

    @Test
    void rejectsJsonTheSchedulerWouldChokeOn() {
        assertThatThrownBy(() -> HamiDeviceCodec.decode("[null]"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("element 0: null (expected: a device object");
        assertThatThrownBy(() -> HamiDeviceCodec.decode("[{\"devmem\":\"81920\"}]"))
                .hasMessage("device list: element 0: devmem: \"81920\" (expected: an integer that fits in 32 bits)");
        assertThatThrownBy(() -> HamiDeviceCodec.decode("[{\"count\":1.5}]"))
                .hasMessageContaining("count: 1.5");
        assertThatThrownBy(() -> HamiDeviceCodec.decode("[{\"health\":\"true\"}]"))
                .hasMessageContaining("health: \"true\" (expected: true or false)");
        assertThatThrownBy(() -> HamiDeviceCodec.decode("[{\"index\":-1}]"))
                .hasMessageContaining("index: -1 (expected: >= 0)");
        assertThatThrownBy(() -> HamiDeviceCodec.decode("[{\"id\":"))
                .hasMessageStartingWith("device list: not valid JSON");
        assertThatThrownBy(() -> HamiDeviceCodec.decodeJson("{\"id\":\"GPU-a\"}"))
                .hasMessageContaining("(expected: a JSON array)");
    }

    @Test
    void readsTheLegacyText() {
        // HAMi's docs/develop/protocol.md example: 7 fields, trailing ':'.
        String legacy = "GPU-00552014-5c87-89ac-b1a6-7b53aa24b0ec,10,32768,100,NVIDIA-Tesla V100-PCIE-32GB,0,true:"
                + "GPU-0fc3eda5-e98b-a25b-5b0d-cf5c855d1448,10,32768,100,NVIDIA-Tesla V100-PCIE-32GB,0,true:";
        // What HAMi's EncodeNodeDevices writes since index and mode exist: 9 fields.
        String legacyWithIndex = "GPU-a,10,23028,100,NVIDIA L4,1,false,3,mig:";

        assertThat(HamiDeviceCodec.decode(legacy)).containsExactly(
                new GpuDevice("GPU-00552014-5c87-89ac-b1a6-7b53aa24b0ec", 0, 10, 32768, 100,
                        "NVIDIA-Tesla V100-PCIE-32GB", 0, "hami-core", true),
                new GpuDevice("GPU-0fc3eda5-e98b-a25b-5b0d-cf5c855d1448", 0, 10, 32768, 100,
                        "NVIDIA-Tesla V100-PCIE-32GB", 0, "hami-core", true));
        assertThat(HamiDeviceCodec.decode(legacyWithIndex)).containsExactly(
                new GpuDevice("GPU-a", 3, 10, 23028, 100, "NVIDIA L4", 1, "mig", false));
    }

    @Test
    void legacyErrorsNameTheEntryAndField() {
        assertThatThrownBy(() -> HamiDeviceCodec.decode("GPU-a,10,100:"))
                .hasMessage("device list: legacy entry 0: GPU-a,10,100 has 3 fields (expected: 7 or 9)");
        assertThatThrownBy(() -> HamiDeviceCodec.decode("GPU-a,10,1G,100,NVIDIA L4,0,true:"))
                .hasMessage("device list: legacy entry 0: devmem: '1G' (expected: a decimal integer)");
        assertThatThrownBy(() -> HamiDeviceCodec.decode("GPU-a,10,1,100,NVIDIA L4,0,yes:"))
                .hasMessage("device list: legacy entry 0: health: 'yes' (expected: true or false)");
        assertThatThrownBy(() -> HamiDeviceCodec.decode("GPU-a,10,1,-5,NVIDIA L4,0,true:"))
                .hasMessage("device list: legacy entry 0: device GPU-a: devcore: -5 (expected: >= 0)");
        assertThatThrownBy(() -> HamiDeviceCodec.decode("garbage"))
                .hasMessageStartingWith("device list: garbage (expected: a JSON array or legacy text");
    }

    @Test
    void typeNamesAlwaysCarryTheNvidiaWord() {
        assertThat(GpuDevice.typeForModel("NVIDIA L4")).isEqualTo("NVIDIA L4");
        assertThat(GpuDevice.typeForModel("Tesla V100-PCIE-32GB")).isEqualTo("NVIDIA-Tesla V100-PCIE-32GB");
    }
}
