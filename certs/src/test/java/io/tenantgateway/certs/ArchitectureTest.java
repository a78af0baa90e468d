package io.tenantgateway.certs;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/**
 * Only the Vert.x plumbing package ({@code certs.vertx}: TLS options, server limits) knows Vert.x. The pure renewal
 * policy is covered by package ({@link ProjectRulesTest}).
 */
class ArchitectureTest {
    private final JavaClasses classes = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS).importPackages("io.tenantgateway.certs");

    @Test
    void onlyTheVertxPackageKnowsVertx() {
        noClasses().that().resideOutsideOfPackage("io.tenantgateway.certs.vertx..")
                .should().dependOnClassesThat().resideInAnyPackage("io.vertx..")
                .check(classes);
    }
}
