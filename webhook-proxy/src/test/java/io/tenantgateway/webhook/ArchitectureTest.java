package io.tenantgateway.webhook;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/** Layering inside the webhook. That policy and quota stay pure (no I/O, client, logging) is the shared rule in {@link ProjectRulesTest}. */
class ArchitectureTest {
    static final JavaClasses CLASSES = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("io.tenantgateway.webhook");

    @Test
    void policyAndQuotaDoNotReachIntoTheServerOrProxy() {
        noClasses().that().resideInAnyPackage("..webhook.policy..", "..webhook.quota..")
                .should().dependOnClassesThat().resideInAnyPackage("io.tenantgateway.webhook", "..webhook.proxy..")
                .check(CLASSES);
    }

    @Test
    void proxyDoesNotReachBackIntoTheServer() {
        noClasses().that().resideInAPackage("..webhook.proxy..")
                .should().dependOnClassesThat().resideInAnyPackage("io.tenantgateway.webhook",
                        "..webhook.policy..")
                .check(CLASSES);
    }
}
