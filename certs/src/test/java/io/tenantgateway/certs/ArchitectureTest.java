package io.tenantgateway.certs;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/** The pure parts of the PKI never touch I/O frameworks. */
class ArchitectureTest {
    private final JavaClasses classes = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS).importPackages("io.tenantgateway.certs");

    @Test
    void renewalPolicyAndRequestsArePure() {
        noClasses().that().haveSimpleNameStartingWith("RenewalPolicy")
                .or().haveSimpleName("CertificateRequest").or().haveSimpleName("VerificationResult")
                .should().dependOnClassesThat().resideInAnyPackage("io.netty..", "io.vertx..")
                .check(classes);
    }

    @Test
    void onlyTheContextFactoriesKnowVertx() {
        noClasses().that().doNotHaveSimpleName("VertxTls")
                .should().dependOnClassesThat().resideInAnyPackage("io.vertx..")
                .check(classes);
    }
}
