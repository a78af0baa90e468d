package io.tenantgateway.archrules;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import io.tenantgateway.archfixtures.jdkonly.JdkOnly;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Each shared rule fails on a violating fixture class (io.tenantgateway.archfixtures, which the real
 * checks never import), built by the same factory the modules use; and the real import leaves the
 * fixtures out.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ArchitectureRulesTest {
    private static final String FIXTURES = "io.tenantgateway.archfixtures";
    private static final JavaClasses FIXTURE_CLASSES =
            ArchitectureRules.importWithoutResolving(new ClassFileImporter(), FIXTURES);

    @Test
    void cycleRuleFailsOnAPackageCycle() {
        assertThatThrownBy(() -> ArchitectureRules.freeOfPackageCycles(FIXTURES + ".cycle").check(FIXTURE_CLASSES))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("Cycle detected")
                .hasMessageContaining("archfixtures.cycle.a.A")
                .hasMessageContaining("archfixtures.cycle.b.B");
    }

    @Test
    void toolsRuleFailsWhenRuntimeCodeImportsATool() {
        assertThatThrownBy(() -> ArchitectureRules.toolsNotImportedByRuntime(FIXTURES + ".tools..")
                .check(FIXTURE_CLASSES))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("UsesTool");
    }

    @Test
    void pureRuleFailsOnAClassThatLogs() {
        assertThatThrownBy(() -> ArchitectureRules.pure(FIXTURES + ".pure..").check(FIXTURE_CLASSES))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("Logs")
                .hasMessageContaining("org.slf4j");
    }

    @Test
    void jdkOnlyRuleFailsOnALibraryDependencyThatThePureRuleAllows() {
        assertThatCode(() -> ArchitectureRules.pure(FIXTURES + ".jdkonly..").check(FIXTURE_CLASSES))
                .doesNotThrowAnyException();
        assertThatThrownBy(() -> ArchitectureRules.jdkOnly(FIXTURES + ".jdkonly..").check(FIXTURE_CLASSES))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("UsesLibrary")
                .hasMessageContaining("org.assertj")
                .hasMessageNotContaining("JdkOnly.values");
    }

    @Test
    void realImportLeavesTheFixturesAndRulesOut() {
        JavaClasses production = ArchitectureRules.productionClasses();

        assertThat(production.containPackage("io.tenantgateway.hami")).isTrue();
        assertThat(production.contain(JdkOnly.class)).isFalse();
        assertThat(production.contain(ArchitectureRules.class)).isFalse();
    }

    @Test
    void thisModuleFollowsTheRules() {
        ArchitectureRules.checkAll(ArchitectureRules.productionClasses());
    }
}
