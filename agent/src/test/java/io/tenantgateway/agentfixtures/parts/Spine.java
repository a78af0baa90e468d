package io.tenantgateway.agentfixtures.parts;

import io.tenantgateway.agent.part.Part;
import io.tenantgateway.agentfixtures.parts.alpha.AlphaPart;

/** A fixture spine that builds a part itself instead of reading the one list: breaks the spine rule. */
public final class Spine {
    private Spine() {
    }

    public static Part first() {
        return new AlphaPart();
    }
}
