package io.tenantgateway.hami;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DeviceAllocationCodecTest {
    private static final String UUID_A = "GPU-24aa1c7c-9a3b-4e51-8b8f-1d3b0f0e2a11";
    private static final String UUID_B = "GPU-9b90c3e0-7f5d-4a3e-9c1b-2e4f6a8b0c22";

    @Test
    void decodesOneContainerOneDevice() {
        List<List<ContainerDevice>> entries = DeviceAllocationCodec.decode(UUID_A + ",NVIDIA,24576,100:;");

        assertThat(entries).containsExactly(List.of(ContainerDevice.nvidia(UUID_A, 24576, 100)));
    }

    @Test
    void keepsAnEmptyInitContainerEntryInItsPlace() {
        List<List<ContainerDevice>> entries = DeviceAllocationCodec.decode(";" + UUID_B + ",NVIDIA,6144,30:;");

        assertThat(entries).containsExactly(List.of(), List.of(ContainerDevice.nvidia(UUID_B, 6144, 30)));
    }

    @Test
    void decodesSeveralDevicesInOneContainer() {
        List<List<ContainerDevice>> entries = DeviceAllocationCodec.decode("GPU-a,NVIDIA,3000,0:GPU-b,NVIDIA,3000,0:;");

        assertThat(entries).containsExactly(List.of(ContainerDevice.nvidia("GPU-a", 3000, 0),
                ContainerDevice.nvidia("GPU-b", 3000, 0)));
        assertThat(DeviceAllocationCodec.deviceUuids(entries)).containsExactly("GPU-a", "GPU-b");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "GPU-a,NVIDIA,24576,100:;                     | ;",
        ";GPU-b,NVIDIA,6144,30:;                      | ;;",
        "GPU-a,NVIDIA,3000,0:GPU-b,NVIDIA,3000,0:;    | ;",
        "GPU-a,NVIDIA,1,1:;;GPU-b,NVIDIA,2,2:;        | ;;;",
        "';;'                                         | ;;",
    })
    void consumingEmptiesEveryEntryAndKeepsTheStructure(String value, String consumed) {
        assertThat(DeviceAllocationCodec.consumeAll(value)).isEqualTo(consumed);
        assertThat(DeviceAllocationCodec.isFullyConsumed(DeviceAllocationCodec.decode(consumed))).isTrue();
        assertThat(DeviceAllocationCodec.decode(consumed)).hasSameSizeAs(DeviceAllocationCodec.decode(value));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        UUID_A + ",NVIDIA,24576,100:;",
        ";" + UUID_B + ",NVIDIA,6144,30:;",
        "GPU-a,NVIDIA,3000,0:GPU-b,NVIDIA,3000,0:;",
        "';;;'",
    })
    void encodeIsTheInverseOfDecode(String value) {
        assertThat(DeviceAllocationCodec.encode(DeviceAllocationCodec.decode(value))).isEqualTo(value);
    }

    @Test
    void emptyValueHasNoEntries() {
        assertThat(DeviceAllocationCodec.decode("")).isEmpty();
        assertThat(DeviceAllocationCodec.consumeAll("")).isEmpty();
        assertThat(DeviceAllocationCodec.isFullyConsumed(List.of())).isTrue();
    }

    @Test
    void toleratesAMissingFinalTerminator() {
        assertThat(DeviceAllocationCodec.decode("GPU-a,NVIDIA,1,2")).containsExactly(List.of(ContainerDevice.nvidia("GPU-a", 1, 2)));
        assertThat(DeviceAllocationCodec.consumeAll("GPU-a,NVIDIA,1,2:")).isEqualTo(";");
    }

    @Test
    void rejectsADeviceWithMissingFields() {
        assertThatThrownBy(() -> DeviceAllocationCodec.decode("GPU-a,NVIDIA,3000:;"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("device list \"GPU-a,NVIDIA,3000:;\": device \"GPU-a,NVIDIA,3000\" has 3 fields (expected: "
                        + "<UUID>,<type>,<memMiB>,<cores> each ':'-terminated, one ';'-terminated entry per container)");
    }

    @Test
    void rejectsANonNumericMemory() {
        assertThatThrownBy(() -> DeviceAllocationCodec.decode("GPU-a,NVIDIA,lots,0:;"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("device list \"GPU-a,NVIDIA,lots,0:;\": device \"GPU-a,NVIDIA,lots,0\": For input string: \"lots\"");
    }

    @Test
    void takesEntriesInOrderAndErasesOnlyTheOneHandedOut() {
        // HAMi #2899: an init container without a GPU keeps its (empty) slot in front.
        List<List<ContainerDevice>> entries = DeviceAllocationCodec.decode(";" + UUID_A + ",NVIDIA,1000,10:;"
                + UUID_B + ",NVIDIA,2000,20:;");
        assertThat(DeviceAllocationCodec.nextEntry(entries)).isEqualTo(1);

        List<List<ContainerDevice>> after = DeviceAllocationCodec.erase(entries, 1);
        assertThat(DeviceAllocationCodec.encode(after)).isEqualTo(";;" + UUID_B + ",NVIDIA,2000,20:;");
        assertThat(DeviceAllocationCodec.nextEntry(after)).isEqualTo(2);
        List<List<ContainerDevice>> done = DeviceAllocationCodec.erase(after, 2);
        assertThat(DeviceAllocationCodec.encode(done)).isEqualTo(";;;");
        assertThat(DeviceAllocationCodec.nextEntry(done)).isEqualTo(-1);
        assertThatThrownBy(() -> DeviceAllocationCodec.erase(done, 3)).hasMessage("index: 3 (expected: 0..2)");
    }
}
