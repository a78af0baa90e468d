package io.tenantgateway.agentfixtures.parts.beta;

import io.tenantgateway.agent.part.Part;
import io.tenantgateway.agent.part.PartContext;
import io.tenantgateway.agent.part.Plan;
import io.tenantgateway.agentfixtures.parts.alpha.AlphaPart;

/** A fixture part that reaches into another part instead of going through its context: breaks the rule. */
public class BetaPart implements Part {
    @Override
    public Plan plan() {
        return Plan.of(AlphaPart.NAME + "-beta");
    }

    @Override
    public void start(PartContext context) {
        new AlphaPart().start(context);
    }
}
