package io.tenantgateway.webhook.policy;

import static org.assertj.core.api.Assertions.assertThat;

import io.tenantgateway.webhook.quota.InMemoryQuotaLookup;
import io.tenantgateway.webhook.quota.QuotaLookup;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * HAMi v2.10's quota check for every vendor with a memory or core resource (spec hami-vendors.md §4 and HAMi's
 * {@code GenerateResourceRequests}): what each backend counts, its memory factor, its defaults, and the annotation
 * where the agent's lookup counts what a namespace already uses. Each case sits just inside and just outside the
 * quota, so a wrong unit or default fails it.
 */
class VendorQuotaTest {
    private static final String EXCEEDED = "exceeding resource quota";

    private static Decision admit(HamiCompat compat, DeviceConfig devices, QuotaLookup quota, String resources) {
        PolicyConfig config = PolicyConfig.defaults().withCompat(compat).withEnableAscend(true).withEnableIluvatar(true);
        return new AdmissionPolicy(config, devices, quota).admit(AdmissionPolicyTest.pod(VendorRulesTest.pod(resources)),
                "ns");
    }

    private static Decision admit(QuotaLookup quota, String resources) {
        return admit(HamiCompat.V2_10, DeviceConfig.defaults(), quota, resources);
    }

    /** One quota on one resource, nothing used yet. */
    private static InMemoryQuotaLookup quota(String resource, long limit) {
        return new InMemoryQuotaLookup().put("ns", resource, limit, 0);
    }

    private static void assertFits(Decision decision) {
        assertThat(decision.outcome()).as(decision.message()).isEqualTo(Decision.Outcome.ALLOWED);
    }

    private static void assertExceeds(Decision decision) {
        assertThat(decision.outcome()).isEqualTo(Decision.Outcome.DENIED);
        assertThat(decision.code()).isEqualTo(403);
        assertThat(decision.message()).isEqualTo(EXCEEDED);
    }

    @Test
    void hygonCountsMemoryTimesItsConfiguredFactorAnd100CoresWithoutACoreLimit() {
        String twoBy500 = "{'limits':{'hygon.com/dcunum':'2','hygon.com/dcumem':'500'}}";
        assertFits(admit(quota("hygon.com/dcumem", 1000), twoBy500));
        assertExceeds(admit(quota("hygon.com/dcumem", 999), twoBy500));
        DeviceConfig factor2 = DeviceConfig.parse("hygon:\n  resourceCountName: hygon.com/dcunum\n"
                + "  resourceMemoryName: hygon.com/dcumem\n  resourceCoreName: hygon.com/dcucores\n"
                + "  memoryFactor: 2\n", "t");
        // 500 x 2 MiB x 2 devices = 2000 MiB against 1000 x 2
        assertFits(admit(HamiCompat.V2_10, factor2, quota("hygon.com/dcumem", 1000), twoBy500));
        assertExceeds(admit(HamiCompat.V2_10, factor2, quota("hygon.com/dcumem", 999), twoBy500));
        assertExceeds(admit(quota("hygon.com/dcucores", 199), "{'limits':{'hygon.com/dcunum':'2'}}"));
        assertFits(admit(quota("hygon.com/dcucores", 200), "{'limits':{'hygon.com/dcunum':'2'}}"));
    }

    @Test
    void cambriconCountsVmemoryIn256MiBUnitsAnd100CoresWithoutACoreLimit() {
        String four = "{'limits':{'cambricon.com/vmlu':'1','cambricon.com/mlu.smlu.vmemory':'4'}}";
        assertFits(admit(quota("cambricon.com/mlu.smlu.vmemory", 4), four));
        assertExceeds(admit(quota("cambricon.com/mlu.smlu.vmemory", 3), four));
        assertExceeds(admit(quota("cambricon.com/mlu.smlu.vcore", 99), "{'limits':{'cambricon.com/vmlu':'1'}}"));
    }

