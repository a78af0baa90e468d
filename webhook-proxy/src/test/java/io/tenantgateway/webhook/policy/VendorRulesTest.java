package io.tenantgateway.webhook.policy;

import static org.assertj.core.api.Assertions.assertThat;

import io.tenantgateway.hami.HamiRelease;
import io.tenantgateway.webhook.quota.InMemoryQuotaLookup;
import io.tenantgateway.webhook.quota.QuotaLookup;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import tools.jackson.databind.JsonNode;

/**
 * HAMi's rules for every vendor other than NVIDIA (spec hami-vendors.md §1, §3, §4), pinned down in both compat
 * modes: found or not, each mutation, each error, each denial. Every case admits through one seam,
 * {@link #admit(PolicyConfig, DeviceConfig, QuotaLookup, JsonNode)}: here the pure policy; VendorRulesOverTlsIT runs
 * the same methods through the real webhook over HTTPS.
 */
class VendorRulesTest {
    static final HamiRelease V210 = HamiRelease.V2_10;
    static final HamiRelease V29 = HamiRelease.V2_9;
    /** The namespace every pod is admitted in. */
    static final String NAMESPACE = "ns";
    /** The ResourceQuotas of {@link #NAMESPACE} for the quota rules (§4); never changed once built. */
    static final InMemoryQuotaLookup QUOTA = new InMemoryQuotaLookup()
            .put(NAMESPACE, "hygon.com/dcumem", 4000, 1000)
            .put(NAMESPACE, "cambricon.com/mlu.smlu.vcore", 100, 50)
            .put(NAMESPACE, "huawei.com/Ascend910B4-memory", 40000, 10000)
            .put(NAMESPACE, "kunlunxin.com/vxpu-memory", 100000, 0);

    /**
     * The one seam every case goes through: admits {@code pod} in {@code namespace} with this configuration. Here
     * the pure policy; overridden to go over HTTPS. {@code quota} is {@link QuotaLookup#NONE}, {@link #QUOTA},
     * {@link #VENDOR_QUOTAS} or a recording lookup.
     */
    Decision admit(PolicyConfig config, DeviceConfig devices, QuotaLookup quota, JsonNode pod, String namespace) {
        return new AdmissionPolicy(config, devices, quota).admit(pod, namespace);
    }

    final Decision admit(PolicyConfig config, DeviceConfig devices, QuotaLookup quota, JsonNode pod) {
        return admit(config, devices, quota, pod, NAMESPACE);
    }

    final Decision admit(HamiRelease compat, DeviceConfig devices, boolean ascend, boolean iluvatar, String pod) {
        PolicyConfig config = PolicyConfig.defaults().withCompat(compat).withEnableAscend(ascend)
                .withEnableIluvatar(iluvatar);
        return admit(config, devices, QuotaLookup.NONE, json(pod));
    }

    final Decision admit(HamiRelease compat, String pod) {
        return admit(compat, DeviceConfig.defaults(), true, true, pod);
    }

    /** A pod with one container {@code c} whose resources are {@code resources} (single-quoted JSON). */
    static String pod(String resources) {
        return "{'metadata':{'name':'p'},'spec':{'containers':[{'name':'c','resources':" + resources + "}]}}";
    }

    static String podWithAnnotations(String annotations, String resources) {
        return "{'metadata':{'name':'p','annotations':" + annotations + "},'spec':{'containers':[{'name':'c',"
                + "'resources':" + resources + "}]}}";
    }

    static JsonNode json(String text) {
        return AdmissionPolicyTest.pod(text);
    }

    static JsonNode container(Decision decision) {
        return decision.mutated().path("spec").path("containers").get(0);
    }

    static void assertFound(Decision decision) {
        assertThat(decision.outcome()).as(decision.message()).isEqualTo(Decision.Outcome.ALLOWED);
        assertThat(decision.mutated().path("spec").path("schedulerName").asString()).isEqualTo("hami-scheduler");
    }

    static void assertNotFound(Decision decision, String pod) {
        assertThat(decision.outcome()).as(decision.message()).isEqualTo(Decision.Outcome.ALLOWED);
        assertThat(decision.mutated()).as("no patch").isEqualTo(json(pod));
    }

    /** HAMi's vendor error: {@code allowed:false}, code 500, the error text, no reason, no patch. */
    static void assertError(Decision decision, String message) {
        assertThat(decision.outcome()).as(decision.message()).isEqualTo(Decision.Outcome.ERRORED);
        assertThat(decision.code()).isEqualTo(500);
        assertThat(decision.reason()).isEmpty();
        assertThat(decision.message()).isEqualTo(message);
        assertThat(decision.mutated()).isNull();
    }

    /** A denial: {@code allowed:false}, code 403, reason Forbidden, no patch. */
    static void assertDenied(Decision decision, String message) {
        assertThat(decision.outcome()).as(decision.message()).isEqualTo(Decision.Outcome.DENIED);
        assertThat(decision.code()).isEqualTo(403);
        assertThat(decision.reason()).isEqualTo("Forbidden");
        assertThat(decision.message()).isEqualTo(message);
        assertThat(decision.mutated()).isNull();
    }

    // ---- 3.1 detect-only backends ----

    @ParameterizedTest
    @EnumSource(HamiRelease.class)
    void detectOnlyBackendsFindTheirCountInLimitsOnly(HamiRelease compat) {
        for (String name : new String[] {"hygon.com/dcunum", "cambricon.com/vmlu", "metax-tech.com/gpu",
            "kunlunxin.com/xpu", "enflame.com/gcu", "vastaitech.com/va", "aws.amazon.com/neuron", "amd.com/gpu"}) {
            String pod = pod("{'limits':{'" + name + "':'1'}}");
            Decision decision = admit(compat, pod);
            assertFound(decision);
            assertThat(container(decision)).as(name + ": no mutation").isEqualTo(json(pod).path("spec")
                    .path("containers").get(0));
            String requestsOnly = pod("{'requests':{'" + name + "':'1'}}");
            if (!name.startsWith("aws")) { // v2.10 AWS Neuron reads requests too (3.8)
                assertNotFound(admit(compat, requestsOnly), requestsOnly);
            }
        }
        String memoryOnly = pod("{'limits':{'hygon.com/dcumem':'1000','cambricon.com/mlu.smlu.vcore':'10'}}");
        assertNotFound(admit(compat, memoryOnly), memoryOnly);
    }

    @Test
    void birenIsAV210Backend() {
        String pod = pod("{'limits':{'birentech.com/gpu':'1'}}");
        assertFound(admit(V210, pod));
        assertNotFound(admit(V29, pod), pod);
    }

