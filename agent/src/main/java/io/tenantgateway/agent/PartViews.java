package io.tenantgateway.agent;

import io.tenantgateway.agent.deviceplugin.DevicePluginPart;
import io.tenantgateway.agent.devices.DeviceRegistrar;
import io.tenantgateway.agent.devices.DevicesPart;
import io.tenantgateway.agent.locks.AllocationController;
import io.tenantgateway.agent.locks.LockControllerPart;
import io.tenantgateway.agent.webhook.WebhookCertificateController;
import io.tenantgateway.agent.webhook.WebhookPart;
import io.tenantgateway.deviceplugin.DevicePlugin;
import io.tenantgateway.webhook.WebhookServer;
import java.util.Optional;

/**
 * What each part shows of itself, read from the running {@link Agent} for the admin views ({@link AgentAdminStatus})
 * and the tests: the part by its name and a cast in a lambda, never a class literal or method reference, which would
 * load a part's classes (the webhook's: Vert.x) in an agent where it is off. {@code Agent} itself knows no part.
 */
public final class PartViews {
    private PartViews() {
    }

    public static Optional<WebhookServer> webhook(Agent agent) {
        return agent.part(WebhookPart.NAME).flatMap(part -> ((WebhookPart) part).server());
    }

    public static Optional<WebhookCertificateController> webhookCertificates(Agent agent) {
        return agent.part(WebhookPart.NAME).flatMap(part -> ((WebhookPart) part).certificates());
    }

    public static Optional<DeviceRegistrar> devices(Agent agent) {
        return agent.part(DevicesPart.NAME).flatMap(part -> ((DevicesPart) part).registrar());
    }

    public static Optional<AllocationController> allocation(Agent agent) {
        return agent.part(LockControllerPart.NAME).flatMap(part -> ((LockControllerPart) part).controller());
    }

    public static Optional<DevicePlugin> devicePlugin(Agent agent) {
        return agent.part(DevicePluginPart.NAME).flatMap(part -> ((DevicePluginPart) part).plugin());
    }
}