    @Test
    void mthreadsCountsTheContainersTotalsIn512MiBUnits() {
        // count 2: the webhook sets sgpu-memory 192 and sgpu-core 32 for the container, 96 and 16 per device
        String two = "{'limits':{'mthreads.com/vgpu':'2'}}";
        assertFits(admit(quota("mthreads.com/sgpu-memory", 192), two));
        assertExceeds(admit(quota("mthreads.com/sgpu-memory", 191), two));
        assertFits(admit(quota("mthreads.com/sgpu-core", 32), two));
        assertExceeds(admit(quota("mthreads.com/sgpu-core", 31), two));
        String eight = "{'limits':{'mthreads.com/vgpu':'1','mthreads.com/sgpu-memory':'8'}}";
        assertFits(admit(quota("mthreads.com/sgpu-memory", 8), eight));
        assertExceeds(admit(quota("mthreads.com/sgpu-memory", 7), eight));
    }

    @Test
    void iluvatarCountsVmemPerDeviceIn256MiBUnits() {
        String twoBy4 = "{'limits':{'iluvatar.ai/MR-V100-vgpu':'2','iluvatar.ai/MR-V100.vMem':'4'}}";
        assertFits(admit(quota("iluvatar.ai/MR-V100.vMem", 8), twoBy4));
        assertExceeds(admit(quota("iluvatar.ai/MR-V100.vMem", 7), twoBy4));
        // count 2: the webhook sets vCore 200 for the container, counted per device: 400
        assertExceeds(admit(quota("iluvatar.ai/MR-V100.vCore", 399), twoBy4));
        assertFits(admit(quota("iluvatar.ai/MR-V100.vCore", 400), twoBy4));
    }

    @Test
    void metaxSgpuReadsABareVmemoryAsGibAndOneWithAUnitAsBytes() {
        String bare = "{'limits':{'metax-tech.com/sgpu':'1','metax-tech.com/vmemory':'4'}}";
        assertFits(admit(quota("metax-tech.com/vmemory", 4), bare));
        assertExceeds(admit(quota("metax-tech.com/vmemory", 3), bare));
        String gi = "{'limits':{'metax-tech.com/sgpu':'2','metax-tech.com/vmemory':'4Gi'}}";
        assertFits(admit(quota("metax-tech.com/vmemory", 8), gi));
        assertExceeds(admit(quota("metax-tech.com/vmemory", 7), gi));
        assertExceeds(admit(quota("metax-tech.com/vcore", 99), "{'limits':{'metax-tech.com/sgpu':'1'}}"));
        assertFits(admit(quota("metax-tech.com/vcore", 99), "{'requests':{'metax-tech.com/sgpu':'1'}}"));
    }

    @Test
    void enflameDrsSlicesCountAsMemoryAndSharesAsGiven() {
        assertExceeds(admit(quota("enflame.com/gcu-memory", 2), "{'limits':{'enflame.com/drs-gcu':'3'}}"));
        assertFits(admit(quota("enflame.com/gcu-memory", 3), "{'limits':{'enflame.com/drs-gcu':'3'}}"));
        String shares = "{'limits':{'enflame.com/gcu-memory':'10','enflame.com/gcu-core':'50'}}";
        assertExceeds(admit(quota("enflame.com/gcu-core", 49), shares));
        assertFits(admit(quota("enflame.com/gcu-core", 50), shares));
    }

    @Test
    void amdCountsMemoryPerDeviceAnd100CoresWithoutACoreLimit() {
        String two = "{'limits':{'amd.com/gpu':'2','amd.com/gpumem':'1000'}}";
        assertFits(admit(quota("amd.com/gpumem", 2000), two));
        assertExceeds(admit(quota("amd.com/gpumem", 1999), two));
        assertExceeds(admit(quota("amd.com/gpucores", 199), two));
    }

