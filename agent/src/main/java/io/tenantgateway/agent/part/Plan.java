package io.tenantgateway.agent.part;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.agent.k8s.KubernetesPermissions.Use;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * What a {@link Part} is and needs, known from the configuration before anything starts: its name (one noun: its
 * package, readiness-check prefix and docs), its readiness checks, the API calls it makes (the RBAC rows; a part with
 * any needs the API), whether it needs this node's name, and what it adds when the agent has an API client anyway
 * (the webhook's quota check). Immutable; built as {@code Plan.of("devices").withNodeName().check(…).uses(…)}.
 *
 * @param name the part's noun
 * @param checks its readiness checks
 * @param uses what it does with the API (it needs the API when there is any)
 * @param needsNodeName whether it starts only once this node's name is known
 * @param checksWithApi readiness checks it adds when the agent has an API client
 * @param usesWithApi what it does with the API when the agent has a client
 */
public record Plan(String name, List<String> checks, Set<Use> uses, boolean needsNodeName, List<String> checksWithApi,
        Set<Use> usesWithApi) {
    public Plan {
        requireNonNull(name, "name");
        checks = List.copyOf(checks);
        uses = Collections.unmodifiableSet(uses.isEmpty() ? EnumSet.noneOf(Use.class) : EnumSet.copyOf(uses));
        checksWithApi = List.copyOf(checksWithApi);
        usesWithApi = Collections.unmodifiableSet(usesWithApi.isEmpty() ? EnumSet.noneOf(Use.class)
                : EnumSet.copyOf(usesWithApi));
    }

    /** A part named {@code name} that needs nothing yet. */
    public static Plan of(String name) {
        return new Plan(name, List.of(), Set.of(), false, List.of(), Set.of());
    }

    /** Plus readiness checks. */
    public Plan check(String... names) {
        return new Plan(name, concat(checks, names), uses, needsNodeName, checksWithApi, usesWithApi);
    }

    /** Plus API uses (the part then needs the API). */
    public Plan uses(Use... more) {
        return new Plan(name, checks, union(uses, more), needsNodeName, checksWithApi, usesWithApi);
    }

    /** Starts once the node name is known. */
    public Plan withNodeName() {
        return new Plan(name, checks, uses, true, checksWithApi, usesWithApi);
    }

    /** Plus readiness checks and API uses that apply only when the agent has an API client. */
    public Plan withApi(List<String> moreChecks, Use... moreUses) {
        return new Plan(name, checks, uses, needsNodeName, concat(checksWithApi, moreChecks.toArray(String[]::new)),
                union(usesWithApi, moreUses));
    }

    /** Whether the part talks to the API by itself (then the agent has an API client). */
    public boolean needsApi() {
        return !uses.isEmpty();
    }

    /** The readiness checks, given whether the agent has an API client. */
    public List<String> checks(boolean apiClient) {
        return apiClient ? concat(checks, checksWithApi.toArray(String[]::new)) : checks;
    }

    /** The API uses, given whether the agent has an API client. */
    public Set<Use> uses(boolean apiClient) {
        return apiClient ? union(uses, usesWithApi.toArray(Use[]::new)) : uses;
    }

    private static List<String> concat(List<String> list, String... more) {
        List<String> out = new ArrayList<>(list);
        out.addAll(List.of(more));
        return out;
    }

    private static Set<Use> union(Set<Use> set, Use... more) {
        Set<Use> out = EnumSet.noneOf(Use.class);
        out.addAll(set);
        out.addAll(List.of(more));
        return out;
    }
}
