package io.tenantgateway.hami;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Values no real API server stores, and values built to forge: a register or pod annotation larger than Kubernetes
 * allows for all annotations of an object is refused before it is decoded; a legacy-format field holding a
 * separator is refused on encode; error texts quote what they echo, escaped and abbreviated.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class HostileValuesTest {
    private static final String NVIDIA = Annotations.NODE_NVIDIA_REGISTER;
    private static final String HYGON = "hami.io/node-dcu-register";
    /** One byte over 256 KiB, a valid legacy text up to there (it would decode to thousands of devices). */
    private static final String OVERSIZED = oversized();

    private static String oversized() {
        StringBuilder value = new StringBuilder();
        for (int i = 0; value.length() <= Annotations.TOTAL_SIZE_LIMIT; i++) {
            value.append("DCU-").append(i).append(",2,32752,100,DCU-K100,0,true,0,hami-core:");
        }
        return value.toString();
    }

    @Test
    void theSizeLimitIsKubernetesTotalAnnotationLimitInUtf8Bytes() {
        assertThat(Annotations.TOTAL_SIZE_LIMIT).isEqualTo(262_144);
        assertThat(Annotations.exceedsSizeLimit("x".repeat(262_144))).isFalse();
        assertThat(Annotations.exceedsSizeLimit("x".repeat(262_145))).isTrue();
        // 90 000 three-byte characters: fewer chars than the limit, more bytes.
        assertThat(Annotations.exceedsSizeLimit("节".repeat(90_000))).isTrue();
        assertThat(Annotations.exceedsSizeLimit(null)).isFalse();
    }

    @Test
    void everyDecoderRefusesAValueLargerThanTheApiAllowsWithoutQuotingIt() {
        String expected = "(expected: at most 262144, Kubernetes' limit on all annotations of an object); not decoded";
        RegisterCodec.Result result = RegisterCodec.decode(HYGON, OVERSIZED, HamiRelease.V2_10, "node-a");
        assertThat(result.isOk()).isFalse();
        assertThat(result.error()).isEqualTo("annotation " + HYGON + ": " + OVERSIZED.length() + " bytes " + expected);
        assertThat(RegisterCodec.decodeNode(java.util.Map.of(NVIDIA, "[" + OVERSIZED + "]"), java.util.Map.of(),
                HamiRelease.V2_9, "node-a").get(NVIDIA).error()).startsWith("annotation " + NVIDIA + ": ")
                .endsWith(expected);

        assertThatThrownBy(() -> HamiDeviceCodec.decode(OVERSIZED)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageEndingWith(expected).hasMessageNotContaining("DCU-0");
        assertThatThrownBy(() -> HamiDeviceCodec.decodeJson("[" + OVERSIZED + "]"))
                .hasMessageEndingWith(expected);
        assertThatThrownBy(() -> DeviceAllocationCodec.decode(OVERSIZED)).hasMessageStartingWith("annotation device"
                + " list: ").hasMessageEndingWith(expected);
        assertThatThrownBy(() -> AscendRuntimeInfo.decode("[" + OVERSIZED + "]")).hasMessageEndingWith(expected);
        assertThatThrownBy(() -> NodeLock.parse(OVERSIZED)).isInstanceOf(MalformedNodeLockException.class)
                .hasMessageStartingWith("annotation " + Annotations.NODE_LOCK + ": ").hasMessageEndingWith(expected);
    }

    @Test
    void aLegacyFieldWithASeparatorIsRefusedOnEncode() {
        // Written as it is, this id reads back as a second device with 999,999 MiB.
        String forged = "[{\"id\":\"DCU-a,1,999999,100,DCU-K100,0,true,0,hami-core:DCU-b\",\"count\":2,"
                + "\"devmem\":32752,\"devcore\":100,\"type\":\"DCU-K100\",\"health\":true}]";
        assertThatThrownBy(() -> RegisterCodec.encode(HYGON, forged, HamiRelease.V2_10))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("device 0: id \"DCU-a,1,999999,100,DCU-K100,0,true,0,hami-core:DCU-b\" contains ','"
                        + " (expected: no ',' or ':' in a legacy-format field: they separate the fields and the"
                        + " devices)");
        assertThatThrownBy(() -> RegisterCodec.encodeLegacy(List.of(RegisteredDevice.of("DCU-a", 0, 1, 1, 100,
                "K100:x", 0, "hami", true)))).hasMessageContaining("type \"K100:x\" contains ':'");
        assertThatThrownBy(() -> RegisterCodec.encodeLegacy(List.of(RegisteredDevice.of("DCU-a", 0, 1, 1, 100,
                "K100", 0, "hami,x", true)))).hasMessageContaining("mode \"hami,x\" contains ','");
        // JSON keeps any character: nothing to refuse there.
        assertThat(RegisterCodec.encode(NVIDIA, forged, HamiRelease.V2_10)).contains("DCU-a,1,999999");
    }

    @Test
    void encodeCountsTheDevicesBeforeBuildingThem() {
        String device = "{\"id\":\"GPU-x\",\"count\":1}";
        String many = "[" + String.join(",", java.util.Collections.nCopies(RegisterCodec.MAX_ENCODED_DEVICES + 1,
                device)) + "]";
        assertThatThrownBy(() -> RegisterCodec.encode(NVIDIA, many, HamiRelease.V2_10))
                .hasMessage("more than 1024 devices (expected: at most 1024 in one register value)");
        String drs = "{\"devices\":" + many.replace("\"id\":\"GPU-x\",\"count\":1", "\"index\":\"1\"")
                + ",\"profiles\":{}}";
        assertThatThrownBy(() -> RegisterCodec.encode("enflame.com/gcu-drs-capacity", drs, HamiRelease.V2_10))
                .hasMessageStartingWith("more than 1024 devices");
        // Brackets and commas inside strings do not count.
        String tricky = "[{\"id\":\"" + ",[".repeat(2000) + "\"}]";
        assertThat(RegisterCodec.encode(NVIDIA, tricky, HamiRelease.V2_10)).startsWith("[{\"id\":\",[");
        String enough = "[" + String.join(",", java.util.Collections.nCopies(RegisterCodec.MAX_ENCODED_DEVICES,
                device)) + "]";
        assertThat(RegisterCodec.encode(NVIDIA, enough, HamiRelease.V2_10)).startsWith("[{\"id\":\"GPU-x\"");
    }

    @Test
    void errorTextsQuoteWhatTheyEchoEscapedAndAbbreviated() {
        String hostile = "GPU-a\u001b[2J,NVIDIA,lots\n,0:;";
        assertThatThrownBy(() -> DeviceAllocationCodec.decode(hostile)).hasMessageStartingWith(
                "device list \"GPU-a\\x1b[2J,NVIDIA,lots\\n,0:;\": device \"GPU-a\\x1b[2J,NVIDIA,lots\\n,0\": For input"
                        + " string: \"lots\\n\"");
        String huge = "GPU-" + "a".repeat(10_000) + ",NVIDIA,x,0:;";
        assertThatThrownBy(() -> DeviceAllocationCodec.decode(huge)).satisfies(e -> assertThat(e.getMessage())
                .hasSizeLessThan(1000).contains("…(10017 characters)"));
        assertThatThrownBy(() -> NodeLock.parse("2025-06-01T10:00:00Z,ns\u0007,")).hasMessage(
                "malformed lock annotation: holder \"ns\\a/\" (expected: <namespace>,<pod>)");
        assertThatThrownBy(() -> HamiDeviceCodec.decodeLegacy("GPU-a,1,1,1,T,0,\u001b]52;c;x\u0007:"))
                .hasMessageContaining("health: '\\x1b]52;c;x\\a'");
    }
}
