package io.tenantgateway.agentfixtures.parts;

import io.tenantgateway.agentfixtures.parts.alpha.AlphaPart;

/** A fixture configuration that describes a part itself (calls into it) instead of holding its settings. */
public record Settings(AlphaPart alpha) {
    public String describe() {
        return alpha.plan().name();
    }
}
