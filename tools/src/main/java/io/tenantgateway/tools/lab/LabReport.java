package io.tenantgateway.tools.lab;

import static java.util.Objects.requireNonNull;

import java.time.Duration;
import java.util.List;
import java.util.Set;

/**
 * What a lab run found, and where its parts listen.
 *
 * @param wall from the first certificate to the last check
 */
public record LabReport(List<CheckResult> checks, Duration wall, List<Endpoints> tenants, Set<Breakage> breakages) {
    public LabReport {
        checks = List.copyOf(requireNonNull(checks, "checks"));
        requireNonNull(wall, "wall");
        tenants = List.copyOf(requireNonNull(tenants, "tenants"));
        breakages = Set.copyOf(requireNonNull(breakages, "breakages"));
    }

    /** True when every check that ran passed. */
    public boolean passed() {
        return !checks.isEmpty() && checks.stream().allMatch(CheckResult::passed);
    }

    public long passedCount() {
        return checks.stream().filter(CheckResult::passed).count();
    }

    /** The result of check {@code number}. */
    public CheckResult check(int number) {
        return checks.stream().filter(c -> c.number() == number).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("check " + number + " (expected: one that ran)"));
    }

    /**
     * Where one tenant's parts listen (loopback only).
     *
     * @param konnectivityServer the agent listener
     * @param proxyService where kube-apiserver's side connects ({@code uds PATH} or {@code tcp HOST:PORT})
     * @param statusPage the agent's admin server {@code /ui}
     * @param metrics the agent's health server {@code /metrics}
     */
    public record Endpoints(String tenant, String apiServer, String kubeconfig, String konnectivityServer,
            String agentAuth, String proxyService, String webhookService, String agent, String statusPage,
            String metrics, String readyz) {
    }
}
