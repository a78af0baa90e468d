package io.tenantgateway.agentfixtures.parts.alpha;

import io.tenantgateway.agent.k8s.KubernetesPermissions;
import io.tenantgateway.agent.part.Part;
import io.tenantgateway.agent.part.PartContext;
import java.util.List;
import java.util.Set;

/** A fixture part that minds its own business. */
public class AlphaPart implements Part {
    public static final String NAME = "alpha";

    @Override
    public String name() {
        return NAME;
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
