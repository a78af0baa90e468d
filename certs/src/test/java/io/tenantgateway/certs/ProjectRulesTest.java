package io.tenantgateway.certs;

import io.tenantgateway.archrules.ProjectRulesContract;

/** The shared architecture rules on this module's classes (certs depends on common only). */
class ProjectRulesTest extends ProjectRulesContract {
    ProjectRulesTest() {
        super("io.tenantgateway.certs");
    }
}