    @Test
    void v29AwsNeuronAndAmdDetectByTheirSecondNameToo() {
        assertFound(admit(V29, pod("{'limits':{'aws.amazon.com/neuroncore':'3'}}")));
        assertFound(admit(V29, pod("{'limits':{'amd.com/gpumem':'1024'}}")));
        String cores = pod("{'limits':{'amd.com/gpucores':'10'}}");
        assertNotFound(admit(V29, cores), cores);
    }

    @Test
    void aFileWithoutAVendorsBlockLeavesThatVendorMatchingNothing() {
        DeviceConfig nvidiaOnly = DeviceConfig.parse("nvidia: {}\n", "test");
        String pod = pod("{'limits':{'hygon.com/dcunum':'1','mthreads.com/vgpu':'1'}}");
        assertNotFound(admit(V210, nvidiaOnly, true, true, pod), pod);
        DeviceConfig renamed = DeviceConfig.parse("hygon:\n  resourceCountName: example.com/dcu\n", "test");
        assertFound(admit(V210, renamed, false, false, pod("{'limits':{'example.com/dcu':'1'}}")));
    }

    // ---- 3.2 Iluvatar ----

    @ParameterizedTest
    @EnumSource(HamiRelease.class)
    void iluvatarCoresForSeveralDevicesAndTheContainerNameEnv(HamiRelease compat) {
        Decision two = admit(compat, pod("{'limits':{'iluvatar.ai/BI-V150-vgpu':'2','iluvatar.ai/BI-V150.vCore':'5'}}"));
        assertFound(two);
        assertThat(container(two)).isEqualTo(json("{'name':'c','resources':{'limits':{'iluvatar.ai/BI-V150-vgpu':'2',"
                + "'iluvatar.ai/BI-V150.vCore':'200'}},'env':[{'name':'SOL_CONTINER_NAME','value':'c'}]}"));

        Decision one = admit(compat, "{'spec':{'containers':[{'name':'c','env':[{'name':'SOL_CONTINER_NAME',"
                + "'value':'x'}],'resources':{'limits':{'iluvatar.ai/MR-V100-vgpu':'1'}}}]}}");
        assertFound(one);
        assertThat(container(one).path("env")).as("kept as is").hasSize(1);
        assertThat(container(one).path("resources").path("limits").has("iluvatar.ai/MR-V100.vCore")).isFalse();
    }

    @Test
    void iluvatarAndAscendNeedTheirFlags() {
        String pod = pod("{'limits':{'iluvatar.ai/MR-V50-vgpu':'1','huawei.com/Ascend910B4':'1'}}");
        assertNotFound(admit(V210, DeviceConfig.defaults(), false, false, pod), pod);
    }

    // ---- 3.3 Mthreads ----

    @Test
    void mthreadsSeveralDevicesGetCoresMemoryAndTheAnnotation() {
        for (HamiRelease compat : HamiRelease.values()) {
            Decision decision = admit(compat, podWithAnnotations("{}", "{'limits':{'mthreads.com/vgpu':'2',"
                    + "'mthreads.com/sgpu-memory':'8'}}"));
            assertFound(decision);
            assertThat(container(decision).path("resources").path("limits")).isEqualTo(json("{'mthreads.com/vgpu':'2',"
                    + "'mthreads.com/sgpu-memory':'192','mthreads.com/sgpu-core':'32'}"));
            assertThat(decision.mutated().path("metadata").path("annotations").path("mthreads.com/request-gpu-num")
                    .asString()).isEqualTo("2");
        }
        Decision noAnnotations = admit(V210, pod("{'limits':{'mthreads.com/vgpu':'3'}}"));
        assertThat(noAnnotations.mutated().path("metadata").path("annotations").path("mthreads.com/request-gpu-num")
                .asString()).isEqualTo("3");
        assertError(admit(V29, pod("{'limits':{'mthreads.com/vgpu':'3'}}")),
                "panic: assignment to entry in nil map [recovered]");
    }

    @ParameterizedTest
    @EnumSource(HamiRelease.class)
    void mthreadsOneDevice(HamiRelease compat) {
        Decision defaults = admit(compat, pod("{'limits':{'mthreads.com/vgpu':'1'}}"));
        assertFound(defaults);
        assertThat(container(defaults).path("resources").path("limits")).isEqualTo(json("{'mthreads.com/vgpu':'1',"
                + "'mthreads.com/sgpu-core':'16','mthreads.com/sgpu-memory':'96'}"));
        assertThat(defaults.mutated().path("metadata").has("annotations")).isFalse();

        Decision valid = admit(compat, pod("{'limits':{'mthreads.com/vgpu':'1','mthreads.com/sgpu-memory':'8'}}"));
        assertFound(valid);
        assertThat(container(valid).path("resources").path("limits")).isEqualTo(json("{'mthreads.com/vgpu':'1',"
                + "'mthreads.com/sgpu-memory':'8'}"));

        String message = compat == V29
                ? "sGPU memory request value is invalid, valid values are [1, 2, 4, 8, 16, 32, 64, 96]"
                : "sGPU memory request value is invalid, valid values are [2, 4, 8, 16, 32, 64, 96]";
        assertError(admit(compat, pod("{'limits':{'mthreads.com/vgpu':'1','mthreads.com/sgpu-memory':'1'}}")), message);
        assertError(admit(compat, pod("{'limits':{'mthreads.com/vgpu':'1','mthreads.com/sgpu-memory':'12'}}")), message);
    }

    @Test
    void mthreadsV210ReadsRequestsAndRejectsZero() {
        Decision requests = admit(V210, pod("{'requests':{'mthreads.com/vgpu':'1'}}"));
        assertFound(requests);
        assertThat(container(requests).path("resources").path("limits")).isEqualTo(json(
                "{'mthreads.com/sgpu-core':'16','mthreads.com/sgpu-memory':'96'}"));
        String requestsOnly = pod("{'requests':{'mthreads.com/vgpu':'1'}}");
        assertNotFound(admit(V29, requestsOnly), requestsOnly);

        assertError(admit(V210, pod("{'limits':{'mthreads.com/vgpu':'0'}}")), "mthreads.com/vgpu must be greater than 0");
        Decision zeroV29 = admit(V29, pod("{'limits':{'mthreads.com/vgpu':'0'}}"));
        assertFound(zeroV29);
        assertThat(container(zeroV29).path("resources").path("limits")).isEqualTo(json("{'mthreads.com/vgpu':'0',"
                + "'mthreads.com/sgpu-core':'0','mthreads.com/sgpu-memory':'0'}"));
    }

    // ---- 3.4 Ascend ----

