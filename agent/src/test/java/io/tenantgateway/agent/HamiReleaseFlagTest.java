package io.tenantgateway.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tenantgateway.hami.HamiRelease;
import org.junit.jupiter.api.Test;

/**
 * Which HAMi release's reading of this node {@code doctor}, {@code /ui} and {@code /debug/devices} show: the
 * {@code --hami-compat} (v2.10 by default), with the webhook on or off.
 */
class HamiReleaseFlagTest {

    @Test
    void hamiCompatAcceptsHamisSpellingsAndNamesTheReleasesOtherwise() {
        assertThatThrownBy(() -> io.tenantgateway.agent.webhook.WebhookFlags.parseHamiCompat("v3"))
                .hasMessage("--hami-compat: 'v3' (expected: one of v2.10, v2.9)");
        assertThat(io.tenantgateway.agent.webhook.WebhookFlags.parseHamiCompat("2.9.0")).isEqualTo(HamiRelease.V2_9);
        assertThat(io.tenantgateway.agent.webhook.WebhookFlags.parseHamiCompat("v2.10")).isEqualTo(HamiRelease.V2_10);
    }

    @Test
    void hamiCompatDecidesWithOrWithoutTheWebhook() {
        assertThat(AgentCommand.parse("--tunnel=false", "--node-name=worker-1",
                "--webhook-tls-secret=kube-system/tls", "--hami-compat=v2.9").toConfig().hamiRelease())
                .isEqualTo(HamiRelease.V2_9);
        assertThat(AgentCommand.parse("--tunnel=false", "--node-name=worker-1",
                "--webhook-tls-secret=kube-system/tls").toConfig().hamiRelease()).isEqualTo(HamiRelease.V2_10);
        assertThat(AgentCommand.parse("--tunnel=false", "--node-name=worker-1", "--device-source=mock", "--mock-gpus=L4-24GB",
                "--hami-compat=v2.9").toConfig().hamiRelease()).as("no webhook").isEqualTo(HamiRelease.V2_9);
        assertThat(AgentCommand.parse("--tunnel=false", "--node-name=worker-1", "--device-source=mock",
                "--mock-gpus=L4-24GB").toConfig().hamiRelease()).as("no webhook, default").isEqualTo(HamiRelease.V2_10);
    }
}
