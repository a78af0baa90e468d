package io.tenantgateway.agent.part;

import java.util.List;

/**
 * A part's own flags: a picocli mixin (its {@code @Option} fields, each with the part's {@link #helpOrder()} as its
 * {@code order}) that {@code run} adds to its command line from the list of parts ({@code Parts.FLAGS}), so that a
 * new part adds no field to {@code run}, {@code AgentConfig} or the admin server. After parsing, {@link #kind} turns
 * the flags and what the parts share into the part's entry in the list of parts, checked.
 *
 * <p>Flags are parsed by every command that takes {@code run}'s flags ({@code run}, {@code doctor}, the lab), so an
 * implementation holds values only; the part's own classes load in {@link PartKind#part()}.
 */
public interface PartFlags {
    /**
     * The part's section of {@code run --help}: the {@code order} its options carry (unique among the sections; the
     * sections are listed in the order of the list of parts after {@code run}'s own).
     */
    int helpOrder();

    /** That section's heading, with when the part runs, e.g. "vGPU monitor (on when devices are registered)". */
    String helpTitle();

    /**
     * The part's entry in the list of parts: built from these flags and {@code shared}, the part off where its own
     * rule says so (for instance without devices).
     *
     * @throws io.tenantgateway.common.config.ConfigException naming the flag, the value and what is expected
     */
    PartKind kind(SharedSettings shared);

    /** One line each for what {@code run} warns about at start (a flag with no effect as given); none by default. */
    default List<String> warnings() {
        return List.of();
    }
}