    @ParameterizedTest
    @EnumSource(HamiRelease.class)
    void ascendMemoryRoundsUpToATemplateAndLandsInLimitsAndRequests(HamiRelease compat) {
        Decision decision = admit(compat, pod("{'limits':{'huawei.com/Ascend310P':'1','huawei.com/Ascend310P-memory':"
                + "'4000'},'requests':{'huawei.com/Ascend310P':'1'}}"));
        assertFound(decision);
        assertThat(container(decision).path("resources")).isEqualTo(json("{'limits':{'huawei.com/Ascend310P':'1',"
                + "'huawei.com/Ascend310P-memory':'6144'},'requests':{'huawei.com/Ascend310P':'1',"
                + "'huawei.com/Ascend310P-memory':'6144'}}"));

        Decision whole = admit(compat, pod("{'limits':{'huawei.com/Ascend310P':'1','huawei.com/Ascend310P-memory':"
                + "'20000'},'requests':{}}"));
        assertThat(container(whole).path("resources").path("limits").path("huawei.com/Ascend310P-memory").asString())
                .as("above every template, within capacity: memoryAllocatable").isEqualTo("21527");
        Decision none = admit(compat, pod("{'limits':{'huawei.com/Ascend910B4':'2'},'requests':{}}"));
        assertThat(container(none).path("resources").path("requests").path("huawei.com/Ascend910B4-memory")
                .asString()).isEqualTo("32768");

        assertError(admit(compat, pod("{'limits':{'huawei.com/Ascend310P':'1','huawei.com/Ascend310P-memory':'30000'},"
                + "'requests':{}}")), "huawei.com/Ascend310P-memory 30000 is invalid");
        assertError(admit(compat, pod("{'limits':{'huawei.com/Ascend910B4':'2','huawei.com/Ascend910B4-memory':'8192'},"
                + "'requests':{}}")), compat == V29 ? "vNPU nor supported for multiple devices"
                        : "vNPU not supported for multiple devices");
    }

    @Test
    void ascendMemoryQuantityIsItsIntegerValue() {
        assertError(admit(V210, pod("{'limits':{'huawei.com/Ascend910B4':'1','huawei.com/Ascend910B4-memory':'8Gi'}}")),
                "huawei.com/Ascend910B4-memory 8589934592 is invalid");
    }

    @Test
    void ascendMissingRequestsAreCreatedInV210AndPanicInV29() {
        String pod = pod("{'limits':{'huawei.com/Ascend910B4':'1'}}");
        assertThat(container(admit(V210, pod)).path("resources").path("requests")).isEqualTo(json(
                "{'huawei.com/Ascend910B4-memory':'32768'}"));
        assertError(admit(V29, pod), "panic: assignment to entry in nil map [recovered]");
    }

    @Test
    void ascendHamiCoreMode() {
        String annotations = "{'huawei.com/vnpu-mode':'hami-core'}";
        String resources = "{'limits':{'huawei.com/Ascend910B4':'2','huawei.com/Ascend910B4-memory':'5000',"
                + "'huawei.com/Ascend910B4-core':'20'},'requests':{}}";
        Decision v210 = admit(V210, podWithAnnotations(annotations, resources));
        assertFound(v210);
        assertThat(container(v210).path("resources").path("limits").path("huawei.com/Ascend910B4-memory").asString())
                .as("hami-core: exactly what was asked").isEqualTo("5000");
        assertThat(container(v210).has("lifecycle")).isFalse();

        Decision v29 = admit(V29, podWithAnnotations(annotations, resources));
        assertFound(v29);
        assertThat(container(v29).path("lifecycle")).isEqualTo(json("{'postStart':{'exec':{'command':['bash','-c',"
                + "'export RUST_LOG=info\\n/hami-vnpu-core/limiter > /tmp/limiter_manager.log 2>&1 &']}}}"));
        Decision kept = admit(V29, "{'metadata':{'annotations':" + annotations + "},'spec':{'containers':[{'name':"
                + "'c','lifecycle':{'postStart':{'exec':{'command':['true']}}},'resources':" + resources + "}]}}");
        assertThat(container(kept).path("lifecycle").path("postStart").path("exec").path("command").get(0).asString())
                .isEqualTo("true");
    }

    @Test
    void ascendCoresNeedHamiCoreInV210() {
        String pod = pod("{'limits':{'huawei.com/Ascend910B4':'1','huawei.com/Ascend910B4-core':'10'},'requests':{}}");
        assertError(admit(V210, pod), "huawei.com/Ascend910B4-core is only supported in hami-core (soft split) mode");
        assertFound(admit(V29, pod));
        String requested = pod("{'limits':{'huawei.com/Ascend910B4':'1'},'requests':{'huawei.com/Ascend910B4-core':'1'}}");
        assertError(admit(V210, requested),
                "huawei.com/Ascend910B4-core is only supported in hami-core (soft split) mode");
    }

    @ParameterizedTest
    @EnumSource(HamiRelease.class)
    void ascend910cCountsComeInPairs(HamiRelease compat) {
        Decision one = admit(compat, pod("{'limits':{'huawei.com/Ascend910C':'1'},'requests':{'huawei.com/Ascend910C':"
                + "'1'}}"));
        assertFound(one);
        assertThat(container(one).path("resources")).isEqualTo(json("{'limits':{'huawei.com/Ascend910C':'2',"
                + "'huawei.com/Ascend910C-memory':'65536'},'requests':{'huawei.com/Ascend910C':'2',"
                + "'huawei.com/Ascend910C-memory':'65536'}}"));
        assertError(admit(compat, pod("{'limits':{'huawei.com/Ascend910C':'3'},'requests':{}}")),
                "Ascend910C device request must be 1 or 2*n, got 3");
        assertFound(admit(compat, pod("{'limits':{'huawei.com/Ascend910C':'4'},'requests':{}}")));
    }

    @Test
    void ascend910cWithoutSuperPodIsNotRoundedInV210() {
        DeviceConfig devices = DeviceConfig.parse("""
                vnpus:
                - commonWord: Ascend910C
                  resourceName: huawei.com/Ascend910C
                  resourceMemoryName: huawei.com/Ascend910C-memory
                  memoryAllocatable: 65536
                  memoryCapacity: 65536
                """, "test");
        Decision decision = admit(V210, devices, true, false, pod("{'limits':{'huawei.com/Ascend910C':'3'},'requests':{}}"));
        assertFound(decision);
        assertError(admit(V29, devices, true, false, pod("{'limits':{'huawei.com/Ascend910C':'3'},'requests':{}}")),
                "Ascend910C device request must be 1 or 2*n, got 3");
    }

