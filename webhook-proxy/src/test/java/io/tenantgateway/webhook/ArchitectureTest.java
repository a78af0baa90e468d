package io.tenantgateway.webhook;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/** The admission policy and quota packages stay pure: no network stack, no Kubernetes client. */
class ArchitectureTest {
    static final JavaClasses CLASSES = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("io.tenantgateway.webhook");

    @Test
    void policyAndQuotaAreFreeOfIo() {
        noClasses().that().resideInAnyPackage("..webhook.policy..", "..webhook.quota..")
                .should().dependOnClassesThat().resideInAnyPackage("io.vertx..", "io.netty..",
                        "io.fabric8.kubernetes..", "io.prometheus..", "io.tenantgateway.webhook", "..webhook.proxy..")
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
