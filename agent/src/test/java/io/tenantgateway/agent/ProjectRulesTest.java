package io.tenantgateway.agent;

import io.tenantgateway.archrules.ProjectRulesContract;

/** The shared architecture rules on this module's classes and those of the modules it depends on. */
class ProjectRulesTest extends ProjectRulesContract {
    ProjectRulesTest() {
        super("io.tenantgateway.agent", "io.tenantgateway.hami", "io.tenantgateway.tunnel");
    }
}