    @Test
    void ascendOverwriteEnvHidesEveryUnusedChipAndRuntimeClassIsSetOnce() {
        DeviceConfig devices = DeviceConfig.parse("""
                vnpus:
                  configs:
                  - commonWord: Ascend910B4
                    resourceName: huawei.com/Ascend910B4
                    resourceMemoryName: huawei.com/Ascend910B4-memory
                    memoryAllocatable: 32768
                    memoryCapacity: 32768
                    runtimeClassName: ascend
                    overwriteEnv: true
                  - commonWord: Ascend310P
                    resourceName: huawei.com/Ascend310P
                    memoryAllocatable: 21527
                    memoryCapacity: 24576
                    overwriteEnv: true
                  - commonWord: Ascend910A
                    resourceName: huawei.com/Ascend910A
                """, "test");
        Decision plain = admit(V210, devices, true, false, pod("{}"));
        assertNotFoundButMutated(plain);
        assertThat(container(plain).path("env")).as("one entry per chip with overwriteEnv, no value").isEqualTo(json(
                "[{'name':'ASCEND_VISIBLE_DEVICES'},{'name':'ASCEND_VISIBLE_DEVICES'}]"));

        Decision uses = admit(V210, devices, true, false, pod("{'limits':{'huawei.com/Ascend910B4':'1'},'requests':{}}"));
        assertFound(uses);
        assertThat(uses.mutated().path("spec").path("runtimeClassName").asString()).isEqualTo("ascend");
        assertThat(container(uses).path("env")).isEqualTo(json("[{'name':'ASCEND_VISIBLE_DEVICES'}]"));
        Decision own = admit(V210, devices, true, false, "{'spec':{'runtimeClassName':'mine','containers':[{'name':'c',"
                + "'resources':{'limits':{'huawei.com/Ascend910B4':'1'},'requests':{}}}]}}");
        assertThat(own.mutated().path("spec").path("runtimeClassName").asString()).isEqualTo("mine");
    }

    private static void assertNotFoundButMutated(Decision decision) {
        assertThat(decision.outcome()).isEqualTo(Decision.Outcome.ALLOWED);
        assertThat(decision.mutated().path("spec").has("schedulerName")).isFalse();
    }

    // ---- 3.5 Metax sGPU ----

    @ParameterizedTest
    @EnumSource(HamiRelease.class)
    void metaxSgpuAnnotations(HamiRelease compat) {
        String sgpu = "{'limits':{'metax-tech.com/sgpu':'1'}}";
        Decision plain = admit(compat, pod(sgpu));
        assertFound(plain);
        assertThat(plain.mutated().path("metadata").path("annotations")).isEqualTo(json(
                "{'metax-tech.com/sgpu-qos-policy':'best-effort'}"));
        Decision online = admit(compat, podWithAnnotations("{'metax-tech.com/sgpu-app-class':'online',"
                + "'metax-tech.com/sgpu-qos-policy':'anything'}", sgpu));
        assertFound(online);
        assertThat(online.mutated().path("metadata").path("annotations").size()).isEqualTo(2);
        Decision offline = admit(compat, podWithAnnotations("{'metax-tech.com/sgpu-app-class':'offline'}", sgpu));
        assertThat(offline.mutated().path("metadata").path("annotations").path("metax-tech.com/sgpu-qos-policy")
                .asString()).isEqualTo("best-effort");
        Decision kept = admit(compat, podWithAnnotations("{'metax-tech.com/sgpu-qos-policy':'fixed-share'}", sgpu));
        assertThat(kept.mutated().path("metadata").path("annotations").path("metax-tech.com/sgpu-qos-policy")
                .asString()).isEqualTo("fixed-share");

        assertError(admit(compat, podWithAnnotations("{'metax-tech.com/sgpu-app-class':'batch'}", sgpu)),
                "metax-tech.com/sgpu-app-class must be set one of [online, offline]");
        assertError(admit(compat, podWithAnnotations("{'metax-tech.com/sgpu-app-class':'online'}",
                "{'limits':{'metax-tech.com/sgpu':'2'}}")), "app-class pod must request single device");
        assertError(admit(compat, podWithAnnotations("{'metax-tech.com/sgpu-qos-policy':'gold'}", sgpu)),
                "metax-tech.com/sgpu-qos-policy must be set one of [best-effort, fixed-share, burst-share]");
    }

    // ---- 3.6 Kunlun vXPU ----

    @Test
    void kunlunVxpuMemoryIsTrimmed() {
        for (long[] pair : new long[][] {{1, 24576}, {24576, 24576}, {24577, 49152}, {49152, 49152}, {60000, 98304}}) {
            Decision decision = admit(V210, pod("{'limits':{'kunlunxin.com/vxpu':'1','kunlunxin.com/vxpu-memory':'"
                    + pair[0] + "'}}"));
            assertFound(decision);
            assertThat(container(decision).path("resources")).isEqualTo(json("{'limits':{'kunlunxin.com/vxpu':'1',"
                    + "'kunlunxin.com/vxpu-memory':'" + pair[1] + "'},'requests':{'kunlunxin.com/vxpu-memory':'"
                    + pair[1] + "'}}"));
        }
        String noMemory = pod("{'limits':{'kunlunxin.com/vxpu':'1'}}");
        assertThat(container(admit(V29, noMemory))).isEqualTo(json(noMemory).path("spec").path("containers").get(0));
        assertError(admit(V29, pod("{'limits':{'kunlunxin.com/vxpu':'1','kunlunxin.com/vxpu-memory':'1'}}")),
                "panic: assignment to entry in nil map [recovered]");
        assertFound(admit(V29, pod("{'limits':{'kunlunxin.com/vxpu':'1','kunlunxin.com/vxpu-memory':'1'},"
                + "'requests':{}}")));
    }

    // ---- 3.7 Enflame shared ----

