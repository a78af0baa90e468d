package io.tenantgateway.tools.bench;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.common.config.ConfigException;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.Set;

/**
 * What one bench run does.
 *
 * @param scenarios the scenarios to run (in {@link Scenario} order)
 * @param quick whether {@link #sizes} are the quick ones (reported, so a quick table is never mistaken for a full one)
 * @param sizes how much each scenario moves, warm-ups and repeats
 * @param external a konnectivity-server to use instead of the in-process one, or {@code null}
 * @param agentMaxDataSize the agent's largest DATA (its target read size), or 0 for the agent's default; a knob
 *     for tuning experiments
 * @param launcher the launcher the footprint scenario starts the agent with ({@code bin/proxy-agent})
 * @param footprintJavaOptions JVM options the footprint scenario adds to the agent's (JAVA_OPTS); a knob for
 *     tuning experiments, "" otherwise
 */
public record BenchConfig(Set<Scenario> scenarios, boolean quick, BenchSizes sizes, ExternalServer external,
        int agentMaxDataSize, Path launcher, String footprintJavaOptions) {

    public BenchConfig {
        requireNonNull(scenarios, "scenarios");
        if (scenarios.isEmpty()) {
            throw new ConfigException("--scenario", "none", "at least one");
        }
        scenarios = Set.copyOf(EnumSet.copyOf(scenarios));
        requireNonNull(sizes, "sizes");
        requireNonNull(launcher, "launcher");
        requireNonNull(footprintJavaOptions, "footprintJavaOptions");
        if (agentMaxDataSize < 0) {
            throw new ConfigException("--agent-max-data-size", agentMaxDataSize, "> 0, or 0 for the default");
        }
    }

    public BenchConfig(Set<Scenario> scenarios, boolean quick, BenchSizes sizes, ExternalServer external,
            int agentMaxDataSize) {
        this(scenarios, quick, sizes, external, agentMaxDataSize, FootprintScenario.defaultLauncher(), "");
    }

    public boolean runs(Scenario scenario) {
        return scenarios.contains(scenario);
    }
}
