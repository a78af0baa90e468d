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
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Every rule of HAMi's mutating webhook (spec "Mutating webhook"), through a running webhook over real HTTPS on
 * loopback: each case applies the returned JSON patch to the original pod and checks the result, or checks the
 * exact denial / error code and message.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HamiAdmissionIT {
    static WebhookFixture fixture;
    static InMemoryQuotaLookup quota = new InMemoryQuotaLookup();
    static int v210;
    static int v29;
    static int noForceOverwrite;
    static int envAndRuntimeClass;
    static int noDefaultGpuNum;
    static int customNames;

    @BeforeAll
    static void startServers() {
        fixture = new WebhookFixture();
        quota.put("team-quota", NVIDIA_GPU_MEMORY, 4000, 2000).put("team-quota", NVIDIA_GPU_CORES, 100, 50);
        v210 = fixture.start(WebhookFixture.loopback().build(), DeviceConfig.defaults(), quota,
                new PrometheusRegistry()).port();
        v29 = fixture.start(WebhookFixture.loopback().policy(PolicyConfig.defaults().withCompat(HamiRelease.V2_9))
                .build(), DeviceConfig.defaults(), quota, new PrometheusRegistry()).port();
        noForceOverwrite = fixture.start(WebhookFixture.loopback()
                .policy(PolicyConfig.defaults().withForceOverwriteDefaultScheduler(false)).build()).port();
        envAndRuntimeClass = fixture.start(WebhookFixture.loopback().build(), DeviceConfig.parse("""
                nvidia:
                  gpuCorePolicy: force
                  overwriteEnv: true
                  runtimeClassName: nvidia
                """, "test"), null, new PrometheusRegistry()).port();
        noDefaultGpuNum = fixture.start(WebhookFixture.loopback().build(),
                DeviceConfig.parse("nvidia:\n  defaultGPUNum: 0\n", "test"), null, new PrometheusRegistry()).port();
        customNames = fixture.start(WebhookFixture.loopback().build(), DeviceConfig.parse("""
                nvidia:
                  resourceCountName: example.com/vgpu
                  resourceMemoryName: example.com/vgpu-memory
                  resourceCoreName: example.com/vgpu-cores
                """, "test"), null, new PrometheusRegistry()).port();
    }

    @AfterAll
    static void stopServers() {
        fixture.close();
    }

    static Admission admit(int port, ObjectNode pod) {
        return fixture.client.admit(port, Reviews.podCreate(pod));
    }

    static JsonNode limits(JsonNode pod, String list, int index) {
        return pod.path("spec").path(list).path(index).path("resources").path("limits");
    }

    static JsonNode limits(JsonNode pod, int index) {
        return limits(pod, "containers", index);
    }

    static List<String> env(JsonNode pod, int index) {
        List<String> env = new ArrayList<>();
        for (JsonNode variable : pod.path("spec").path("containers").path(index).path("env")) {
            env.add(variable.path("name").asString() + "=" + variable.path("value").asString());
        }
        return env;
    }

    static void assertAllowedUnchanged(Admission admission) {
        assertThat(admission.allowed()).isTrue();
        assertThat(admission.code()).isEqualTo(200);
        assertThat(admission.patch()).as("no patch").isNull();
    }

    static void assertDenied(Admission admission, String message) {
        assertThat(admission.allowed()).isFalse();
        assertThat(admission.code()).isEqualTo(403);
        assertThat(admission.reason()).isEqualTo("Forbidden");
        assertThat(admission.message()).isEqualTo(message);
        assertThat(admission.patch()).isNull();
    }

    @Nested
    class V210 {
        @Test
        void wholeGpuGetsOurSchedulerAndAllItsCores() {
            ObjectNode original = pod("train").container(container("main").gpu("1")).build();
            Admission admission = admit(v210, original);

            assertThat(admission.allowed()).isTrue();
            JsonNode patched = admission.patchedPod();
            assertThat(patched.path("spec").path("schedulerName").asString()).isEqualTo("hami-scheduler");
            assertThat(limits(patched, 0).path(NVIDIA_GPU).asString()).isEqualTo("1");
            assertThat(limits(patched, 0).path(NVIDIA_GPU_CORES).asString()).isEqualTo("100");
            assertThat(env(patched, 0)).isEmpty();
            // JSON pointer escaping of the resource name's slash (RFC 6901).
            assertThat(admission.patch().toString()).contains("nvidia.com~1gpucores");
        }

        @Test
        void v1beta1ReviewIsAnsweredInV1beta1WithItsUid() {
            ObjectNode review = Reviews.podCreate(Reviews.V1BETA1, pod("beta").container(container("main").gpu("1"))
                    .build());
            Admission admission = fixture.client.admit(v210, review);

            assertThat(admission.answer().path("apiVersion").asString()).isEqualTo(Reviews.V1BETA1);
            assertThat(admission.answer().path("response").path("uid").asString())
                    .isEqualTo(review.path("request").path("uid").asString());
            assertThat(admission.patchedPod().path("spec").path("schedulerName").asString())
                    .isEqualTo("hami-scheduler");
        }

        @Test
        void memoryOnlyGetsDefaultGpuCountButKeepsSharedCores() {
            JsonNode patched = admit(v210, pod("share").container(container("main").limit(NVIDIA_GPU_MEMORY, "3000"))
                    .build()).patchedPod();

            assertThat(limits(patched, 0).path(NVIDIA_GPU).asString()).isEqualTo("1");
            assertThat(limits(patched, 0).path(NVIDIA_GPU_MEMORY).asString()).isEqualTo("3000");
            assertThat(limits(patched, 0).has(NVIDIA_GPU_CORES)).as("memory is shared, cores stay unset").isFalse();
            assertThat(patched.path("spec").path("schedulerName").asString()).isEqualTo("hami-scheduler");
        }

        @Test
        void coresOnlyGetsDefaultGpuCount() {
            JsonNode patched = admit(v210, pod("cores").container(container("main").limit(NVIDIA_GPU_CORES, "30"))
                    .build()).patchedPod();

            assertThat(limits(patched, 0).path(NVIDIA_GPU).asString()).isEqualTo("1");
            assertThat(limits(patched, 0).path(NVIDIA_GPU_CORES).asString()).isEqualTo("30");
        }

        @Test
        void percentageOnlyGetsDefaultGpuCountAndExclusiveCores() {
            JsonNode patched = admit(v210, pod("pct-only").container(container("main")
                    .limit(NVIDIA_GPU_MEMORY_PERCENTAGE, "100")).build()).patchedPod();

            assertThat(limits(patched, 0).path(NVIDIA_GPU).asString()).isEqualTo("1");
            assertThat(limits(patched, 0).path(NVIDIA_GPU_CORES).asString()).isEqualTo("100");
            assertThat(patched.path("spec").path("schedulerName").asString()).isEqualTo("hami-scheduler");
        }

        @Test
        void hundredPercentMemoryIsExclusiveAndGetsAllCores() {
            JsonNode patched = admit(v210, pod("full").container(container("main").gpu("1")
                    .limit(NVIDIA_GPU_MEMORY_PERCENTAGE, "100")).build()).patchedPod();

            assertThat(limits(patched, 0).path(NVIDIA_GPU_CORES).asString()).isEqualTo("100");
        }

        @Test
        void partialMemoryPercentageKeepsCoresUnset() {
            JsonNode patched = admit(v210, pod("half").container(container("main").gpu("1")
                    .limit(NVIDIA_GPU_MEMORY_PERCENTAGE, "50")).build()).patchedPod();

            assertThat(limits(patched, 0).has(NVIDIA_GPU_CORES)).isFalse();
            assertThat(patched.path("spec").path("schedulerName").asString()).isEqualTo("hami-scheduler");
        }

        @Test
        void fullySpecifiedRequestOnlyGetsTheScheduler() {
            Admission admission = admit(v210, pod("explicit").container(container("main").gpu("2")
                    .limit(NVIDIA_GPU_MEMORY, "4000").limit(NVIDIA_GPU_CORES, "50")).build());

            ArrayNode patch = admission.patch();
            assertThat(patch).hasSize(1);
            assertThat(patch.get(0).path("path").asString()).isEqualTo("/spec/schedulerName");
            JsonNode patched = admission.patchedPod();
            assertThat(limits(patched, 0).path(NVIDIA_GPU).asString()).isEqualTo("2");
            assertThat(limits(patched, 0).path(NVIDIA_GPU_CORES).asString()).isEqualTo("50");
        }

        @Test
        void podWithoutGpuIsAllowedWithoutPatch() {
            assertAllowedUnchanged(admit(v210, pod("web").container(container("nginx")
                    .limit("cpu", "500m").limit("memory", "128Mi")).build()));
        }

        @Test
        void priorityBecomesAnEnvVarAfterExistingOnes() {
            JsonNode patched = admit(v210, pod("prio").container(container("main").gpu("1")
                    .limit("nvidia.com/priority", "1").env("MODE", "train")).build()).patchedPod();

            assertThat(env(patched, 0)).containsExactly("MODE=train", "CUDA_TASK_PRIORITY=1");
        }

        @Test
        void podNamingAnotherSchedulerIsLeftAlone() {
            Admission admission = admit(v210, pod("volcano").schedulerName("volcano")
                    .container(container("main").gpu("1")).build());

            assertThat(admission.allowed()).isTrue();
            assertThat(admission.code()).isEqualTo(200);
            assertThat(admission.message()).isEqualTo("pod already has different scheduler assigned");
            assertThat(admission.patch()).isNull();
        }

        @Test
        void defaultSchedulerIsOverwrittenWhenForceOverwriteIsOn() {
            JsonNode patched = admit(v210, pod("default").schedulerName("default-scheduler")
                    .container(container("main").gpu("1")).build()).patchedPod();

            assertThat(patched.path("spec").path("schedulerName").asString()).isEqualTo("hami-scheduler");
        }

        @Test
        void defaultSchedulerIsKeptWhenForceOverwriteIsOff() {
            Admission admission = admit(noForceOverwrite, pod("default").schedulerName("default-scheduler")
                    .container(container("main").gpu("1")).build());

            assertThat(admission.allowed()).isTrue();
            assertThat(admission.message()).isEqualTo("pod already has different scheduler assigned");
            assertThat(admission.patch()).isNull();
        }

        @Test
        void podAlreadyOnOurSchedulerIsStillMutated() {
            JsonNode patched = admit(v210, pod("ours").schedulerName("hami-scheduler")
                    .container(container("main").gpu("1")).build()).patchedPod();

            assertThat(limits(patched, 0).path(NVIDIA_GPU_CORES).asString()).isEqualTo("100");
            assertThat(patched.path("spec").path("schedulerName").asString()).isEqualTo("hami-scheduler");
        }

        @Test
        void gpuPodWithNodeNameIsDenied() {
            assertDenied(admit(v210, pod("pinned").nodeName("worker-1").container(container("main").gpu("1"))
                    .build()), "pod has node assigned");
        }

        @Test
        void podWithNodeNameButNoGpuIsAllowed() {
            assertAllowedUnchanged(admit(v210, pod("pinned-cpu").nodeName("worker-1")
                    .container(container("main").limit("cpu", "1")).build()));
        }

        @Test
        void podWithoutContainersIsDenied() {
            assertDenied(admit(v210, pod("empty").build()), "pod has no containers");
        }

        @Test
        void privilegedGpuContainerDeniesThePod() {
            assertDenied(admit(v210, pod("priv").container(container("cuda").gpu("1").privileged()).build()),
                    "container cuda is privileged");
        }

        @Test
        void privilegedSidecarDeniesAPodThatAsksForGpus() {
            assertDenied(admit(v210, pod("priv-sidecar").container(container("main").gpu("1"))
                    .container(container("debug").privileged()).build()), "container debug is privileged");
        }

        @Test
        void privilegedContainerWithoutGpusIsAllowed() {
            assertAllowedUnchanged(admit(v210, pod("priv-cpu").container(container("debug").privileged()).build()));
        }

        @Test
        void initContainersAreMutatedToo() {
            JsonNode patched = admit(v210, pod("init").initContainer(container("warmup").gpu("1"))
                    .container(container("main").limit("cpu", "1")).build()).patchedPod();

            assertThat(limits(patched, "initContainers", 0).path(NVIDIA_GPU_CORES).asString()).isEqualTo("100");
            assertThat(patched.path("spec").path("schedulerName").asString()).isEqualTo("hami-scheduler");
        }

        @Test
        void memoryPercentageAboveHundredIsAnError() {
            Admission admission = admit(v210, pod("pct").container(container("main").gpu("1")
                    .limit(NVIDIA_GPU_MEMORY_PERCENTAGE, "150")).build());

            assertThat(admission.allowed()).isFalse();
            assertThat(admission.code()).isEqualTo(500);
            assertThat(admission.message()).isEqualTo("invalid nvidia.com/gpumem-percentage value 150 in container"
                    + " main: must be an integer between 0 and 100");
            assertThat(admission.patch()).isNull();
        }

        @Test
        void negativeMemoryPercentageInAnInitContainerIsAnError() {
            Admission admission = admit(v210, pod("pct").initContainer(container("prep").gpu("1")
                    .limit(NVIDIA_GPU_MEMORY_PERCENTAGE, "-5")).container(container("main").gpu("1")).build());

            assertThat(admission.code()).isEqualTo(500);
            assertThat(admission.message()).isEqualTo("invalid nvidia.com/gpumem-percentage value -5 in container"
                    + " prep: must be an integer between 0 and 100");
        }

        @Test
        void quotaExceededByMemoryIsDenied() {
            assertDenied(admit(v210, pod("big").namespace("team-quota").container(container("main")
                    .limit(NVIDIA_GPU_MEMORY, "3000").limit(NVIDIA_GPU_CORES, "10")).build()),
                    "exceeding resource quota");
        }

        @Test
        void requestWithinQuotaIsAllowed() {
            JsonNode patched = admit(v210, pod("small").namespace("team-quota").container(container("main")
                    .limit(NVIDIA_GPU_MEMORY, "2000").limit(NVIDIA_GPU_CORES, "50")).build()).patchedPod();

            assertThat(limits(patched, 0).path(NVIDIA_GPU).asString()).isEqualTo("1");
        }

        @Test
        void exclusiveCoresCountAgainstTheCoreQuota() {
            // gpu: 1 alone gets gpucores 100; 50 of 100 cores are used already.
            assertDenied(admit(v210, pod("whole").namespace("team-quota").container(container("main").gpu("1"))
                    .build()), "exceeding resource quota");
        }

        @Test
        void quotaCountsMemoryPerGpuTimesGpuCount() {
            // 2 GPUs x 1500 MiB = 3000 > 4000 - 2000: denied in v2.10 (v2.9 ignores multi-NVIDIA_GPU containers).
            ObjectNode original = pod("two").namespace("team-quota").container(container("main").gpu("2")
                    .limit(NVIDIA_GPU_MEMORY, "1500").limit(NVIDIA_GPU_CORES, "10")).build();
            assertDenied(admit(v210, original), "exceeding resource quota");
            assertThat(admit(v29, original).allowed()).isTrue();
        }

        @Test
        void corePolicyEnvGoesToEveryContainerAndVisibleDevicesToThoseWithoutGpus() {
            JsonNode patched = admit(envAndRuntimeClass, pod("env").container(container("main").gpu("1"))
                    .container(container("sidecar").limit("cpu", "100m")).build()).patchedPod();

            assertThat(env(patched, 0)).containsExactly("GPU_CORE_UTILIZATION_POLICY=force");
            assertThat(env(patched, 1)).containsExactly("GPU_CORE_UTILIZATION_POLICY=force",
                    "NVIDIA_VISIBLE_DEVICES=none");
            assertThat(patched.path("spec").path("runtimeClassName").asString()).isEqualTo("nvidia");
        }

        @Test
        void existingRuntimeClassIsKept() {
            JsonNode patched = admit(envAndRuntimeClass, pod("rc").runtimeClassName("kata")
                    .container(container("main").gpu("1")).build()).patchedPod();

            assertThat(patched.path("spec").path("runtimeClassName").asString()).isEqualTo("kata");
        }

        @Test
        void withoutDefaultGpuCountMemoryAloneIsNotAGpuRequest() {
            assertAllowedUnchanged(admit(noDefaultGpuNum, pod("mem").container(container("main")
                    .limit(NVIDIA_GPU_MEMORY, "3000")).build()));
        }

        @Test
        void resourceNamesComeFromTheDeviceConfig() {
            JsonNode patched = admit(customNames, pod("custom").container(container("main")
                    .limit("example.com/vgpu", "1")).build()).patchedPod();

            assertThat(limits(patched, 0).path("example.com/vgpu-cores").asString()).isEqualTo("100");
            assertThat(patched.path("spec").path("schedulerName").asString()).isEqualTo("hami-scheduler");
            assertAllowedUnchanged(admit(customNames, pod("plain").container(container("main").gpu("1")).build()));
        }

        @Test
        void unparsableQuantityIsAnUndecodablePod() {
            Admission admission = admit(v210, pod("bad").container(container("main").gpu("lots")).build());

            assertThat(admission.allowed()).isFalse();
            assertThat(admission.code()).isEqualTo(400);
            assertThat(admission.message()).startsWith("undecodable pod: spec.containers[0].resources.limits"
                    + "[nvidia.com/gpu]: 'lots' is not a quantity");
        }

        @Test
        void podCreateWithoutObjectIsAnUndecodablePod() {
            Admission admission = fixture.client.admit(v210, Reviews.review(Reviews.V1, "", "Pod", "CREATE", null));

            assertThat(admission.code()).isEqualTo(400);
            assertThat(admission.message()).isEqualTo("there is no content to decode"); // controller-runtime's
        }

        @Test
        void updatesAreAllowedWithoutPatch() {
            assertAllowedUnchanged(fixture.client.admit(v210, Reviews.review(Reviews.V1, "", "Pod", "UPDATE",
                    pod("running").container(container("main").gpu("1")).build())));
        }

        @Test
        void otherKindsAreAllowedWithoutPatch() {
            ObjectNode deployment = Pods.JSON.createObjectNode();
            deployment.putObject("metadata").put("name", "web");
            deployment.putObject("spec").put("replicas", 2);
            assertAllowedUnchanged(fixture.client.admit(v210, Reviews.review(Reviews.V1, "apps", "Deployment",
                    "CREATE", deployment)));
        }
    }

    @Nested
    class V29 {
        @Test
        void privilegedGpuContainerIsSkippedSilently() {
            assertAllowedUnchanged(admit(v29, pod("priv").container(container("cuda").gpu("1").privileged()).build()));
        }

        @Test
        void privilegedContainerIsSkippedWhileOthersAreMutated() {
            JsonNode patched = admit(v29, pod("mixed").container(container("priv").gpu("1").privileged())
                    .container(container("main").gpu("1")).build()).patchedPod();

            assertThat(limits(patched, 0).has(NVIDIA_GPU_CORES)).as("privileged container untouched").isFalse();
            assertThat(limits(patched, 1).path(NVIDIA_GPU_CORES).asString()).isEqualTo("100");
            assertThat(patched.path("spec").path("schedulerName").asString()).isEqualTo("hami-scheduler");
        }

        @Test
        void initContainersAreNotMutated() {
            assertAllowedUnchanged(admit(v29, pod("init").initContainer(container("warmup").gpu("1"))
                    .container(container("main").limit("cpu", "1")).build()));
        }

        @Test
        void memoryPercentageIsNotValidated() {
            Admission admission = admit(v29, pod("pct").container(container("main").gpu("1")
                    .limit(NVIDIA_GPU_MEMORY_PERCENTAGE, "150")).build());

            JsonNode patched = admission.patchedPod();
            assertThat(admission.allowed()).isTrue();
            assertThat(limits(patched, 0).has(NVIDIA_GPU_CORES)).isFalse();
            assertThat(patched.path("spec").path("schedulerName").asString()).isEqualTo("hami-scheduler");
        }

        @Test
        void v1beta1WorksInCompatModeToo() {
            Admission admission = fixture.client.admit(v29, Reviews.podCreate(Reviews.V1BETA1,
                    pod("beta").container(container("main").limit(NVIDIA_GPU_MEMORY, "1024")).build()));

            assertThat(admission.answer().path("apiVersion").asString()).isEqualTo(Reviews.V1BETA1);
            assertThat(limits(admission.patchedPod(), 0).path(NVIDIA_GPU).asString()).isEqualTo("1");
        }

        @Test
        void quotaIsStillChecked() {
            assertDenied(admit(v29, pod("big").namespace("team-quota").container(container("main")
                    .limit(NVIDIA_GPU_MEMORY, "3000").limit(NVIDIA_GPU_CORES, "10")).build()),
                    "exceeding resource quota");
        }
    }
}
