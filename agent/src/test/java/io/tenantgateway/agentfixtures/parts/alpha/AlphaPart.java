package io.tenantgateway.agentfixtures.parts.alpha;

import io.tenantgateway.agent.part.Part;
import io.tenantgateway.agent.part.PartContext;
import io.tenantgateway.agent.part.Plan;

/** A fixture part that minds its own business. */
public class AlphaPart implements Part {
    public static final String NAME = "alpha";

    @Override
    public Plan plan() {
        return Plan.of(NAME);
    }

    @Override
    public void start(PartContext context) {
    }
}
