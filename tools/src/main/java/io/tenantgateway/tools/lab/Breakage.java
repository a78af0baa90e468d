package io.tenantgateway.tools.lab;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.common.config.ConfigException;
import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * A part of the lab broken on purpose, to show that the check guarding it fails with a clear reason
 * ({@code tenant-gateway lab --break=PART}, hidden; tests use {@link LabOptions}).
 */
public enum Breakage {
    /** Check 1: tenant-a's agent (worker-a's tunnel agent) presents a token its server does not know. */
    AGENT_TOKEN("agent-token", 1, Target.TENANT_A, "tenant-a's tunnel agent presents a wrong service-account token"),
    /** Check 2: tenant-a's node agent runs with {@code --device-source=none}. */
    DEVICE_REGISTRATION("device-registration", 2, Target.TENANT_A, "tenant-a's node agent registers no devices"),
    /** Check 3: tenant-b's agent runs with {@code --enable-webhook=false}: its webhook Service has no endpoint. */
    WEBHOOK("webhook", 3, Target.TENANT_B, "tenant-b's agent serves no webhook"),
    /** Check 4: tenant-a's node agent registers its GPU with split count 1, so no two pods can share it. */
    GPU_SHARING("gpu-sharing", 4, Target.TENANT_A, "tenant-a's node agent registers its GPU with"
            + " --device-split-count=1"),
    /**
     * Check 5: tenant-b's agent runs with {@code --device-plugin=false}: kubelet has no plugin to call Allocate on, so
     * nobody completes an allocation (a mock device plugin's behaviour).
     */
    DEVICE_PLUGIN("device-plugin", 5, Target.TENANT_B, "tenant-b's agent runs without the device plugin"),
    /** Check 6: tenant-b's worker and pods live in tenant-a's API server. */
    SHARED_API_SERVER("shared-api-server", 6, Target.TENANT_B, "both tenants share one API server"),
    /**
     * Check 7: the agents dial any address their server asks for but their own admin port: upstream's behaviour,
     * {@code --dial-allow=0.0.0.0/0,::/0}.
     */
    DIAL_POLICY("dial-policy", 7, Target.BOTH, "the agents run with --dial-allow=0.0.0.0/0,::/0 (every target, as"
            + " upstream)"),
    /** Check 7: tenant-b's konnectivity-server accepts agents without client certificates. */
    SERVER_B_AUTH("server-b-auth", 7, Target.TENANT_B, "tenant-b's konnectivity-server authenticates nobody"),
    /** Check 8: tenant-a's konnectivity-server comes back on another port than its agent dials. */
    SERVER_ADDRESS("server-address", 8, Target.TENANT_A, "tenant-a's konnectivity-server restarts on a new port"),
    /** Check 9: tenant-b's agent serves its device plugin in a directory kubelet does not watch. */
    KUBELET_DIR("kubelet-dir", 9, Target.TENANT_B, "tenant-b's agent serves its device plugin where kubelet does"
            + " not look"),
    /**
     * Check 10: tenant-b's webhook runs without {@code --enable-ascend} (HAMi's chart default): an Ascend pod is not
     * HAMi's, so it never reaches HAMi's scheduler.
     */
    ASCEND_WEBHOOK("ascend-webhook", 10, Target.TENANT_B, "tenant-b's webhook runs without --enable-ascend"),
    /**
     * Check 11: tenant-b's agents run with {@code --monitor=false}: nobody reads HAMi-core's regions, exports the
     * containers' usage or removes a deleted pod's cache directory.
     */
    MONITOR("monitor", 11, Target.TENANT_B, "tenant-b's agents run without the vGPU monitor (--monitor=false)");

    /** Which tenant's parts a breakage changes. */
    enum Target { TENANT_A, TENANT_B, BOTH }

    private final String flagValue;
    private final int check;
    private final Target target;
    private final String description;

    Breakage(String flagValue, int check, Target target, String description) {
        this.flagValue = flagValue;
        this.check = check;
        this.target = target;
        this.description = description;
    }

    /** Whether this breakage changes the parts of the lab's first tenant ({@code tenant-a}) or second. */
    boolean appliesTo(boolean firstTenant) {
        return target == Target.BOTH || (target == Target.TENANT_A) == firstTenant;
    }

    /** The {@code --break} value. */
    public String flagValue() {
        return flagValue;
    }

    /** The check that must fail when this part is broken. */
    public int check() {
        return check;
    }

    public String description() {
        return description;
    }

    public static Breakage parse(String value) {
        requireNonNull(value, "value");
        String wanted = value.strip().toLowerCase(Locale.ROOT);
        for (Breakage breakage : values()) {
            if (breakage.flagValue.equals(wanted)) {
                return breakage;
            }
        }
        throw new ConfigException("--break", value, "one of " + Arrays.stream(values())
                .map(Breakage::flagValue).collect(Collectors.joining(", ")));
    }
}
