package io.tenantgateway.agent.part;

import static java.util.Objects.requireNonNull;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;

/**
 * One entry of the list of parts ({@code Parts.all}): a part whether or not the configuration enables it. It names
 * the part, builds it when enabled, and says what the agent prints about it either way: its lines of the effective
 * configuration (the startup log, {@code /debug/config}, the status page), "off" ones too. Its {@code doctor} lines
 * come from {@link io.tenantgateway.agent.doctor.PartDoctor}, which an entry implements when it has any. An entry
 * is built from the part's own settings only, and must not load the part's classes while it is off (a tunnel-only
 * agent loads no Vert.x: build the part in {@link #part()}, inside a lambda or a method body).
 */
public interface PartKind {
    /** The part's name, as its {@link Plan#name()}. */
    String name();

    /** The part, built now, when the configuration enables it. */
    Optional<Part> part();

    /** Adds the part's lines of the effective configuration to {@code out} (secrets redacted); none by default. */
    default void describe(Map<String, String> out) {
    }

    /**
     * The heading of the part's section on the status page ({@code /ui}), whose content and {@code /debug/<name>}
     * JSON the running part gives ({@link Part#view()}); empty (the default) for a part with no section of its own.
     */
    default Optional<String> section() {
        return Optional.empty();
    }

    /** An entry with no lines of its own: {@code part} builds the part, or is empty when it is off. */
    static PartKind of(String name, Supplier<Optional<Part>> part) {
        requireNonNull(name, "name");
        requireNonNull(part, "part");
        return new PartKind() {
            @Override
            public String name() {
                return name;
            }

            @Override
            public Optional<Part> part() {
                return part.get();
            }
        };
    }

    /**
     * The enabled parts of {@code kinds}, in list order, once the list is sound: names unique, each part's plan named
     * as its entry, every name a plan starts after the name of an entry (enabled or not), and no part after itself
     * through others. Anything else is a bug in the list, refused here with the part and the name.
     *
     * @throws IllegalStateException naming the part and what is wrong
     */
    static List<Part> enabled(List<? extends PartKind> kinds) {
        Set<String> known = new HashSet<>();
        List<String> names = new ArrayList<>();
        for (PartKind kind : kinds) {
            if (!known.add(kind.name())) {
                throw new IllegalStateException("part " + kind.name() + ": listed twice in the list of parts"
                        + " (expected: one entry per part)");
            }
            names.add(kind.name());
        }
        Map<String, Part> parts = new LinkedHashMap<>();
        for (PartKind kind : kinds) {
            Optional<Part> part = kind.part();
            if (part.isEmpty()) {
                continue;
            }
            Plan plan = part.get().plan();
            if (!plan.name().equals(kind.name())) {
                throw new IllegalStateException("part " + kind.name() + ": its plan is named " + plan.name()
                        + " (expected: " + kind.name() + ")");
            }
            for (String before : plan.after()) {
                if (!known.contains(before)) {
                    throw new IllegalStateException("part " + plan.name() + ": starts after " + before + ", which is"
                            + " no part (expected: one of " + names + ")");
                }
            }
            parts.put(plan.name(), part.get());
        }
        for (String name : parts.keySet()) {
            checkNoCycle(name, parts, new ArrayList<>());
        }
        return List.copyOf(parts.values());
    }

    private static void checkNoCycle(String name, Map<String, Part> parts, List<String> path) {
        if (path.contains(name)) {
            path.add(name);
            throw new IllegalStateException("part " + path.get(0) + ": starts after itself: "
                    + String.join(" after ", path.subList(path.indexOf(name), path.size())));
        }
        Part part = parts.get(name);
        if (part == null) {
            return; // off: what starts after it starts without waiting
        }
        path.add(name);
        for (String before : part.plan().after()) {
            checkNoCycle(before, parts, path);
        }
        path.remove(path.size() - 1);
    }
}
