package io.tenantgateway.agent;

import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClasses;
import io.tenantgateway.archrules.ArchitectureRules;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The project's shared architecture rules (no package cycles, tools never imported by the runtime, pure
 * packages stay pure), on this module's classes and those of the modules it depends on.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ProjectRulesTest {
    private static final JavaClasses CLASSES = ArchitectureRules.productionClasses();

    /** The rules below would pass vacuously on an empty import. */
    @Test
    void importSeesThisModuleAndTheModulesItDependsOn() {
        assertThat(CLASSES.containPackage("io.tenantgateway.agent")).isTrue();
        assertThat(CLASSES.containPackage("io.tenantgateway.hami")).isTrue();
    }

    @Test
    void noPackageCycles() {
        ArchitectureRules.freeOfPackageCycles(ArchitectureRules.ROOT).check(CLASSES);
    }

    @Test
    void toolsAreNeverImportedByTheRuntime() {
        ArchitectureRules.toolsNotImportedByRuntime(ArchitectureRules.TOOLS_PACKAGE).check(CLASSES);
    }

    @Test
    void purePackagesStayPure() {
        ArchitectureRules.pure(ArchitectureRules.PURE_PACKAGES).check(CLASSES);
        ArchitectureRules.jdkOnly(ArchitectureRules.JDK_ONLY_PACKAGES).check(CLASSES);
    }
}
