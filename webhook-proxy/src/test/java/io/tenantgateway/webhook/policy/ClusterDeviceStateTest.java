package io.tenantgateway.webhook.policy;

import static io.tenantgateway.webhook.policy.VendorRulesTest.assertError;
import static io.tenantgateway.webhook.policy.VendorRulesTest.assertFound;
import static io.tenantgateway.webhook.policy.VendorRulesTest.container;
import static io.tenantgateway.webhook.policy.VendorRulesTest.json;
import static io.tenantgateway.webhook.policy.VendorRulesTest.pod;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tenantgateway.hami.HamiRelease;
import io.tenantgateway.webhook.quota.QuotaLookup;
import org.junit.jupiter.api.Test;

/**
 * The decisions that depend on scheduler-side state (spec hami-vendors.md §3.7 v2.9 Enflame factor, §3.8 v2.10 AWS
 * Neuron cores per device) with values other than HAMi's defaults, through the policy's public constructor.
 */
class ClusterDeviceStateTest {

    private static Decision admit(HamiRelease compat, ClusterDeviceState state, String pod) {
        AdmissionPolicy policy = new AdmissionPolicy(PolicyConfig.defaults().withCompat(compat),
                DeviceConfig.defaults(), state, QuotaLookup.NONE);
        assertThat(policy.clusterState()).isEqualTo(state);
        return policy.admit(json(pod), "ns");
    }

    private static Decision neuron(long coresPerDevice, String resources) {
        return admit(HamiRelease.V2_10, new ClusterDeviceState(coresPerDevice, 0), pod(resources));
    }

    private static Decision enflame(long factor, String resources) {
        return admit(HamiRelease.V2_9, new ClusterDeviceState(2, factor), pod(resources));
    }

    @Test
    void defaultsAreHamisBeforeAnyNodeRegistered() {
        assertThat(ClusterDeviceState.DEFAULTS).isEqualTo(new ClusterDeviceState(2, 0));
        assertThat(new AdmissionPolicy(PolicyConfig.defaults(), DeviceConfig.defaults(), QuotaLookup.NONE)
                .clusterState()).isEqualTo(ClusterDeviceState.DEFAULTS);
    }

    @Test
    void neuronWithOneCorePerDeviceTakesAnyCoreCount() {
        // n <= c is one device; otherwise n must be a multiple of c: with c = 1 every count is.
        assertFound(neuron(1, "{'limits':{'aws.amazon.com/neuroncore':'1'}}"));
        assertFound(neuron(1, "{'limits':{'aws.amazon.com/neuroncore':'3'}}"));
        assertFound(neuron(1, "{'requests':{'aws.amazon.com/neuroncore':'7'}}"));
        assertError(neuron(2, "{'limits':{'aws.amazon.com/neuroncore':'3'}}"),
                "aws.amazon.com/neuroncore must be 1 or a multiple of 2, got 3");
        assertFound(neuron(2, "{'limits':{'aws.amazon.com/neuroncore':'1'}}"));
        assertFound(neuron(2, "{'limits':{'aws.amazon.com/neuroncore':'6'}}"));
        // The device limit counts devices: 2147483648 cores are 2147483648 devices with c = 1, 1073741824 with c = 2.
        assertError(neuron(1, "{'limits':{'aws.amazon.com/neuroncore':'2147483648'}}"),
                "aws.amazon.com/neuroncore needs 2147483648 devices, which exceeds the maximum of 2147483647");
        assertFound(neuron(2, "{'limits':{'aws.amazon.com/neuroncore':'2147483648'}}"));
        // The count name wins and is not divided.
        assertFound(neuron(1, "{'limits':{'aws.amazon.com/neuron':'3','aws.amazon.com/neuroncore':'3'}}"));
    }