    @Test
    void enflameDrsV210() {
        Decision drs = admit(V210, pod("{'requests':{'enflame.com/drs-gcu':'2'}}"));
        assertFound(drs);
        assertThat(container(drs).path("resources")).isEqualTo(json("{'requests':{'enflame.com/drs-gcu':'2'},"
                + "'limits':{'enflame.com/drs-gcu':'2'}}"));
        assertError(admit(V210, pod("{'limits':{'enflame.com/drs-gcu':'0'}}")), "enflame.com/drs-gcu must be greater than 0");

        Decision shares = admit(V210, pod("{'limits':{'enflame.com/gcu-memory':'8','enflame.com/gcu-core':'50'}}"));
        assertFound(shares);
        assertThat(container(shares).path("resources").path("requests")).isEqualTo(json(
                "{'enflame.com/gcu-memory':'8','enflame.com/gcu-core':'50'}"));
        assertError(admit(V210, pod("{'limits':{'enflame.com/gcu-memory':'0'}}")),
                "enflame.com/gcu-memory must be greater than 0");
        assertError(admit(V210, pod("{'limits':{'enflame.com/gcu-core':'101'}}")),
                "enflame.com/gcu-core must be in range (0,100]");
        String legacy = pod("{'limits':{'enflame.com/vgcu':'1'}}");
        assertNotFound(admit(V210, legacy), legacy);
        DeviceConfig noNames = DeviceConfig.parse("enflame: {}\n", "test");
        assertFound(admit(V210, noNames, false, false, pod("{'limits':{'enflame.com/drs-gcu':'1'}}")));
    }

    @Test
    void enflameVgcuV29() {
        Decision several = admit(V29, pod("{'limits':{'enflame.com/vgcu':'2'}}"));
        assertFound(several);
        assertThat(container(several).path("resources").path("limits")).isEqualTo(json("{'enflame.com/vgcu':'2',"
                + "'enflame.com/vgcu-percentage':'100','enflame.com/shared-gcu':'0'}"));
        String one = pod("{'limits':{'enflame.com/vgcu':'1','enflame.com/vgcu-percentage':'30'}}");
        Decision unchanged = admit(V29, one);
        assertFound(unchanged);
        assertThat(container(unchanged)).as("no Enflame node registered yet: factor 0").isEqualTo(json(one).path("spec")
                .path("containers").get(0));
        String drs = pod("{'limits':{'enflame.com/drs-gcu':'1'}}");
        assertNotFound(admit(V29, drs), drs);
    }

    /** Policy-only: a shared-GCU factor of 4, as if an Enflame node had registered (the server always builds 0). */
    @Test
    void enflameVgcuV29WithARegisteredNode() {
        EnflameSharedVendor vendor = new EnflameSharedVendor(DeviceConfig.defaults().block("enflame"), V29, 4);
        AdmissionPolicy policy = new AdmissionPolicy(PolicyConfig.defaults().withCompat(V29), java.util.List.of(vendor),
                QuotaLookup.NONE);
        Decision decision = policy.admit(json(pod("{'limits':{'enflame.com/vgcu':'1','enflame.com/vgcu-percentage':"
                + "'30'},'requests':{}}")), NAMESPACE);
        assertThat(container(decision).path("resources")).isEqualTo(json("{'limits':{'enflame.com/vgcu':'1',"
                + "'enflame.com/vgcu-percentage':'50','enflame.com/shared-gcu':'2'},'requests':{"
                + "'enflame.com/vgcu-percentage':'50'}}"));
    }

    // ---- 3.8 AWS Neuron, 3.9 AMD (v2.10) ----

    @Test
    void awsNeuronV210Validates() {
        assertFound(admit(V210, pod("{'requests':{'aws.amazon.com/neuron':'1'}}")));
        assertError(admit(V210, pod("{'limits':{'aws.amazon.com/neuron':'1.5'}}")), "aws.amazon.com/neuron must be an integer");
        assertError(admit(V210, pod("{'limits':{'aws.amazon.com/neuron':'0'}}")),
                "aws.amazon.com/neuron must be greater than 0");
        assertError(admit(V210, pod("{'limits':{'aws.amazon.com/neuron':'2147483648'}}")),
                "aws.amazon.com/neuron must not exceed 2147483647");
        assertFound(admit(V210, pod("{'limits':{'aws.amazon.com/neuroncore':'1'}}")));
        assertFound(admit(V210, pod("{'limits':{'aws.amazon.com/neuroncore':'4'}}")));
        assertError(admit(V210, pod("{'limits':{'aws.amazon.com/neuroncore':'3'}}")),
                "aws.amazon.com/neuroncore must be 1 or a multiple of 2, got 3");
        assertError(admit(V210, pod("{'limits':{'aws.amazon.com/neuroncore':'4294967295'}}")),
                "aws.amazon.com/neuroncore must not exceed 4294967294");
    }

    /** Policy-only: a vendor built with one core per device (the webhook's catalog always uses two). */
    @Test
    void awsNeuronCoresNeedingMoreDevicesThanAnIntHolds() {
        AdmissionPolicy onePerDevice = new AdmissionPolicy(PolicyConfig.defaults(), java.util.List.of(
                new AwsNeuronVendor(DeviceConfig.defaults().block("awsneuron"), 1)), QuotaLookup.NONE);
        assertError(onePerDevice.admit(json(pod("{'limits':{'aws.amazon.com/neuroncore':'4294967294'}}")), NAMESPACE),
                "aws.amazon.com/neuroncore needs 4294967294 devices, which exceeds the maximum of 2147483647");
    }

    @Test
    void amdV210() {
        assertFound(admit(V210, pod("{'limits':{'amd.com/gpumem':'1024'}}")));
        assertFound(admit(V210, pod("{'limits':{'amd.com/gpucores':'10'}}")));
        assertFound(admit(V210, pod("{'limits':{'amd.com/gpu':'1','amd.com/gpucores':'100'}}")));
        assertError(admit(V210, pod("{'limits':{'amd.com/gpu':'1','amd.com/gpucores':'101'}}")),
                "amd.com/gpucores must be an integer percentage between 1 and 100");
        assertError(admit(V210, pod("{'limits':{'amd.com/gpu':'1','amd.com/gpucores':'0.5'}}")),
                "amd.com/gpucores must be an integer percentage between 1 and 100");
        assertFound(admit(V29, pod("{'limits':{'amd.com/gpu':'1','amd.com/gpucores':'101'}}")));
    }

    // ---- 4. quota ----

    /** Ascend on, Iluvatar off, HAMi's default devices, the quotas of {@link #QUOTA}. */
    final Decision admitWithQuota(HamiRelease compat, String pod) {
        return admit(PolicyConfig.defaults().withCompat(compat).withEnableAscend(true), DeviceConfig.defaults(), QUOTA,
                json(pod));
    }

