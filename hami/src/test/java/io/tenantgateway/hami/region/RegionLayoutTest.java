package io.tenantgateway.hami.region;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The layouts' arithmetic against HAMi-core's numbers (v1.2's table; v0 from HAMi's Go struct and file size). */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class RegionLayoutTest {
    @Test
    void v1SlotFieldsAddUpTo1960Bytes() {
        // pid + hostpid + used[16] of 8 u64 + monitorused[16] + device_util[16] of 6 u64 + status + padding
        // + seqlock + 2 unused u64
        int sum = 4 + 4 + 16 * 8 * 8 + 16 * 8 + 16 * 6 * 8 + 4 + 4 + 8 + 2 * 8;
        assertThat(sum).isEqualTo(1960);
        assertThat(RegionLayout.V1_SLOT_SIZE).isEqualTo(1960);
        assertThat(RegionLayout.V1.slotSize()).isEqualTo(1960);
        assertThat(RegionLayout.V1_SLOT_MONITORUSED).isEqualTo(1032);
        assertThat(RegionLayout.V1.slotDeviceUtil()).isEqualTo(1160);
        assertThat(RegionLayout.V1.slotStatus()).isEqualTo(1928);
        assertThat(RegionLayout.V1.slotSeqlock()).isEqualTo(1936).isEqualTo(1960 - 3 * 8);
        assertThat(RegionLayout.V1.memoryEntry()).isEqualTo(64);
        assertThat(RegionLayout.V1.utilEntry()).isEqualTo(48);
    }

    @Test
    void v1OffsetsAreHamiCoresTable() {
        RegionLayout v1 = RegionLayout.V1;
        assertThat(RegionLayout.V1_OWNER_PID).isEqualTo(16);
        assertThat(v1.deviceNum()).isEqualTo(56);
        assertThat(v1.uuids()).isEqualTo(64);
        assertThat(v1.limit()).isEqualTo(1600);
        assertThat(v1.smLimit()).isEqualTo(1728);
        assertThat(v1.procs()).isEqualTo(1856);
        assertThat(v1.procNum()).isEqualTo(2008896).isEqualTo(1856 + 1024 * 1960);
        assertThat(v1.utilizationSwitch()).isEqualTo(2008900);
        assertThat(v1.recentKernel()).isEqualTo(2008904);
        assertThat(v1.priority()).isEqualTo(2008908);
        assertThat(v1.lastKernelTime()).isEqualTo(2008912);
        assertThat(v1.size()).isEqualTo(2008952).isEqualTo(2008920 + 32); // sem_postinit ends the struct
        assertThat(v1.slot(1023) + v1.slotSize()).isEqualTo(v1.procNum());
    }

    @Test
    void v0SlotIsGoStructWithoutPaddingArraysAnd8ByteAligned() {
        // pid + hostpid + used[16] of 5 u64 + monitorused[16] + device_util[16] of 3 u64 + status = 1164,
        // rounded up to the slot's alignment (8, its u64 fields) = 1168
        int fields = 4 + 4 + 16 * 5 * 8 + 16 * 8 + 16 * 3 * 8 + 4;
        assertThat(fields).isEqualTo(1164);
        assertThat((fields + 7) / 8 * 8).isEqualTo(1168);
        RegionLayout v0 = RegionLayout.V0;
        assertThat(v0.slotSize()).isEqualTo(1168);
        assertThat(RegionLayout.V0_SLOT_MONITORUSED).isEqualTo(648);
        assertThat(v0.slotDeviceUtil()).isEqualTo(776);
        assertThat(v0.slotStatus()).isEqualTo(1160);
        assertThat(v0.hasSeqlock()).isFalse();
        assertThat(v0.lastKernelTime()).isEqualTo(-1);
    }

    @Test
    void v0OffsetsAndSizeMatchTheFileSizeOlderMonitorsTestedFor() {
        RegionLayout v0 = RegionLayout.V0;
        // flag i32 @0, sm_init_flag i32 @4, owner_pid u32 @8, sem [32]byte @12..44, u64 aligned to 48
        assertThat(v0.deviceNum()).isEqualTo(48).isEqualTo((12 + 32 + 7) / 8 * 8);
        assertThat(v0.uuids()).isEqualTo(56);
        assertThat(v0.limit()).isEqualTo(1592);
        assertThat(v0.smLimit()).isEqualTo(1720);
        assertThat(v0.procs()).isEqualTo(1848);
        assertThat(v0.procNum()).isEqualTo(1197880).isEqualTo(1848 + 1024 * 1168);
        assertThat(v0.utilizationSwitch()).isEqualTo(1197884);
        assertThat(v0.recentKernel()).isEqualTo(1197888);
        assertThat(v0.priority()).isEqualTo(1197892);
        assertThat(v0.size()).isEqualTo(1197896);
        // HAMi-core wrote one byte at offset sizeof(region): the file is one byte longer than the struct.
        assertThat(v0.size() + 1).isEqualTo(1197897);
        assertThat(v0.size()).isLessThan(RegionLayout.V1.size());
    }

    @Test
    void publicSizesAreTheLayouts() {
        assertThat(SharedRegion.MAGIC).isEqualTo(19920718);
        assertThat(SharedRegion.V0_SIZE).isEqualTo(1197896);
        assertThat(SharedRegion.V1_SIZE).isEqualTo(2008952);
    }
}