    @Test
    void enflameV29FactorFourRoundsThePercentageUpToAQuarter() {
        Decision thirty = enflame(4, "{'limits':{'enflame.com/vgcu':'1','enflame.com/vgcu-percentage':'30'},"
                + "'requests':{}}");
        assertFound(thirty);
        assertThat(container(thirty).path("resources")).isEqualTo(json("{'limits':{'enflame.com/vgcu':'1',"
                + "'enflame.com/vgcu-percentage':'50','enflame.com/shared-gcu':'2'},'requests':{"
                + "'enflame.com/vgcu-percentage':'50'}}"));
        // On a boundary it stays: 25 is the first slice.
        assertThat(container(enflame(4, "{'limits':{'enflame.com/vgcu':'1','enflame.com/vgcu-percentage':'25'},"
                + "'requests':{}}")).path("resources").path("limits").path("enflame.com/shared-gcu").asString())
                .isEqualTo("1");
        // No percentage: 100, the whole card (4 slices); below 1 counts as 1.
        assertThat(container(enflame(4, "{'limits':{'enflame.com/vgcu':'1'},'requests':{}}")).path("resources"))
                .isEqualTo(json("{'limits':{'enflame.com/vgcu':'1','enflame.com/vgcu-percentage':'100',"
                        + "'enflame.com/shared-gcu':'4'},'requests':{'enflame.com/vgcu-percentage':'100'}}"));
        assertThat(container(enflame(4, "{'limits':{'enflame.com/vgcu':'1','enflame.com/vgcu-percentage':'0'},"
                + "'requests':{}}")).path("resources").path("limits").path("enflame.com/vgcu-percentage").asString())
                .isEqualTo("25");
        // Several devices: the whole cards, factor × count slices.
        assertThat(container(enflame(4, "{'limits':{'enflame.com/vgcu':'2'}}")).path("resources").path("limits"))
                .isEqualTo(json("{'enflame.com/vgcu':'2','enflame.com/vgcu-percentage':'100',"
                        + "'enflame.com/shared-gcu':'8'}"));
        // Above 100 no slice matches: unchanged, as in HAMi.
        String over = "{'limits':{'enflame.com/vgcu':'1','enflame.com/vgcu-percentage':'150'},'requests':{}}";
        assertThat(container(enflame(4, over)).path("resources")).isEqualTo(json(over));
        // HAMi's float arithmetic, truncated: slices of 33.33…, 34 % is the second, int(66.66…) = 66.
        assertThat(container(enflame(3, "{'limits':{'enflame.com/vgcu':'1','enflame.com/vgcu-percentage':'34'},"
                + "'requests':{}}")).path("resources").path("limits")).isEqualTo(json("{'enflame.com/vgcu':'1',"
                        + "'enflame.com/vgcu-percentage':'66','enflame.com/shared-gcu':'2'}"));
        // v2.9 panics without a requests map (a real API server fills it from limits).
        assertError(enflame(4, "{'limits':{'enflame.com/vgcu':'1'}}"), "panic: assignment to entry in nil map"
                + " [recovered]");
    }

    @Test
    void sliceIndexIsHamisLoop() {
        for (long factor = 1; factor <= 130; factor++) {
            double slice = 100.0 / factor;
            for (long p = 1; p <= 160; p++) {
                long loop = -1;
                for (long i = 0; i < factor; i++) {
                    if (slice * i < p && p <= slice * (i + 1)) {
                        loop = i;
                        break;
                    }
                }
                assertThat(EnflameSharedVendor.sliceIndex(p, slice, factor)).as("factor %d, percentage %d", factor, p)
                        .isEqualTo(loop);
            }
        }
        // A factor as large as a Node could claim (2^40: slices exact in binary): no loop over every slice.
        long huge = 1L << 40;
        assertThat(EnflameSharedVendor.sliceIndex(100, 100.0 / huge, huge)).isEqualTo(huge - 1);
        assertThat(EnflameSharedVendor.sliceIndex(50, 100.0 / huge, huge)).isEqualTo(huge / 2 - 1);
    }

    @Test
    void valuesOutsideHamisRangeAreRefused() {
        assertThatThrownBy(() -> new ClusterDeviceState(0, 0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("neuronCoresPerDevice: 0 (expected: 1 or 2, HAMi's cap)");
        assertThatThrownBy(() -> new ClusterDeviceState(3, 0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new ClusterDeviceState(2, -1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("enflameSharedFactor: -1 (expected: >= 0)");
    }
}