    @Test
    void v210QuotaCountsOtherVendorsPerDeviceTimesCount() {
        assertFound(admitWithQuota(V210, pod("{'limits':{'hygon.com/dcunum':'1','hygon.com/dcumem':'3000'}}")));
        assertDenied(admitWithQuota(V210, pod("{'limits':{'hygon.com/dcunum':'2','hygon.com/dcumem':'2000'}}")),
                "exceeding resource quota");
        assertDenied(admitWithQuota(V210, pod("{'limits':{'cambricon.com/vmlu':'1','cambricon.com/mlu.smlu.vcore':"
                + "'60'}}")), "exceeding resource quota");
        // Ascend counts the memory the webhook set: 32768
        assertDenied(admitWithQuota(V210, pod("{'limits':{'huawei.com/Ascend910B4':'1'},'requests':{}}")),
                "exceeding resource quota");
        assertFound(admitWithQuota(V210, pod("{'limits':{'huawei.com/Ascend910B4':'1','huawei.com/Ascend910B4-memory':"
                + "'8192'},'requests':{}}")));
        // 98304 per device when none is named
        assertDenied(admitWithQuota(V210, pod("{'limits':{'kunlunxin.com/vxpu':'2'}}")), "exceeding resource quota");
        assertFound(admitWithQuota(V210, pod("{'limits':{'kunlunxin.com/vxpu':'2','kunlunxin.com/vxpu-memory':'1'},"
                + "'requests':{}}")));
    }

    /**
     * Per-case ResourceQuotas (§4 per vendor): each case admits in a namespace of its own whose one quota is set just
     * at or just under what the pod needs, so a wrong unit, factor or default fails it.
     */
    static final InMemoryQuotaLookup VENDOR_QUOTAS = new InMemoryQuotaLookup();
    private static final String EXCEEDED = "exceeding resource quota";

    /** Admits one container asking for {@code resources} where the only quota is {@code limit} on {@code resource}. */
    final Decision underQuota(HamiRelease compat, DeviceConfig devices, String resource, long limit, long used,
            String resources) {
        String namespace = (resource + "-" + limit + "-" + used).toLowerCase(java.util.Locale.ROOT)
                .replaceAll("[^a-z0-9-]", "-");
        VENDOR_QUOTAS.put(namespace, resource, limit, used);
        PolicyConfig config = PolicyConfig.defaults().withCompat(compat).withEnableAscend(true)
                .withEnableIluvatar(true);
        return admit(config, devices, VENDOR_QUOTAS, json(pod(resources)), namespace);
    }

    final Decision underQuota(String resource, long limit, String resources) {
        return underQuota(V210, DeviceConfig.defaults(), resource, limit, 0, resources);
    }

    /** The pod fits a quota of {@code limit} on {@code resource} and exceeds one of {@code limit - 1}. */
    final void assertQuotaIsExactly(String resource, long limit, String resources) {
        assertFound(underQuota(resource, limit, resources));
        assertDenied(underQuota(resource, limit - 1, resources), EXCEEDED);
    }

    @Test
    void quotaHygonCountsMemoryTimesItsConfiguredFactorAnd100CoresWithoutACoreLimit() {
        String twoBy500 = "{'limits':{'hygon.com/dcunum':'2','hygon.com/dcumem':'500'}}";
        assertQuotaIsExactly("hygon.com/dcumem", 1000, twoBy500);
        DeviceConfig factor2 = DeviceConfig.parse("hygon:\n  resourceCountName: hygon.com/dcunum\n"
                + "  resourceMemoryName: hygon.com/dcumem\n  resourceCoreName: hygon.com/dcucores\n"
                + "  memoryFactor: 2\n", "t");
        // 500 x 2 MiB per device x 2 devices = 2000 MiB, against the quota x 2
        assertFound(underQuota(V210, factor2, "hygon.com/dcumem", 1000, 0, twoBy500));
        assertDenied(underQuota(V210, factor2, "hygon.com/dcumem", 999, 0, twoBy500), EXCEEDED);
        assertQuotaIsExactly("hygon.com/dcucores", 200, "{'limits':{'hygon.com/dcunum':'2'}}");
    }

    @Test
    void quotaCambriconCountsVmemoryIn256MiBUnitsAnd100CoresWithoutACoreLimit() {
        String four = "{'limits':{'cambricon.com/vmlu':'1','cambricon.com/mlu.smlu.vmemory':'4'}}";
        assertQuotaIsExactly("cambricon.com/mlu.smlu.vmemory", 4, four);
        assertDenied(underQuota("cambricon.com/mlu.smlu.vcore", 99, "{'limits':{'cambricon.com/vmlu':'1'}}"),
                EXCEEDED);
    }

    @Test
    void quotaMthreadsCountsTheContainersTotalsIn512MiBUnits() {
        // count 2: the webhook sets sgpu-memory 192 and sgpu-core 32 for the container (96 and 16 per device)
        String two = "{'limits':{'mthreads.com/vgpu':'2'}}";
        assertQuotaIsExactly("mthreads.com/sgpu-memory", 192, two);
        assertQuotaIsExactly("mthreads.com/sgpu-core", 32, two);
        String eight = "{'limits':{'mthreads.com/vgpu':'1','mthreads.com/sgpu-memory':'8'}}";
        assertQuotaIsExactly("mthreads.com/sgpu-memory", 8, eight);
        // what pods hold (MiB, from the lookup) adds to the request: 4096 + 8 x 512 against 16 x 512
        assertFound(underQuota(V210, DeviceConfig.defaults(), "mthreads.com/sgpu-memory", 16, 4096, eight));
        assertDenied(underQuota(V210, DeviceConfig.defaults(), "mthreads.com/sgpu-memory", 16, 4097, eight), EXCEEDED);
    }

    @Test
    void quotaIluvatarCountsVmemPerDeviceIn256MiBUnits() {
        String twoBy4 = "{'limits':{'iluvatar.ai/MR-V100-vgpu':'2','iluvatar.ai/MR-V100.vMem':'4'}}";
        assertQuotaIsExactly("iluvatar.ai/MR-V100.vMem", 8, twoBy4);
        // count 2: the webhook sets vCore 200 for the container, counted per device: 400
        assertQuotaIsExactly("iluvatar.ai/MR-V100.vCore", 400, twoBy4);
    }

    @Test
    void quotaMetaxSgpuReadsABareVmemoryAsGibAndOneWithAUnitAsBytes() {
        String bare = "{'limits':{'metax-tech.com/sgpu':'1','metax-tech.com/vmemory':'4'}}";
        assertQuotaIsExactly("metax-tech.com/vmemory", 4, bare);
        String gi = "{'limits':{'metax-tech.com/sgpu':'2','metax-tech.com/vmemory':'4Gi'}}";
        assertQuotaIsExactly("metax-tech.com/vmemory", 8, gi);
        assertDenied(underQuota("metax-tech.com/vcore", 99, "{'limits':{'metax-tech.com/sgpu':'1'}}"), EXCEEDED);
        // limits only: a count under requests is not HAMi's pod, and not counted
        assertNotFound(underQuota("metax-tech.com/vcore", 99, "{'requests':{'metax-tech.com/sgpu':'1'}}"),
                pod("{'requests':{'metax-tech.com/sgpu':'1'}}"));
    }

