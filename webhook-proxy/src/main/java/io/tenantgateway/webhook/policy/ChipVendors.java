package io.tenantgateway.webhook.policy;

import static java.util.Objects.requireNonNull;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * The backends of one vendor that HAMi runs once per configured chip (Ascend's {@code vnpus}, Iluvatar's
 * {@code iluvatars}), as one {@link Vendor} that finds the chips a container asks for by resource name instead of
 * asking every chip: built once per configuration version, so an admission costs the same whether 7 or 4,096 chips
 * are configured (issue 31: 3,000 chips made each small admission walk 3,000 backends).
 *
 * <p>The result is HAMi's, chip by chip in file order: a chip acts on a container only when its count resource is
 * in the container's limits at its turn, so the chips visited are those named by the limits (looked up in a map),
 * those a visited chip's own writes make named (a chip's memory or core name that is another chip's count name;
 * only later chips can see such a write, as in HAMi), and those that act on every container
 * ({@link Chip#actsOnEveryContainer}: Ascend with {@code overwriteEnv}, one env entry per such chip, HAMi's output,
 * appended without looking the chip up).
 * The quota check asks only the chips whose count resource some container declares ({@link #quotaVendors}).
 *
 * <p>Immutable and thread-safe; the containers it receives belong to one admission.
 */
final class ChipVendors implements Vendor {

    /** One chip's backend, with what the index needs to know about it. */
    interface Chip extends Vendor {
        /** The resource whose presence in a container's limits makes the chip act ({@code ""}: none). */
        String countName();

        /** The resource names the chip's mutation may add to a container's limits, besides its count name. */
        List<String> writtenNames();

        /** Whether the chip changes a container that does not ask for it ({@link #mutateUnasked}). */
        default boolean actsOnEveryContainer() {
            return false;
        }

        /**
         * What {@link #mutate} does to a container whose limits do not hold {@link #countName()}: nothing, unless
         * the chip {@linkplain #actsOnEveryContainer acts on every container}.
         */
        default void mutateUnasked(ContainerNode container) {
        }
    }

    private static final int[] NONE = new int[0];

    private final String name;
    private final List<Chip> chips;
    /** Count resource name → positions in {@link #chips}, ascending. */
    private final Map<String, int[]> byCountName;
    private final int[] everyContainer;

    ChipVendors(String name, List<? extends Chip> chips) {
        this.name = requireNonNull(name, "name");
        this.chips = List.copyOf(requireNonNull(chips, "chips"));
        Map<String, List<Integer>> index = new HashMap<>();
        List<Integer> every = new ArrayList<>();
        for (int i = 0; i < this.chips.size(); i++) {
            Chip chip = this.chips.get(i);
            if (!chip.countName().isEmpty()) {
                index.computeIfAbsent(chip.countName(), k -> new ArrayList<>()).add(i);
            }
            if (chip.actsOnEveryContainer()) {
                every.add(i);
            }
        }
        Map<String, int[]> positions = new HashMap<>();
        index.forEach((resource, list) -> positions.put(resource, toArray(list)));
        this.byCountName = Map.copyOf(positions);
        this.everyContainer = toArray(every);
    }

    private static int[] toArray(List<Integer> list) {
        return list.stream().mapToInt(Integer::intValue).toArray();
    }

    @Override
    public String name() {
        return name;
    }

    /** The chips, in file order. */
    List<Chip> chips() {
        return chips;
    }

    /** The positions of the chips whose count resource is {@code resource}, ascending (none: empty). */
    int[] positions(String resource) {
        return byCountName.getOrDefault(resource, NONE);
    }

    @Override
    public boolean mutate(ContainerNode container, PodNode pod) {
        if (chips.isEmpty()) {
            return false;
        }
        // Two ascending sequences merged: the chips the limits name (growing as visited chips write names), and
        // those that act on every container; one of the latter that is not named is unasked at its turn.
        TreeSet<Integer> named = named(container);
        boolean found = false;
        int every = 0;
        while (!named.isEmpty() || every < everyContainer.length) {
            int nextEvery = every < everyContainer.length ? everyContainer[every] : Integer.MAX_VALUE;
            if (named.isEmpty() || nextEvery < named.first()) {
                chips.get(nextEvery).mutateUnasked(container);
                every++;
                continue;
            }
            int next = named.pollFirst();
            if (next == nextEvery) {
                every++;
            }
            Chip chip = chips.get(next);
            found |= chip.mutate(container, pod);
            for (String written : chip.writtenNames()) {
                add(named, positions(written), next); // later chips see it at their turn; earlier ones had theirs
            }
        }
        return found;
    }

    /** The chips whose count resource the container's limits hold, ascending. */
    TreeSet<Integer> named(ContainerNode container) {
        TreeSet<Integer> pending = new TreeSet<>();
        for (String resource : container.limitNames()) {
            add(pending, positions(resource), -1);
        }
        return pending;
    }

    private static void add(TreeSet<Integer> pending, int[] positions, int after) {
        for (int position : positions) {
            if (position > after) {
                pending.add(position);
            }
        }
    }

    /**
     * The chips whose count resource a container of the pod declares (limits or requests, app and init
     * containers), in file order: every other chip counts nothing for the quota check.
     */
    @Override
    public List<Vendor> quotaVendors(PodNode pod) {
        TreeSet<Integer> declared = new TreeSet<>();
        for (List<ContainerNode> list : List.of(pod.initContainers(), pod.containers())) {
            for (ContainerNode container : list) {
                for (String resource : container.declaredNames()) {
                    add(declared, positions(resource), -1);
                }
            }
        }
        List<Vendor> vendors = new ArrayList<>(declared.size());
        declared.forEach(position -> vendors.add(chips.get(position)));
        return vendors;
    }
}
