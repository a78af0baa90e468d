package io.tenantgateway.webhook.policy;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.common.config.ConfigException;
import io.tenantgateway.hami.HamiRelease;
import java.util.regex.Pattern;

/**
 * The webhook-level settings of HAMi's admission policy (its scheduler flags).
 *
 * @param schedulerName written into {@code spec.schedulerName} of pods that ask for a HAMi resource
 *     (HAMi {@code --scheduler-name}, {@code hami-scheduler} in its chart); {@code ""} is HAMi's "unset": GPU pods
 *     are still mutated but keep the scheduler they name, and {@code spec.nodeName} is not checked
 * @param forceOverwriteDefaultScheduler whether a pod naming {@code default-scheduler} is taken over
 *     (HAMi {@code --force-overwrite-default-scheduler}, default true)
 * @param compat which HAMi release's decisions to reproduce
 * @param enableAscend whether the Ascend backends run (HAMi {@code --enable-ascend}; off in its chart, so Ascend
 *     pods are not HAMi's by default)
 * @param enableIluvatar whether the Iluvatar backends run (HAMi {@code --enable-iluvatar}; off in its chart)
 */
public record PolicyConfig(String schedulerName, boolean forceOverwriteDefaultScheduler, HamiRelease compat,
        boolean enableAscend, boolean enableIluvatar) {
    public static final String DEFAULT_SCHEDULER_NAME = "hami-scheduler";
    /** Kubernetes' {@code corev1.DefaultSchedulerName}. */
    public static final String KUBERNETES_DEFAULT_SCHEDULER = "default-scheduler";
    private static final Pattern DNS_SUBDOMAIN = Pattern.compile("[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?");

    public PolicyConfig {
        requireNonNull(schedulerName, "schedulerName");
        requireNonNull(compat, "compat");
        if (!schedulerName.isEmpty() && !DNS_SUBDOMAIN.matcher(schedulerName).matches()) {
            throw new ConfigException("--scheduler-name", "'" + schedulerName + "'",
                    "a DNS subdomain such as hami-scheduler, or \"\" to leave schedulerName alone");
        }
    }

    /** Ascend and Iluvatar off, as in HAMi's chart. */
    public PolicyConfig(String schedulerName, boolean forceOverwriteDefaultScheduler, HamiRelease compat) {
        this(schedulerName, forceOverwriteDefaultScheduler, compat, false, false);
    }

    /** {@code hami-scheduler}, force-overwrite on, v2.10, Ascend and Iluvatar off: what HAMi's chart deploys. */
    public static PolicyConfig defaults() {
        return new PolicyConfig(DEFAULT_SCHEDULER_NAME, true, HamiRelease.V2_10);
    }

    /** Whether a scheduler name is configured ({@code --scheduler-name=""} is HAMi's "unset"). */
    public boolean setsSchedulerName() {
        return !schedulerName.isEmpty();
    }

    public PolicyConfig withSchedulerName(String name) {
        return new PolicyConfig(name, forceOverwriteDefaultScheduler, compat, enableAscend, enableIluvatar);
    }

    public PolicyConfig withCompat(HamiRelease newCompat) {
        return new PolicyConfig(schedulerName, forceOverwriteDefaultScheduler, newCompat, enableAscend,
                enableIluvatar);
    }

    public PolicyConfig withForceOverwriteDefaultScheduler(boolean force) {
        return new PolicyConfig(schedulerName, force, compat, enableAscend, enableIluvatar);
    }

    public PolicyConfig withEnableAscend(boolean enable) {
        return new PolicyConfig(schedulerName, forceOverwriteDefaultScheduler, compat, enable, enableIluvatar);
    }

    public PolicyConfig withEnableIluvatar(boolean enable) {
        return new PolicyConfig(schedulerName, forceOverwriteDefaultScheduler, compat, enableAscend, enable);
    }
}
