package io.tenantgateway.deviceplugin;

import io.tenantgateway.archrules.ProjectRulesContract;

/** The shared architecture rules on this module's classes and those of the modules it depends on. */
class ProjectRulesTest extends ProjectRulesContract {
    ProjectRulesTest() {
        super("io.tenantgateway.deviceplugin", "io.tenantgateway.hami", "io.tenantgateway.common");
    }
}
