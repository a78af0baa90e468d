package io.tenantgateway.archrules;

import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClasses;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The project's shared architecture rules (no package cycles, tools never imported by the runtime, pure packages
 * stay pure) as tests: each module's {@code ProjectRulesTest} extends this and names its own package and the
 * packages of the modules it depends on, which the import must see (the rules would pass on nothing otherwise).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
public abstract class ProjectRulesContract {
    private static JavaClasses classes;

    private final List<String> expectedPackages;

    /** @param expectedPackages this module's root package first, then those of modules it depends on */
    protected ProjectRulesContract(String... expectedPackages) {
        this.expectedPackages = List.of(expectedPackages);
    }

    /** One import per test JVM: this module's production classes and those of the modules it depends on. */
    protected static synchronized JavaClasses classes() {
        if (classes == null) {
            classes = ArchitectureRules.productionClasses();
        }
        return classes;
    }

    @Test
    void importSeesThisModuleAndTheModulesItDependsOn() {
        for (String expected : expectedPackages) {
            assertThat(classes().containPackage(expected)).as("imported classes contain %s", expected).isTrue();
        }
    }

    @Test
    void noPackageCycles() {
        ArchitectureRules.freeOfPackageCycles(ArchitectureRules.ROOT).check(classes());
    }

    @Test
    void toolsAreNeverImportedByTheRuntime() {
        ArchitectureRules.toolsNotImportedByRuntime(ArchitectureRules.TOOLS_PACKAGE).check(classes());
    }

    @Test
    void purePackagesStayPure() {
        ArchitectureRules.pure(ArchitectureRules.PURE_PACKAGES).check(classes());
        ArchitectureRules.jdkOnly(ArchitectureRules.JDK_ONLY_PACKAGES).check(classes());
    }
}