    @Test
    void awsNeuronCountsCoresOfWholeDevicesOrAsAsked() {
        assertExceeds(admit(quota("aws.amazon.com/neuroncore", 3), "{'limits':{'aws.amazon.com/neuron':'2'}}"));
        assertFits(admit(quota("aws.amazon.com/neuroncore", 4), "{'limits':{'aws.amazon.com/neuron':'2'}}"));
        assertFits(admit(quota("aws.amazon.com/neuroncore", 1), "{'limits':{'aws.amazon.com/neuroncore':'1'}}"));
        assertExceeds(admit(quota("aws.amazon.com/neuroncore", 3), "{'limits':{'aws.amazon.com/neuroncore':'4'}}"));
    }

    @Test
    void anExplicitZeroBlocksEveryVendorInV210Only() {
        String dcu = "{'limits':{'hygon.com/dcunum':'1','hygon.com/dcumem':'1'}}";
        assertExceeds(admit(quota("hygon.com/dcumem", 0), dcu));
        assertFits(admit(HamiCompat.V2_9, DeviceConfig.defaults(), quota("hygon.com/dcumem", 0), dcu));
    }

    @Test
    void usedComesFromTheLookupAndAddsToTheRequest() {
        String one = "{'limits':{'mthreads.com/vgpu':'1','mthreads.com/sgpu-memory':'8'}}";
        assertFits(admit(new InMemoryQuotaLookup().put("ns", "mthreads.com/sgpu-memory", 16, 4096), one));
        assertExceeds(admit(new InMemoryQuotaLookup().put("ns", "mthreads.com/sgpu-memory", 16, 4097), one));
    }

    @Test
    void eachVendorAsksTheLookupWithItsAllocatedDevicesAnnotation() {
        List<QuotaLookup.Resource> asked = new ArrayList<>();
        QuotaLookup recording = (namespace, resource) -> {
            asked.add(resource);
            return Optional.empty();
        };
        for (String resources : List.of("{'limits':{'nvidia.com/gpu':'1','nvidia.com/gpumem':'1'}}",
                "{'limits':{'hygon.com/dcunum':'1'}}", "{'limits':{'cambricon.com/vmlu':'1'}}",
                "{'limits':{'mthreads.com/vgpu':'1'}}", "{'limits':{'metax-tech.com/sgpu':'1'}}",
                "{'limits':{'kunlunxin.com/vxpu':'1'}}", "{'limits':{'enflame.com/drs-gcu':'1'}}",
                "{'limits':{'amd.com/gpu':'1'}}", "{'limits':{'aws.amazon.com/neuron':'1'}}",
                "{'limits':{'huawei.com/Ascend910B4':'1'},'requests':{}}",
                "{'limits':{'iluvatar.ai/BI-V150-vgpu':'1','iluvatar.ai/BI-V150.vMem':'1'}}")) {
            assertFits(admit(recording, resources));
        }
        assertThat(asked.stream().map(r -> r.name() + " " + r.measure() + " " + r.allocatedAnnotation()).distinct())
                .contains("nvidia.com/gpumem MEMORY_MIB hami.io/vgpu-devices-allocated",
                        "hygon.com/dcucores CORES hami.io/dcu-devices-allocated",
                        "cambricon.com/mlu.smlu.vcore CORES hami.io/cambricon-mlu-devices-allocated",
                        "mthreads.com/sgpu-memory MEMORY_MIB hami.io/mthreads-vgpu-devices-allocated",
                        "metax-tech.com/vcore CORES hami.io/metax-sgpu-devices-allocated",
                        "kunlunxin.com/vxpu-memory MEMORY_MIB hami.io/xpu-devices-allocated",
                        "enflame.com/gcu-memory MEMORY_MIB hami.io/enflame-vgpu-devices-allocated",
                        "amd.com/gpucores CORES hami.io/amd-devices-allocated",
                        "aws.amazon.com/neuroncore CORES hami.io/aws-neuron-devices-allocated",
                        "huawei.com/Ascend910B4-memory MEMORY_MIB hami.io/Ascend910B4-devices-allocated",
                        "iluvatar.ai/BI-V150.vMem MEMORY_MIB hami.io/BI-V150-devices-allocated");
    }
}
