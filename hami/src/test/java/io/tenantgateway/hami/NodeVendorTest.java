package io.tenantgateway.hami;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.Map;
import org.junit.jupiter.api.Test;

class NodeVendorTest {
    private static final Instant STARTED = Instant.parse("2026-12-01T08:00:00Z");
    private static final Instant NOW = Instant.parse("2026-12-01T08:00:30.004512345Z");

    @Test
    void eachVendorsKeysFollowHamisTable() {
        NodeVendor ascend = NodeVendor.ascend("Ascend910B4");
        assertThat(ascend.registerKey()).isEqualTo("hami.io/node-register-Ascend910B4");
        assertThat(ascend.handshakeKey()).isEqualTo("hami.io/node-handshake-Ascend910B4");
        assertThat(ascend.toAllocateKey()).isEqualTo("hami.io/Ascend910B4-devices-to-allocate");
        assertThat(ascend.resourceName()).isEqualTo("huawei.com/Ascend910B4");
        assertThat(ascend.socketName()).isEqualTo("Ascend910B4.sock");
        assertThat(NodeVendor.HYGON.registerFormat()).isEqualTo(RegisterFormat.LEGACY_TEXT);
        assertThat(NodeVendor.HYGON.socketName()).isEqualTo("hygon.com_dcunum");
        assertThat(NodeVendor.NVIDIA.toAllocateKey()).isEqualTo("hami.io/vgpu-devices-to-allocate");
    }

    @Test
    void handshakesAreWrittenAsEachPluginWritesThem() {
        assertThat(NodeVendor.NVIDIA.handshake(NOW, STARTED, ZoneOffset.UTC)).isEqualTo("Reported 2026-12-01 08:00:30");
        assertThat(NodeVendor.HYGON.handshake(NOW, STARTED, ZoneOffset.UTC))
                .isEqualTo("Reported 2026-12-01 08:00:30.004512345 +0000 UTC m=+30.004512345");
        assertThat(NodeVendor.HYGON.handshake(Instant.parse("2026-12-01T08:00:30.120Z"), STARTED,
                ZoneId.of("Asia/Shanghai"))).isEqualTo("Reported 2026-12-01 16:00:30.12 +0800 CST m=+30.120000000");
        assertThat(NodeVendor.ascend("Ascend910B4").handshake(NOW, STARTED, ZoneOffset.UTC))
                .isEqualTo("Reported_2026.12.01 08:00:31");
    }

    @Test
    void aPodIsCompleteOnlyWhenNoVendorsEntryIsLeft() {
        assertThat(NodeVendor.anyEntryLeft(Map.of())).isFalse();
        assertThat(NodeVendor.anyEntryLeft(Map.of("hami.io/vgpu-devices-to-allocate", ";",
                "hami.io/Ascend910B4-devices-to-allocate", ";;"))).isFalse();
        assertThat(NodeVendor.anyEntryLeft(Map.of("hami.io/vgpu-devices-to-allocate", ";",
                "hami.io/Ascend910B4-devices-to-allocate", "A-0,Ascend910B4,8192,0:;"))).isTrue();
        assertThat(NodeVendor.anyEntryLeft(Map.of("hami.io/cambricon-mlu-devices-to-allocate",
                "MLU-1,MLU,1024,10:;"))).as("every HAMi vendor counts").isTrue();
        assertThat(NodeVendor.anyEntryLeft(Map.of("hami.io/dcu-devices-to-allocate", "garbage")))
                .as("undecodable: pending").isTrue();
        assertThat(NodeVendor.anyEntryLeft(Map.of("hami.io/dcu-devices-allocated", "DCU-a,DCU,1,1:;"))).isFalse();
    }
}