    @Test
    void quotaEnflameDrsSlicesCountAsMemoryAndSharesAsGiven() {
        assertQuotaIsExactly("enflame.com/gcu-memory", 3, "{'limits':{'enflame.com/drs-gcu':'3'}}");
        String shares = "{'limits':{'enflame.com/gcu-memory':'10','enflame.com/gcu-core':'50'}}";
        assertQuotaIsExactly("enflame.com/gcu-core", 50, shares);
    }

    @Test
    void quotaAmdCountsMemoryPerDeviceAnd100CoresWithoutACoreLimit() {
        String two = "{'limits':{'amd.com/gpu':'2','amd.com/gpumem':'1000'}}";
        assertQuotaIsExactly("amd.com/gpumem", 2000, two);
        assertDenied(underQuota("amd.com/gpucores", 199, two), EXCEEDED);
    }

    @Test
    void quotaAwsNeuronCountsTheCoresOfWholeDevicesOrAsAsked() {
        assertQuotaIsExactly("aws.amazon.com/neuroncore", 4, "{'limits':{'aws.amazon.com/neuron':'2'}}");
        assertFound(underQuota("aws.amazon.com/neuroncore", 1, "{'limits':{'aws.amazon.com/neuroncore':'1'}}"));
        assertDenied(underQuota("aws.amazon.com/neuroncore", 3, "{'limits':{'aws.amazon.com/neuroncore':'4'}}"),
                EXCEEDED);
    }

    @Test
    void quotaAnExplicitZeroBlocksInV210OnlyForEveryVendor() {
        String dcu = "{'limits':{'hygon.com/dcunum':'1','hygon.com/dcumem':'1'}}";
        assertDenied(underQuota("hygon.com/dcumem", 0, dcu), EXCEEDED);
        assertFound(underQuota(V29, DeviceConfig.defaults(), "hygon.com/dcumem", 0, 0, dcu));
    }

    /** Where each vendor's use is counted: the lookup is asked with the vendor's allocated-devices annotation. */
    static final List<QuotaLookup.Resource> ASKED = new CopyOnWriteArrayList<>();
    static final QuotaLookup RECORDING = (namespace, resource) -> {
        ASKED.add(resource);
        return Optional.empty();
    };

    @Test
    void quotaEachVendorAsksTheLookupWithItsAllocatedDevicesAnnotation() {
        PolicyConfig config = PolicyConfig.defaults().withEnableAscend(true).withEnableIluvatar(true);
        for (String resources : List.of("{'limits':{'nvidia.com/gpu':'1','nvidia.com/gpumem':'1'}}",
                "{'limits':{'hygon.com/dcunum':'1'}}", "{'limits':{'cambricon.com/vmlu':'1'}}",
                "{'limits':{'mthreads.com/vgpu':'1'}}", "{'limits':{'metax-tech.com/sgpu':'1'}}",
                "{'limits':{'kunlunxin.com/vxpu':'1'}}", "{'limits':{'enflame.com/drs-gcu':'1'}}",
                "{'limits':{'amd.com/gpu':'1'}}", "{'limits':{'aws.amazon.com/neuron':'1'}}",
                "{'limits':{'huawei.com/Ascend910B4':'1'},'requests':{}}",
                "{'limits':{'iluvatar.ai/BI-V150-vgpu':'1','iluvatar.ai/BI-V150.vMem':'1'}}")) {
            assertFound(admit(config, DeviceConfig.defaults(), RECORDING, json(pod(resources))));
        }
        assertThat(ASKED.stream().map(r -> r.name() + " " + r.measure() + " " + r.allocatedAnnotation()).distinct())
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

    @Test
    void v29QuotaChecksNvidiaOnly() {
        assertFound(admitWithQuota(V29, pod("{'limits':{'hygon.com/dcunum':'2','hygon.com/dcumem':'2000'}}")));
        assertFound(admitWithQuota(V29, pod("{'limits':{'huawei.com/Ascend910B4':'1'},'requests':{}}")));
    }

    /** Policy-only: reads the device configuration, admits nothing. */
    @Test
    void hygonMemoryFactorIsReadAndChecked() {
        assertThat(DeviceConfig.parse("hygon:\n  memoryFactor: 4\n", "t").block("hygon").name("memoryFactor"))
                .isEqualTo("4");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> DeviceConfig.parse("hygon:\n  memoryFactor: 0\n",
                "t")).hasMessage("t: hygon.memoryFactor: 0 (expected: 1..2147483647)");
    }

    // ---- 1. the loop ----

    @Test
    void everyVendorsCountInLimitsAndRequestsMakesThePodHamisInBothModes() {
        for (String name : new String[] {"hygon.com/dcunum", "cambricon.com/vmlu", "metax-tech.com/gpu",
            "metax-tech.com/sgpu", "kunlunxin.com/xpu", "kunlunxin.com/vxpu", "enflame.com/gcu", "enflame.com/drs-gcu",
            "mthreads.com/vgpu", "aws.amazon.com/neuron", "amd.com/gpu", "vastaitech.com/va", "birentech.com/gpu",
            "huawei.com/Ascend910B3", "iluvatar.ai/BI-V100-vgpu"}) {
            Decision decision = admit(V210, podWithAnnotations("{}", "{'limits':{'" + name + "':'1'},'requests':{'"
                    + name + "':'1'}}"));
            assertThat(decision.outcome()).as(name + ": " + decision.message()).isEqualTo(Decision.Outcome.ALLOWED);
            assertThat(decision.mutated().path("spec").path("schedulerName").asString()).as(name)
                    .isEqualTo("hami-scheduler");
        }
        for (String name : new String[] {"hygon.com/dcunum", "metax-tech.com/sgpu", "kunlunxin.com/vxpu",
            "enflame.com/vgcu", "mthreads.com/vgpu", "aws.amazon.com/neuroncore", "amd.com/gpu",
            "huawei.com/Ascend910B3", "iluvatar.ai/BI-V100-vgpu"}) {
            Decision decision = admit(V29, podWithAnnotations("{}", "{'limits':{'" + name + "':'1'},'requests':{'"
                    + name + "':'1'}}"));
            assertThat(decision.outcome()).as(name + ": " + decision.message()).isEqualTo(Decision.Outcome.ALLOWED);
            assertThat(decision.mutated().path("spec").path("schedulerName").asString()).as(name)
                    .isEqualTo("hami-scheduler");
        }
    }

