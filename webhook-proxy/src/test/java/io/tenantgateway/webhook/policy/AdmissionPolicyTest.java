package io.tenantgateway.webhook.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tenantgateway.hami.HamiRelease;
import io.tenantgateway.webhook.quota.InMemoryQuotaLookup;
import io.tenantgateway.webhook.quota.QuotaLookup;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** Decisions that are cheaper to pin down without a server (the full list runs through HTTPS in HamiAdmissionIT). */
class AdmissionPolicyTest {
    static final JsonMapper JSON = JsonMapper.builder().build();

    static JsonNode pod(String json) {
        return JSON.readTree(json.replace('\'', '"'));
    }

    static AdmissionPolicy policy(HamiRelease compat, QuotaLookup quota) {
        return new AdmissionPolicy(PolicyConfig.defaults().withCompat(compat), DeviceConfig.defaults(), quota);
    }

    @Test
    void originalIsNeverModifiedAndDecisionsAreImmutable() {
        JsonNode original = pod("{'spec':{'containers':[{'name':'c','resources':{'limits':{'nvidia.com/gpu':'1'}}}]}}");
        JsonNode copy = original.deepCopy();

        Decision decision = policy(HamiRelease.V2_10, QuotaLookup.NONE).admit(original, "ns");
        decision.mutated().withObjectProperty("spec").put("schedulerName", "tampered");

        assertThat(original).isEqualTo(copy);
        assertThat(decision.mutated().path("spec").path("schedulerName").asString()).isEqualTo("hami-scheduler");
        assertThat(JsonPatches.diff(original, decision.mutated())).hasSize(2);
    }

    @Test
    void validationErrorComesBeforeThePrivilegedDenial() {
        Decision decision = policy(HamiRelease.V2_10, QuotaLookup.NONE).admit(pod("{'spec':{'containers':[{'name':'c',"
                + "'securityContext':{'privileged':true},"
                + "'resources':{'limits':{'nvidia.com/gpu':'1','nvidia.com/gpumem-percentage':'101'}}}]}}"), "ns");

        assertThat(decision.outcome()).isEqualTo(Decision.Outcome.ERRORED);
        assertThat(decision.code()).isEqualTo(500);
    }

    @Test
    void privilegedInitContainerIsNamedFirst() {
        Decision decision = policy(HamiRelease.V2_10, QuotaLookup.NONE).admit(pod("{'spec':{"
                + "'initContainers':[{'name':'setup','securityContext':{'privileged':true}}],"
                + "'containers':[{'name':'c','securityContext':{'privileged':true},"
                + "'resources':{'limits':{'nvidia.com/gpu':'1'}}}]}}"), "ns");

        assertThat(decision.message()).isEqualTo("container setup is privileged");
    }

    @Test
    void quotaUsesTheMemoryFactorOnBothSides() {
        DeviceConfig devices = DeviceConfig.parse("nvidia:\n  memoryFactor: 4\n", "test");
        InMemoryQuotaLookup quota = new InMemoryQuotaLookup().put("ns", "nvidia.com/gpumem", 1000, 3000);
        AdmissionPolicy policy = new AdmissionPolicy(PolicyConfig.defaults(), devices, quota);

        // used 3000 (already scaled) + 250 x 4 = 4000 <= 1000 x 4: fits; 251 x 4 does not.
        assertThat(policy.admit(pod("{'spec':{'containers':[{'name':'c','resources':{'limits':"
                + "{'nvidia.com/gpumem':'250','nvidia.com/gpucores':'10'}}}]}}"), "ns").allowed()).isTrue();
        assertThat(policy.admit(pod("{'spec':{'containers':[{'name':'c','resources':{'limits':"
                + "{'nvidia.com/gpumem':'251','nvidia.com/gpucores':'10'}}}]}}"), "ns").message())
                .isEqualTo("exceeding resource quota");
    }

