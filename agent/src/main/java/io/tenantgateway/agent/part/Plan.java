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
 * any needs the API), whether it needs this node's name, the parts it starts after, and what it adds when the agent
 * has an API client anyway (the webhook's quota check). Immutable; built as
 * {@code Plan.of(NAME).withNodeName().check(…).uses(…)}, {@code NAME} being the part's constant.
 *
 * @param name the part's noun
 * @param checks its readiness checks, in the order the health port lists them
 * @param uses what it does with the API (it needs the API when there is any)
 * @param needsNodeName whether it starts only once this node's name is known
 * @param after the parts (by name) that start before it when they are enabled
 * @param usesWithApi what it does with the API when the agent has a client
 */
public record Plan(String name, List<Check> checks, Set<Use> uses, boolean needsNodeName, List<String> after,
        Set<Use> usesWithApi) {
    /**
     * A readiness check.
     *
     * @param withApiOnly whether the part has it only when the agent has an API client
     */
    public record Check(String name, boolean withApiOnly) {
        public Check {
            requireNonNull(name, "name");
        }
    }

    public Plan {
        requireNonNull(name, "name");
        checks = List.copyOf(checks);
        uses = copy(uses);
        after = List.copyOf(after);
        usesWithApi = copy(usesWithApi);
    }

    /** A part named {@code name} that needs nothing yet. */
    public static Plan of(String name) {
        return new Plan(name, List.of(), Set.of(), false, List.of(), Set.of());
    }

    /** Plus readiness checks. */
    public Plan check(String... names) {
        return withChecks(false, names);
    }

    /** Plus API uses (the part then needs the API). */
    public Plan uses(Use... more) {
        return new Plan(name, checks, union(uses, more), needsNodeName, after, usesWithApi);
    }

    /** Starts once the node name is known. */
    public Plan withNodeName() {
        return new Plan(name, checks, uses, true, after, usesWithApi);
    }

    /**
     * Starts after the parts named {@code parts} (their {@code NAME} constants), when they are enabled: by name, parts
     * do not link each other. A name that is no part is refused when the list of parts is built ({@link PartKind}).
     */
    public Plan after(String... parts) {
        List<String> more = new ArrayList<>(after);
        more.addAll(List.of(parts));
        return new Plan(name, checks, uses, needsNodeName, more, usesWithApi);
    }

    /** Plus a readiness check and API uses that apply only when the agent has an API client. */
    public Plan withApi(String check, Use... moreUses) {
        return new Plan(name, withChecks(true, check).checks, uses, needsNodeName, after, union(usesWithApi,
                moreUses));
    }

    /** Whether the part talks to the API by itself (then the agent has an API client). */
    public boolean needsApi() {
        return !uses.isEmpty();
    }

    /** The readiness checks' names, in order, given whether the agent has an API client. */
    public List<String> checks(boolean apiClient) {
        return checks.stream().filter(check -> apiClient || !check.withApiOnly()).map(Check::name).toList();
    }

    /** The API uses, given whether the agent has an API client. */
    public Set<Use> uses(boolean apiClient) {
        return apiClient ? union(uses, usesWithApi.toArray(Use[]::new)) : uses;
    }

    private Plan withChecks(boolean withApiOnly, String... names) {
        List<Check> more = new ArrayList<>(checks);
        for (String check : names) {
            more.add(new Check(check, withApiOnly));
        }
        return new Plan(name, more, uses, needsNodeName, after, usesWithApi);
    }

    private static Set<Use> union(Set<Use> set, Use... more) {
        Set<Use> out = EnumSet.noneOf(Use.class);
        out.addAll(set);
        out.addAll(List.of(more));
        return Collections.unmodifiableSet(out);
    }

    private static Set<Use> copy(Set<Use> set) {
        return Collections.unmodifiableSet(set.isEmpty() ? EnumSet.noneOf(Use.class) : EnumSet.copyOf(set));
    }
}
