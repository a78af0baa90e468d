package io.tenantgateway.webhook;

import static io.tenantgateway.webhook.Pods.container;
import static io.tenantgateway.webhook.Pods.pod;
import static org.assertj.core.api.Assertions.assertThat;
import static io.tenantgateway.hami.ResourceNames.NVIDIA_GPU;
import static io.tenantgateway.hami.ResourceNames.NVIDIA_GPU_CORES;
import static io.tenantgateway.hami.ResourceNames.NVIDIA_GPU_MEMORY;
import static io.tenantgateway.hami.ResourceNames.NVIDIA_GPU_MEMORY_PERCENTAGE;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.tenantgateway.webhook.AdmissionClient.Admission;
import io.tenantgateway.webhook.policy.DeviceConfig;
import io.tenantgateway.hami.HamiRelease;
import io.tenantgateway.webhook.policy.PolicyConfig;
import io.tenantgateway.webhook.quota.InMemoryQuotaLookup;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.api.Timeout;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * The three behaviours issue 19 found different from HAMi, each stated as HAMi's own outcome in both compat modes,
 * through a running webhook over HTTPS. HAMi's code paths (v2.9.0 and v2.10.0 alike):
 *
 * <ul>
 *   <li>{@code pkg/device/nvidia/device.go}: {@code mutateContainerResource} reads only {@code limits}, but
 *       {@code defaultExclusiveCoreIfNeeded} asks {@code resourcePresent}/{@code resourceValue} (limits, else
 *       requests) for the GPU count, cores, memory and percentage and writes {@code gpucores: 100} into limits;
 *       v2.10's {@code validateMemoryPercentage} reads limits, else requests. The quota ({@code fitResourceQuota}'s
 *       {@code getRequest}) reads limits, else requests.</li>
 *   <li>{@code pkg/scheduler/webhook.go}: {@code else if len(config.SchedulerName) > 0 { set schedulerName; if
 *       nodeName != "" deny }}: with an empty scheduler name nothing of that happens, the rest does.</li>
 *   <li>controller-runtime's decoder answers an absent or {@code null} {@code request.object} with
 *       {@code Errored(400, "there is no content to decode")}.</li>
 * </ul>
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HamiParityIT {
    static WebhookFixture fixture;
    static final Map<HamiRelease, Integer> hamiScheduler = new EnumMap<>(HamiRelease.class);
    static final Map<HamiRelease, Integer> unsetScheduler = new EnumMap<>(HamiRelease.class);

    @BeforeAll
    static void startServers() {
        fixture = new WebhookFixture();
        InMemoryQuotaLookup quota = new InMemoryQuotaLookup().put("team-quota", NVIDIA_GPU_MEMORY, 4000, 2000);
        for (HamiRelease compat : HamiRelease.values()) {
            hamiScheduler.put(compat, fixture.start(WebhookFixture.loopback()
                    .policy(PolicyConfig.defaults().withCompat(compat)).build(), DeviceConfig.defaults(), quota,
                    new PrometheusRegistry()).port());
            unsetScheduler.put(compat, fixture.start(WebhookFixture.loopback()
                    .policy(PolicyConfig.defaults().withCompat(compat).withSchedulerName("")).build()).port());
        }
    }

    @AfterAll
    static void stopServers() {
        fixture.close();
    }

    static Admission admit(int port, ObjectNode pod) {
        return fixture.client.admit(port, Reviews.podCreate(pod));
    }

    static JsonNode resources(JsonNode pod, int index) {
        return pod.path("spec").path("containers").path(index).path("resources");
    }

    static void assertAllowedUnchanged(Admission admission) {
        assertThat(admission.allowed()).isTrue();
        assertThat(admission.code()).isEqualTo(200);
        assertThat(admission.patch()).as("no patch").isNull();
    }

    // ---- 1. NVIDIA_GPU resources declared under requests only ----------------------------------------------------

    @ParameterizedTest
    @EnumSource(HamiRelease.class)
    void requestsOnlyGpuGetsExclusiveCoresInLimitsAndOurScheduler(HamiRelease compat) {
        Admission admission = admit(hamiScheduler.get(compat), pod("req").container(container("main")
                .request(NVIDIA_GPU, "1")).build());

        assertThat(admission.allowed()).isTrue();
        JsonNode patched = admission.patchedPod();
        assertThat(patched.path("spec").path("schedulerName").asString()).isEqualTo("hami-scheduler");
        assertThat(resources(patched, 0).path("limits").properties()).as("limits created with the cores only")
                .extracting(Map.Entry::getKey).containsExactly(NVIDIA_GPU_CORES);
        assertThat(resources(patched, 0).path("limits").path(NVIDIA_GPU_CORES).asString()).isEqualTo("100");
        assertThat(resources(patched, 0).path("requests").path(NVIDIA_GPU).asString()).as("requests untouched")
                .isEqualTo("1");
        assertThat(resources(patched, 0).path("limits").has(NVIDIA_GPU)).as("the count is not copied to limits")
                .isFalse();
    }

    @ParameterizedTest
    @EnumSource(HamiRelease.class)
    void requestsOnlyFullMemoryPercentageIsExclusiveToo(HamiRelease compat) {
        JsonNode patched = admit(hamiScheduler.get(compat), pod("pct").container(container("main")
                .request(NVIDIA_GPU, "1").request(NVIDIA_GPU_MEMORY_PERCENTAGE, "100")).build()).patchedPod();

        assertThat(resources(patched, 0).path("limits").path(NVIDIA_GPU_CORES).asString()).isEqualTo("100");
        assertThat(patched.path("spec").path("schedulerName").asString()).isEqualTo("hami-scheduler");
    }

    @ParameterizedTest
    @EnumSource(HamiRelease.class)
    void requestsOnlySharedGpuIsLeftAlone(HamiRelease compat) {
        int port = hamiScheduler.get(compat);
        // Memory or cores under requests make the NVIDIA_GPU shared (no exclusive cores), and without a count in limits
        // HAMi finds no resource: no scheduler, no patch.
        assertAllowedUnchanged(admit(port, pod("mem").container(container("main").request(NVIDIA_GPU, "1")
                .request(NVIDIA_GPU_MEMORY, "3000")).build()));
        assertAllowedUnchanged(admit(port, pod("cores").container(container("main").request(NVIDIA_GPU, "1")
                .request(NVIDIA_GPU_CORES, "30")).build()));
        assertAllowedUnchanged(admit(port, pod("half").container(container("main").request(NVIDIA_GPU, "1")
                .request(NVIDIA_GPU_MEMORY_PERCENTAGE, "50")).build()));
        // A share under requests without any count: defaultGPUNum applies to limits only.
        assertAllowedUnchanged(admit(port, pod("share").container(container("main").request(NVIDIA_GPU_MEMORY, "3000"))
                .build()));
    }

    @ParameterizedTest
    @EnumSource(HamiRelease.class)
    void memoryOrCoresUnderRequestsCountNextToACountInLimits(HamiRelease compat) {
        int port = hamiScheduler.get(compat);
        JsonNode memory = admit(port, pod("mixed-mem").container(container("main").gpu("1")
                .request(NVIDIA_GPU_MEMORY, "3000")).build()).patchedPod();
        assertThat(memory.path("spec").path("schedulerName").asString()).isEqualTo("hami-scheduler");
        assertThat(resources(memory, 0).path("limits").has(NVIDIA_GPU_CORES)).as("memory in requests: not exclusive")
                .isFalse();

        JsonNode cores = admit(port, pod("mixed-cores").container(container("main").gpu("1")
                .request(NVIDIA_GPU_CORES, "30")).build()).patchedPod();
        assertThat(resources(cores, 0).path("limits").has(NVIDIA_GPU_CORES)).as("cores in requests are given")
                .isFalse();
        assertThat(cores.path("spec").path("schedulerName").asString()).isEqualTo("hami-scheduler");
    }

    @ParameterizedTest
    @EnumSource(HamiRelease.class)
    void memoryPercentageUnderRequestsIsValidatedInV210Only(HamiRelease compat) {
        Admission admission = admit(hamiScheduler.get(compat), pod("bad-pct").container(container("main")
                .request(NVIDIA_GPU, "1").request(NVIDIA_GPU_MEMORY_PERCENTAGE, "150")).build());

        if (compat == HamiRelease.V2_10) {
            assertThat(admission.allowed()).isFalse();
            assertThat(admission.code()).isEqualTo(500);
            assertThat(admission.message()).isEqualTo("invalid nvidia.com/gpumem-percentage value 150 in container"
                    + " main: must be an integer between 0 and 100");
        } else {
            assertAllowedUnchanged(admission); // 150 is not 100: not exclusive, and no count in limits
        }
    }

    @ParameterizedTest
    @EnumSource(HamiRelease.class)
    void quotaReadsRequestsWhenLimitsLackThem(HamiRelease compat) {
        // team-quota: limits.nvidia.com/gpumem 4000, 2000 used. HAMi checks the quota whether or not the pod was
        // mutated, reading each value from limits, else requests.
        Admission admission = admit(hamiScheduler.get(compat), pod("big").namespace("team-quota")
                .container(container("main").request(NVIDIA_GPU, "1").request(NVIDIA_GPU_MEMORY, "3000")).build());

        assertThat(admission.allowed()).isFalse();
        assertThat(admission.code()).isEqualTo(403);
        assertThat(admission.message()).isEqualTo("exceeding resource quota");
        assertAllowedUnchanged(admit(hamiScheduler.get(compat), pod("small").namespace("team-quota")
                .container(container("main").request(NVIDIA_GPU, "1").request(NVIDIA_GPU_MEMORY, "2000")).build()));
    }

    // ---- 2. --scheduler-name="" -------------------------------------------------------------------------------

    @ParameterizedTest
    @EnumSource(HamiRelease.class)
    void unsetSchedulerNameMutatesGpuPodsButKeepsTheirScheduler(HamiRelease compat) {
        int port = unsetScheduler.get(compat);
        JsonNode defaultScheduler = admit(port, pod("default").schedulerName("default-scheduler")
                .container(container("main").gpu("1")).build()).patchedPod();
        assertThat(defaultScheduler.path("spec").path("schedulerName").asString()).isEqualTo("default-scheduler");
        assertThat(resources(defaultScheduler, 0).path("limits").path(NVIDIA_GPU_CORES).asString()).isEqualTo("100");

        JsonNode noScheduler = admit(port, pod("none").container(container("main").limit(NVIDIA_GPU_MEMORY, "2000"))
                .build()).patchedPod();
        assertThat(noScheduler.path("spec").has("schedulerName")).as("no scheduler name written").isFalse();
        assertThat(resources(noScheduler, 0).path("limits").path(NVIDIA_GPU).asString()).isEqualTo("1");
    }

    @ParameterizedTest
    @EnumSource(HamiRelease.class)
    void unsetSchedulerNameDoesNotCheckTheNodeName(HamiRelease compat) {
        Admission admission = admit(unsetScheduler.get(compat), pod("pinned").nodeName("worker-1")
                .container(container("main").gpu("1")).build());

        assertThat(admission.allowed()).as("HAMi denies 'pod has node assigned' only when it sets the scheduler")
                .isTrue();
        assertThat(admission.patchedPod().path("spec").path("nodeName").asString()).isEqualTo("worker-1");
        assertThat(resources(admission.patchedPod(), 0).path("limits").path(NVIDIA_GPU_CORES).asString())
                .isEqualTo("100");
    }

    @ParameterizedTest
    @EnumSource(HamiRelease.class)
    void unsetSchedulerNameStillLeavesPodsOfOtherSchedulersAlone(HamiRelease compat) {
        Admission admission = admit(unsetScheduler.get(compat), pod("volcano").schedulerName("volcano")
                .container(container("main").gpu("1")).build());

        assertAllowedUnchanged(admission);
        assertThat(admission.message()).isEqualTo("pod already has different scheduler assigned");
    }

    // ---- 3. request.object absent or null ---------------------------------------------------------------------

    @ParameterizedTest
    @EnumSource(HamiRelease.class)
    void absentOrNullObjectIsControllerRuntimesNoContent(HamiRelease compat) {
        int port = hamiScheduler.get(compat);
        for (String version : new String[] {Reviews.V1, Reviews.V1BETA1}) {
            ObjectNode absent = Reviews.review(version, "", "Pod", "CREATE", null);
            ObjectNode explicitNull = Reviews.review(version, "", "Pod", "CREATE", null);
            ((ObjectNode) explicitNull.get("request")).putNull("object");
            for (ObjectNode review : new ObjectNode[] {absent, explicitNull}) {
                Admission admission = fixture.client.admit(port, review);
                assertThat(admission.reply().status()).as("HTTP status").isEqualTo(200);
                assertThat(admission.answer().path("apiVersion").asString()).isEqualTo(version);
                assertThat(admission.allowed()).isFalse();
                assertThat(admission.code()).isEqualTo(400);
                assertThat(admission.message()).isEqualTo("there is no content to decode");
                assertThat(admission.patch()).isNull();
            }
        }
    }
}
