package io.tenantgateway.webhook.policy;

import io.tenantgateway.webhook.TlsAdmitter;
import io.tenantgateway.webhook.quota.QuotaLookup;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import tools.jackson.databind.JsonNode;

/**
 * Every case of {@link VendorRulesTest}, in both compat modes, through the real webhook over HTTPS: the same test
 * methods, with each admission posted as an AdmissionReview to a {@link io.tenantgateway.webhook.WebhookServer}
 * started once per (compat, device config, Ascend and Iluvatar flags, quota lookup) and read back from the answer
 * (allowed, status code, reason and message, the returned JSONPatch applied to the pod sent). The three cases that
 * build a vendor or only parse a device configuration stay on the pure policy, marked below.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class VendorRulesOverTlsIT extends VendorRulesTest {
    private static TlsAdmitter wire;

    @BeforeAll
    static void startClient() {
        wire = new TlsAdmitter();
    }

    @AfterAll
    static void closeServers() {
        if (wire != null) {
            wire.close();
        }
    }

    @Override
    Decision admit(PolicyConfig config, DeviceConfig devices, QuotaLookup quota, JsonNode pod, String namespace) {
        return wire.admit(config, devices, quota, pod, namespace);
    }

    @Override
    @Test
    @Disabled("policy-only: builds an Enflame vendor with a shared-GCU factor the server never has")
    void enflameVgcuV29WithARegisteredNode() {
    }

    @Override
    @Test
    @Disabled("policy-only: builds an AWS Neuron vendor with one core per device, which the server never has")
    void awsNeuronCoresNeedingMoreDevicesThanAnIntHolds() {
    }

    @Override
    @Test
    @Disabled("policy-only: parses a device configuration, admits nothing")
    void hygonMemoryFactorIsReadAndChecked() {
    }
}
