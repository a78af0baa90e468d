package io.tenantgateway.webhook;

import static org.assertj.core.api.Assertions.assertThat;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.tenantgateway.webhook.AdmissionClient.Admission;
import io.tenantgateway.webhook.policy.DeviceConfig;
import io.tenantgateway.webhook.policy.HamiCompat;
import io.tenantgateway.webhook.policy.PolicyConfig;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * HAMi's vendor loop (spec hami-vendors.md §1, §3) through the real webhook over HTTPS: every vendor's pods are
 * found in both compat modes, mixed pods get the exact pod HAMi makes, vendor errors answer 500 with HAMi's text.
 * Each rule on its own is pinned down on the pure policy in VendorRulesTest; this class keeps to what only the
 * server path shows (patch application, codes, flags reaching the policy).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class VendorAdmissionIT {
    static WebhookFixture fixture;
    static int v210;
    static int v29;
    static int flagsOff;

    @BeforeAll
    static void startServers() {
        fixture = new WebhookFixture();
        PolicyConfig enabled = PolicyConfig.defaults().withEnableAscend(true).withEnableIluvatar(true);
        v210 = fixture.start(WebhookFixture.loopback().policy(enabled).build(), DeviceConfig.defaults(), null,
                new PrometheusRegistry()).port();
        v29 = fixture.start(WebhookFixture.loopback().policy(enabled.withCompat(HamiCompat.V2_9)).build(),
                DeviceConfig.defaults(), null, new PrometheusRegistry()).port();
        flagsOff = fixture.start(WebhookFixture.loopback().build()).port();
    }

    @AfterAll
    static void stopServers() {
        fixture.close();
    }

    static ObjectNode json(String text) {
        return (ObjectNode) Pods.JSON.readTree(text.replace('\'', '"'));
    }

    static Admission admit(int port, ObjectNode pod) {
        return fixture.client.admit(port, Reviews.podCreate(pod));
    }

    static void assertErrored(Admission admission, String message) {
        assertThat(admission.allowed()).isFalse();
        assertThat(admission.code()).isEqualTo(500);
        assertThat(admission.message()).isEqualTo(message);
        assertThat(admission.patch()).isNull();
    }

    @Test
    void everyVendorsCountMakesThePodHamisInBothModes() {
        String[] v210Names = {"hygon.com/dcunum", "cambricon.com/vmlu", "metax-tech.com/gpu", "metax-tech.com/sgpu",
            "kunlunxin.com/xpu", "kunlunxin.com/vxpu", "enflame.com/gcu", "enflame.com/drs-gcu", "mthreads.com/vgpu",
            "aws.amazon.com/neuron", "amd.com/gpu", "vastaitech.com/va", "birentech.com/gpu",
            "huawei.com/Ascend910B3", "iluvatar.ai/BI-V100-vgpu"};
        for (String name : v210Names) {
            Admission admission = admit(v210, json("{'metadata':{'name':'p','annotations':{}},'spec':{'containers':"
                    + "[{'name':'c','resources':{'limits':{'" + name + "':'1'},'requests':{'" + name + "':'1'}}}]}}"));
            assertThat(admission.allowed()).as(name + ": " + admission.message()).isTrue();
            assertThat(admission.patchedPod().path("spec").path("schedulerName").asString()).as(name)
                    .isEqualTo("hami-scheduler");
        }
        for (String name : new String[] {"hygon.com/dcunum", "metax-tech.com/sgpu", "kunlunxin.com/vxpu",
            "enflame.com/vgcu", "mthreads.com/vgpu", "aws.amazon.com/neuroncore", "amd.com/gpu",
            "huawei.com/Ascend910B3", "iluvatar.ai/BI-V100-vgpu"}) {
            Admission admission = admit(v29, json("{'metadata':{'name':'p','annotations':{}},'spec':{'containers':"
                    + "[{'name':'c','resources':{'limits':{'" + name + "':'1'},'requests':{'" + name + "':'1'}}}]}}"));
            assertThat(admission.allowed()).as(name + ": " + admission.message()).isTrue();
            assertThat(admission.patchedPod().path("spec").path("schedulerName").asString()).as(name)
                    .isEqualTo("hami-scheduler");
        }
    }

    @Test
    void ascendAndIluvatarPodsAreNotHamisWithoutTheirFlags() {
        Admission admission = admit(flagsOff, json("{'metadata':{'name':'p'},'spec':{'containers':[{'name':'c',"
                + "'resources':{'limits':{'huawei.com/Ascend910B4':'1','iluvatar.ai/MR-V100-vgpu':'2'}}}]}}"));
        assertThat(admission.allowed()).isTrue();
        assertThat(admission.patch()).as("no patch").isNull();
    }

    @Test
    void nvidiaAndAscendContainersInOnePod() {
        ObjectNode original = json("{'metadata':{'name':'p'},'spec':{'containers':["
                + "{'name':'cuda','resources':{'limits':{'nvidia.com/gpu':'1'}}},"
                + "{'name':'npu','resources':{'limits':{'huawei.com/Ascend910B4':'1','huawei.com/Ascend910B4-memory':"
                + "'6000'},'requests':{'huawei.com/Ascend910B4':'1'}}}]}}");
        JsonNode expected = json("{'metadata':{'name':'p'},'spec':{'schedulerName':'hami-scheduler','containers':["
                + "{'name':'cuda','resources':{'limits':{'nvidia.com/gpu':'1','nvidia.com/gpucores':'100'}}},"
                + "{'name':'npu','resources':{'limits':{'huawei.com/Ascend910B4':'1','huawei.com/Ascend910B4-memory':"
                + "'8192'},'requests':{'huawei.com/Ascend910B4':'1','huawei.com/Ascend910B4-memory':'8192'}}}]}}");
        for (int port : new int[] {v210, v29}) {
            Admission admission = admit(port, original);
            assertThat(admission.allowed()).as(admission.message()).isTrue();
            assertThat(admission.patchedPod()).isEqualTo(expected);
        }
    }

    @Test
    void oneContainerAskingForTwoVendors() {
        ObjectNode original = json("{'metadata':{'name':'p'},'spec':{'containers':[{'name':'c','resources':{"
                + "'limits':{'nvidia.com/gpu':'1','iluvatar.ai/MR-V50-vgpu':'2'}}}]}}");
        Admission admission = admit(v210, original);
        assertThat(admission.patchedPod()).isEqualTo(json("{'metadata':{'name':'p'},'spec':{'schedulerName':"
                + "'hami-scheduler','containers':[{'name':'c','resources':{'limits':{'nvidia.com/gpu':'1',"
                + "'iluvatar.ai/MR-V50-vgpu':'2','nvidia.com/gpucores':'100','iluvatar.ai/MR-V50.vCore':'200'}},"
                + "'env':[{'name':'SOL_CONTINER_NAME','value':'c'}]}]}}"));
    }

    @Test
    void initContainersInV210Only() {
        ObjectNode original = json("{'metadata':{'name':'p'},'spec':{'initContainers':[{'name':'warm','resources':{"
                + "'limits':{'kunlunxin.com/vxpu':'1','kunlunxin.com/vxpu-memory':'30000'}}}],"
                + "'containers':[{'name':'c','resources':{'limits':{'metax-tech.com/sgpu':'1'}}}]}}");
        assertThat(admit(v210, original).patchedPod()).isEqualTo(json("{'metadata':{'name':'p','annotations':{"
                + "'metax-tech.com/sgpu-qos-policy':'best-effort'}},'spec':{'schedulerName':'hami-scheduler',"
                + "'initContainers':[{'name':'warm','resources':{'limits':{'kunlunxin.com/vxpu':'1',"
                + "'kunlunxin.com/vxpu-memory':'49152'},'requests':{'kunlunxin.com/vxpu-memory':'49152'}}}],"
                + "'containers':[{'name':'c','resources':{'limits':{'metax-tech.com/sgpu':'1'}}}]}}"));
        assertThat(admit(v29, original).patchedPod()).isEqualTo(json("{'metadata':{'name':'p','annotations':{"
                + "'metax-tech.com/sgpu-qos-policy':'best-effort'}},'spec':{'schedulerName':'hami-scheduler',"
                + "'initContainers':[{'name':'warm','resources':{'limits':{'kunlunxin.com/vxpu':'1',"
                + "'kunlunxin.com/vxpu-memory':'30000'}}}],"
                + "'containers':[{'name':'c','resources':{'limits':{'metax-tech.com/sgpu':'1'}}}]}}"));
    }

    @Test
    void vendorErrorsAnswer500WithHamisText() {
        ObjectNode oddPair = json("{'spec':{'containers':[{'name':'c','resources':{'limits':{"
                + "'huawei.com/Ascend910C':'3'},'requests':{}}}]}}");
        assertErrored(admit(v210, oddPair), "Ascend910C device request must be 1 or 2*n, got 3");
        assertErrored(admit(v29, oddPair), "Ascend910C device request must be 1 or 2*n, got 3");
        assertErrored(admit(v210, json("{'spec':{'containers':[{'name':'c','resources':{'limits':{"
                + "'mthreads.com/vgpu':'1','mthreads.com/sgpu-memory':'3'}}}]}}")),
                "sGPU memory request value is invalid, valid values are [2, 4, 8, 16, 32, 64, 96]");
        assertErrored(admit(v29, json("{'spec':{'containers':[{'name':'c','resources':{'limits':{"
                + "'mthreads.com/vgpu':'2'}}}]}}")), "panic: assignment to entry in nil map [recovered]");
        assertErrored(admit(v210, json("{'metadata':{'annotations':{'metax-tech.com/sgpu-app-class':'x'}},"
                + "'spec':{'containers':[{'name':'ok','resources':{'limits':{'nvidia.com/gpu':'1'}}},{'name':'c',"
                + "'resources':{'limits':{'metax-tech.com/sgpu':'1'}}}]}}")),
                "metax-tech.com/sgpu-app-class must be set one of [online, offline]");
    }
}
