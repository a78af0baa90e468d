package io.tenantgateway.agent.devices;

import static org.assertj.core.api.Assertions.assertThat;

import io.tenantgateway.hami.NodeVendor;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Whose devices the registrar writes, as vendors stand aside: plain values, no API. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class VendorRosterTest {
    private static final SimulatedVendor DCU = new SimulatedVendor(NodeVendor.HYGON, List.of(), "dcu-register",
            Map.of(), Map.of());

    @Test
    void everyPresentVendorIsOursUntilItStandsAside() {
        VendorRoster roster = new VendorRoster(true, List.of(DCU));

        assertThat(roster.present()).containsExactly(NodeVendor.NVIDIA, NodeVendor.HYGON);
        assertThat(roster.nvidiaActive()).isTrue();
        assertThat(roster.activeVendors()).containsExactly(DCU);
        assertThat(roster.asideDetail()).isEmpty();

        assertThat(roster.standAside(NodeVendor.NVIDIA, "HAMi's plugin serves nvidia.com/gpu")).isTrue();

        assertThat(roster.nvidiaActive()).isFalse();
        assertThat(roster.anyActive()).isTrue();
        assertThat(roster.stillRegistering()).containsExactly("Hygon");
        assertThat(roster.asideDetail())
                .isEqualTo("NVIDIA registered by another device plugin: HAMi's plugin serves nvidia.com/gpu");

        roster.standAside(NodeVendor.HYGON, "hygon's plugin");
        assertThat(roster.activeVendors()).isEmpty();
        assertThat(roster.anyActive()).isFalse();
        assertThat(roster.stillRegistering()).isEmpty();
    }

    @Test
    void aVendorToldTwiceKeepsTheFirstReasonAndAnAbsentOneChangesNothingWritten() {
        VendorRoster roster = new VendorRoster(true, List.of());

        assertThat(roster.standAside(NodeVendor.HYGON, "first")).isTrue();
        assertThat(roster.standAside(NodeVendor.HYGON, "second")).isFalse();

        assertThat(roster.standingAside()).containsExactly(Map.entry(NodeVendor.HYGON, "first"));
        assertThat(roster.present(NodeVendor.HYGON)).isFalse();
        assertThat(roster.anyActive()).isTrue();
        assertThat(roster.asideDetail()).as("only present vendors are named").isEmpty();
    }

    @Test
    void aMockInventoryWithoutNvidiaEntriesHasNoNvidia() {
        VendorRoster roster = new VendorRoster(false, List.of(DCU));

        assertThat(roster.present()).containsExactly(NodeVendor.HYGON);
        assertThat(roster.present(NodeVendor.NVIDIA)).isFalse();
        assertThat(roster.nvidiaActive()).isFalse();
    }
}