    @Test
    void quotaLimitZeroBlocksInV210AndMeansNoLimitInV29AndHugeRequestsDoNotOverflow() {
        InMemoryQuotaLookup quota = new InMemoryQuotaLookup().put("zero", "nvidia.com/gpumem", 0, 0)
                .put("tight", "nvidia.com/gpumem", 100, 0);
        JsonNode huge = pod("{'metadata':{'namespace':'tight'},'spec':{'containers':[{'name':'c','resources':"
                + "{'limits':{'nvidia.com/gpu':'9223372036854775807','nvidia.com/gpumem':'9223372036854775807',"
                + "'nvidia.com/gpucores':'1'}}}]}}");
        JsonNode one = pod("{'spec':{'containers':[{'name':'c','resources':"
                + "{'limits':{'nvidia.com/gpu':'1','nvidia.com/gpumem':'500'}}}]}}");

        // HAMi v2.10 (PR #2313): an explicit "0" in a ResourceQuota blocks every positive request.
        assertThat(policy(HamiRelease.V2_10, quota).admit(one, "zero").message()).isEqualTo("exceeding resource quota");
        // HAMi v2.9 reads 0 as "no limit".
        assertThat(policy(HamiRelease.V2_9, quota).admit(one, "zero").allowed()).isTrue();
        assertThat(policy(HamiRelease.V2_10, quota).admit(huge, "").message()).as("namespace from the pod")
                .isEqualTo("exceeding resource quota");
    }

    @Test
    void initContainersCountAsTheLargestOneInV210() {
        InMemoryQuotaLookup quota = new InMemoryQuotaLookup().put("ns", "nvidia.com/gpumem", 3000, 0);
        String initAndApp = "{'spec':{'initContainers':["
                + "{'name':'a','resources':{'limits':{'nvidia.com/gpumem':'2000','nvidia.com/gpucores':'1'}}},"
                + "{'name':'b','resources':{'limits':{'nvidia.com/gpumem':'%d','nvidia.com/gpucores':'1'}}}],"
                + "'containers':[{'name':'c','resources':{'limits':{'nvidia.com/gpumem':'1000','nvidia.com/gpucores':'1'}}}]}}";

        assertThat(policy(HamiRelease.V2_10, quota).admit(pod(String.format(initAndApp, 3000)), "ns").allowed()).isTrue();
        assertThat(policy(HamiRelease.V2_10, quota).admit(pod(String.format(initAndApp, 3001)), "ns").allowed())
                .isFalse();
    }

    @Test
    void failingQuotaLookupIsAnErrorNamingTheNamespace() {
        QuotaLookup broken = (namespace, resource) -> {
            throw new IllegalStateException("informer not synced");
        };
        Decision decision = policy(HamiRelease.V2_10, broken).admit(pod("{'spec':{'containers':[{'name':'c',"
                + "'resources':{'limits':{'nvidia.com/gpu':'1'}}}]}}"), "ns");

        assertThat(decision.code()).isEqualTo(500);
        assertThat(decision.message()).isEqualTo("quota lookup failed for namespace ns: informer not synced");
    }

    @Test
    void wrongShapesAreUndecodable() {
        AdmissionPolicy policy = policy(HamiRelease.V2_10, QuotaLookup.NONE);
        assertThat(policy.admit(pod("{'spec':{'containers':'none'}}"), "ns").message())
                .isEqualTo("undecodable pod: spec.containers: expected an array, got a string");
        assertThat(policy.admit(pod("{'spec':{'containers':[{'name':'c','securityContext':{'privileged':'yes'},"
                + "'resources':{'limits':{'nvidia.com/gpu':'1'}}}]}}"), "ns").message())
                .isEqualTo("undecodable pod: spec.containers[0].securityContext.privileged: expected a boolean, got a"
                        + " string");
        assertThat(policy.admit(JSON.readTree("[]"), "ns").code()).isEqualTo(400);
        assertThat(policy.admit(null, "ns").message()).isEqualTo("there is no content to decode");
        assertThat(policy.admit(JSON.readTree("null"), "ns").message()).isEqualTo("there is no content to decode");
    }

    @Test
    void configsValidateTheirValues() {
        assertThatThrownBy(() -> new PolicyConfig("Hami Scheduler", true, HamiRelease.V2_10))
                .hasMessage("--scheduler-name: 'Hami Scheduler' (expected: a DNS subdomain such as hami-scheduler,"
                        + " or \"\" to leave schedulerName alone)");
        assertThat(new PolicyConfig("", true, HamiRelease.V2_10).setsSchedulerName()).as("HAMi's unset").isFalse();
        assertThat(Optional.of(Decision.denied("x").withWarning("w").warnings())).contains(java.util.List.of("w"));
    }
}
