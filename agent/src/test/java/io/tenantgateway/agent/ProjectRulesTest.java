package io.tenantgateway.agent;

import static com.tngtech.archunit.core.domain.properties.HasName.Predicates.nameMatching;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.base.DescribedPredicate;
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

    /**
     * One known exception, left for the tools move (issue #15): the picocli root {@code TenantGatewayCommand}
     * lists the {@code lab}, {@code bench} and {@code ops} subcommands, and those use {@code Agent},
     * {@code AgentConfig} and {@code AgentCommand} from the same root package. The exception is by that one
     * class, so any other dependency from those packages back into the root still fails.
     */
    @Test
    void noPackageCycles() {
        ArchitectureRules.freeOfPackageCycles(ArchitectureRules.ROOT)
                .ignoreDependency(nameMatching("io\\.tenantgateway\\.agent\\.TenantGatewayCommand"),
                        DescribedPredicate.alwaysTrue())
                .check(CLASSES);
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
