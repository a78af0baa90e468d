package io.tenantgateway.tools.lab;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.common.config.ConfigException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collections;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * What one lab run does.
 *
 * @param checks the checks to run (1–11), in order; the whole lab is always set up
 * @param breakages parts broken on purpose (see {@link Breakage})
 * @param timeout the longest any single step waits for state to change (agents to become ready, an allocation to
 *     complete, a node lock to be released, a reconnect); a broken part costs at most this much per step. Network
 *     exchanges (dial, TLS, AdmissionReview) have kube-apiserver's webhook timeout, 10 s, instead.
 * @param workDir where certificates, tokens, kubeconfigs and sockets go; empty: a new temporary directory,
 *     deleted when the lab closes
 */
public record LabOptions(Set<Integer> checks, Set<Breakage> breakages, Duration timeout, Optional<Path> workDir) {
    public static final int CHECK_COUNT = 11;
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(20);

    public LabOptions {
        requireNonNull(checks, "checks");
        requireNonNull(breakages, "breakages");
        requireNonNull(timeout, "timeout");
        requireNonNull(workDir, "workDir");
        if (checks.isEmpty()) {
            throw new ConfigException("--checks", "[]", "at least one of 1-" + CHECK_COUNT);
        }
        for (int check : checks) {
            if (check < 1 || check > CHECK_COUNT) {
                throw new ConfigException("--checks", check, "1-" + CHECK_COUNT);
            }
        }
        if (timeout.isNegative() || timeout.isZero()) {
            throw new ConfigException("--timeout", timeout, "> 0");
        }
        checks = Collections.unmodifiableSortedSet(new TreeSet<>(checks)); // run in order
        breakages = Set.copyOf(breakages);
    }

    /** All eleven checks, nothing broken, the default timeout, a temporary work directory. */
    public static LabOptions defaults() {
        return new LabOptions(allChecks(), Set.of(), DEFAULT_TIMEOUT, Optional.empty());
    }

    public static Set<Integer> allChecks() {
        Set<Integer> all = new TreeSet<>();
        for (int i = 1; i <= CHECK_COUNT; i++) {
            all.add(i);
        }
        return all;
    }

    public boolean broken(Breakage breakage) {
        return breakages.contains(breakage);
    }

    public LabOptions withBreakages(Set<Breakage> value) {
        return new LabOptions(checks, value, timeout, workDir);
    }

    public LabOptions withChecks(Set<Integer> value) {
        return new LabOptions(value, breakages, timeout, workDir);
    }

    public LabOptions withTimeout(Duration value) {
        return new LabOptions(checks, breakages, value, workDir);
    }
}
