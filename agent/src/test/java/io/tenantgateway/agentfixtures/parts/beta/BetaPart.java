package io.tenantgateway.agentfixtures.parts.beta;

import io.tenantgateway.agent.k8s.KubernetesPermissions;
import io.tenantgateway.agent.part.Part;
import io.tenantgateway.agent.part.PartContext;
import java.util.List;
import java.util.Set;

/** A fixture part that reaches into another part instead of going through its context: breaks the rule. */
public class BetaPart implements Part {
    private final io.tenantgateway.agentfixtures.parts.alpha.AlphaPart other = new io.tenantgateway.agentfixtures.parts.alpha.AlphaPart();

    @Override
    public String name() {
        return io.tenantgateway.agentfixtures.parts.alpha.AlphaPart.NAME + "-beta";
    }

    @Override
    public List<String> checks(boolean apiClient) {
        return List.of();
    }

    @Override
    public boolean needsApi() {
        return false;
    }

    @Override
    public boolean needsNodeName() {
        return false;
    }

    @Override
    public Set<KubernetesPermissions.Use> apiUses(boolean apiClient) {
        return Set.of();
    }

    @Override
    public void start(PartContext context) {
    }

    @Override
    public void close() {
    }
}
