package io.tenantgateway.tools.lab;

import static java.util.Objects.requireNonNull;

import java.time.Duration;
import java.util.List;
import java.util.Set;

/**
 * What a lab run found, and where its parts listen.
 *
 * @param wall from the first certificate to the last check
 * @param devices every device the workers registered, as HAMi's scheduler reads their nodes after the checks
 */
public record LabReport(List<CheckResult> checks, Duration wall, List<Endpoints> tenants, Set<Breakage> breakages,
        List<Device> devices) {
    public LabReport {
        checks = List.copyOf(requireNonNull(checks, "checks"));
        requireNonNull(wall, "wall");
        tenants = List.copyOf(requireNonNull(tenants, "tenants"));
        breakages = Set.copyOf(requireNonNull(breakages, "breakages"));
        devices = List.copyOf(requireNonNull(devices, "devices"));
    }

    /** A report without devices. */
    public LabReport(List<CheckResult> checks, Duration wall, List<Endpoints> tenants, Set<Breakage> breakages) {
        this(checks, wall, tenants, breakages, List.of());
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
     * @param agents the workers' agents, the first serving the webhook
     */
    public record Endpoints(String tenant, String apiServer, String kubeconfig, String konnectivityServer,
            String agentAuth, String proxyService, String webhookService, List<AgentEndpoints> agents) {
        public Endpoints {
            agents = List.copyOf(requireNonNull(agents, "agents"));
            if (agents.isEmpty()) {
                throw new IllegalArgumentException("tenant " + tenant + ": no agents (expected: at least one)");
            }
        }

        /** The first worker's node. */
        public String agent() {
            return agents.get(0).node();
        }
    }

    /**
     * Where one of a worker's agents listens (a Kamaji-style worker has two, one entry each).
     *
     * @param statusPage the agent's admin server {@code /ui}
     * @param metrics the agent's health server {@code /metrics}
     * @param doctor {@code tenant-gateway doctor} with the agent's own {@code run} flags: what checks this agent's
     *     setup from outside the process, as an operator would on the node
     * @param role {@code ""} for a worker's only agent; on a Kamaji-style worker {@code tunnel + webhook} or
     *     {@code node role, --tunnel=false}
     */
    public record AgentEndpoints(String node, String statusPage, String metrics, String readyz, String doctor,
            String role) {
        public AgentEndpoints {
            requireNonNull(role, "role");
        }

        /** A worker's only agent. */
        public AgentEndpoints(String node, String statusPage, String metrics, String readyz, String doctor) {
            this(node, statusPage, metrics, readyz, doctor, "");
        }
    }

    /**
     * One registered device.
     *
     * @param vendor {@code NVIDIA}, {@code Hygon} or {@code Ascend}
     * @param registerKey the node annotation it was read from
     * @param type HAMi's type ({@code NVIDIA L4}, {@code DCU-K100}, {@code Ascend910B4})
     * @param split how many pods may share it (the register {@code count})
     */
    public record Device(String tenant, String node, String vendor, String registerKey, String id, long index,
            String type, int memoryMiB, int cores, int split, boolean healthy) {
    }
}
