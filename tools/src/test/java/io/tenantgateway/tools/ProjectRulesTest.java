package io.tenantgateway.tools;

import io.tenantgateway.archrules.ProjectRulesContract;

/** The shared architecture rules on the tools and the runtime they use. */
class ProjectRulesTest extends ProjectRulesContract {
    ProjectRulesTest() {
        super("io.tenantgateway.tools", "io.tenantgateway.agent");
    }
}