    @ParameterizedTest
    @EnumSource(HamiRelease.class)
    void theFirstBackendErrorIsTheAnswerAndComesBeforeThePrivilegedDenial(HamiRelease compat) {
        String privilegedError = "{'spec':{'containers':[{'name':'c','securityContext':{'privileged':true},"
                + "'resources':{'limits':{'mthreads.com/vgpu':'0'}}}]}}";
        String privilegedFound = "{'spec':{'containers':[{'name':'c','securityContext':{'privileged':true},"
                + "'resources':{'limits':{'hygon.com/dcunum':'1'}}}]}}";
        if (compat == V210) {
            assertError(admit(compat, privilegedError), "mthreads.com/vgpu must be greater than 0");
            assertDenied(admit(compat, privilegedFound), "container c is privileged");
        } else {
            assertNotFound(admit(compat, privilegedError), privilegedError);
            assertNotFound(admit(compat, privilegedFound), privilegedFound);
        }
        assertError(admit(compat, "{'metadata':{'annotations':{'metax-tech.com/sgpu-app-class':'x'}},"
                + "'spec':{'containers':[{'name':'ok','resources':{'limits':{'nvidia.com/gpu':'1'}}},{'name':'c',"
                + "'resources':{'limits':{'metax-tech.com/sgpu':'1'}}}]}}"),
                "metax-tech.com/sgpu-app-class must be set one of [online, offline]");
    }

    @ParameterizedTest
    @EnumSource(HamiRelease.class)
    void oneContainerAskingForTwoVendorsGetsBothMutations(HamiRelease compat) {
        assertThat(admit(compat, pod("{'limits':{'nvidia.com/gpu':'1','mthreads.com/vgpu':'1'}}")).mutated())
                .isEqualTo(json("{'metadata':{'name':'p'},'spec':{'schedulerName':'hami-scheduler','containers':[{"
                        + "'name':'c','resources':{'limits':{'nvidia.com/gpu':'1','mthreads.com/vgpu':'1',"
                        + "'nvidia.com/gpucores':'100','mthreads.com/sgpu-core':'16',"
                        + "'mthreads.com/sgpu-memory':'96'}}}]}}"));
        assertThat(admit(compat, pod("{'limits':{'nvidia.com/gpu':'1','iluvatar.ai/MR-V50-vgpu':'2'}}")).mutated())
                .isEqualTo(json("{'metadata':{'name':'p'},'spec':{'schedulerName':'hami-scheduler','containers':[{"
                        + "'name':'c','resources':{'limits':{'nvidia.com/gpu':'1','iluvatar.ai/MR-V50-vgpu':'2',"
                        + "'nvidia.com/gpucores':'100','iluvatar.ai/MR-V50.vCore':'200'}},"
                        + "'env':[{'name':'SOL_CONTINER_NAME','value':'c'}]}]}}"));
    }

    @ParameterizedTest
    @EnumSource(HamiRelease.class)
    void nvidiaAndAscendContainersInOnePod(HamiRelease compat) {
        Decision decision = admit(compat, "{'metadata':{'name':'p'},'spec':{'containers':["
                + "{'name':'cuda','resources':{'limits':{'nvidia.com/gpu':'1'}}},"
                + "{'name':'npu','resources':{'limits':{'huawei.com/Ascend910B4':'1','huawei.com/Ascend910B4-memory':"
                + "'6000'},'requests':{'huawei.com/Ascend910B4':'1'}}}]}}");
        assertThat(decision.mutated()).isEqualTo(json("{'metadata':{'name':'p'},'spec':{'schedulerName':"
                + "'hami-scheduler','containers':["
                + "{'name':'cuda','resources':{'limits':{'nvidia.com/gpu':'1','nvidia.com/gpucores':'100'}}},"
                + "{'name':'npu','resources':{'limits':{'huawei.com/Ascend910B4':'1','huawei.com/Ascend910B4-memory':"
                + "'8192'},'requests':{'huawei.com/Ascend910B4':'1','huawei.com/Ascend910B4-memory':'8192'}}}]}}"));
    }

    @Test
    void initContainersAreMutatedInV210Only() {
        String pod = "{'spec':{'initContainers':[{'name':'init','resources':{'limits':{'mthreads.com/vgpu':'1'}}}],"
                + "'containers':[{'name':'c'}]}}";
        assertThat(admit(V210, pod).mutated()).isEqualTo(json("{'spec':{'schedulerName':'hami-scheduler',"
                + "'initContainers':[{'name':'init','resources':{'limits':{'mthreads.com/vgpu':'1',"
                + "'mthreads.com/sgpu-core':'16','mthreads.com/sgpu-memory':'96'}}}],'containers':[{'name':'c'}]}}"));
        assertNotFound(admit(V29, pod), pod);
        String initError = "{'spec':{'initContainers':[{'name':'init','resources':{'limits':{'mthreads.com/vgpu':'0'}}}],"
                + "'containers':[{'name':'c','resources':{'limits':{'amd.com/gpu':'1','amd.com/gpucores':'0'}}}]}}";
        assertError(admit(V210, initError), "mthreads.com/vgpu must be greater than 0");

        String both = "{'metadata':{'name':'p'},'spec':{'initContainers':[{'name':'warm','resources':{"
                + "'limits':{'kunlunxin.com/vxpu':'1','kunlunxin.com/vxpu-memory':'30000'}}}],"
                + "'containers':[{'name':'c','resources':{'limits':{'metax-tech.com/sgpu':'1'}}}]}}";
        assertThat(admit(V210, both).mutated()).isEqualTo(json("{'metadata':{'name':'p','annotations':{"
                + "'metax-tech.com/sgpu-qos-policy':'best-effort'}},'spec':{'schedulerName':'hami-scheduler',"
                + "'initContainers':[{'name':'warm','resources':{'limits':{'kunlunxin.com/vxpu':'1',"
                + "'kunlunxin.com/vxpu-memory':'49152'},'requests':{'kunlunxin.com/vxpu-memory':'49152'}}}],"
                + "'containers':[{'name':'c','resources':{'limits':{'metax-tech.com/sgpu':'1'}}}]}}"));
        assertThat(admit(V29, both).mutated()).isEqualTo(json("{'metadata':{'name':'p','annotations':{"
                + "'metax-tech.com/sgpu-qos-policy':'best-effort'}},'spec':{'schedulerName':'hami-scheduler',"
                + "'initContainers':[{'name':'warm','resources':{'limits':{'kunlunxin.com/vxpu':'1',"
                + "'kunlunxin.com/vxpu-memory':'30000'}}}],"
                + "'containers':[{'name':'c','resources':{'limits':{'metax-tech.com/sgpu':'1'}}}]}}"));
    }
}
