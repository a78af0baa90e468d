package io.tenantgateway.archrules;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.ArchConfiguration;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.core.importer.Location;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.library.dependencies.SliceRule;

/**
 * The architecture rules every module checks, written once. Rules select classes by package, never by
 * class list, so a class added to a pure package is covered without touching a test. Each rule is built
 * by a factory that takes the packages it governs: the modules apply it to {@code io.tenantgateway},
 * and {@code ArchitectureRulesTest} applies the same factory to the violating fixtures under
 * {@code io.tenantgateway.archfixtures} (a package the real rules never import) to show that it fails.
 */
public final class ArchitectureRules {
    /** The project's root package; every module's slices hang under it. */
    public static final String ROOT = "io.tenantgateway";

    /** Pure decision and wire-format code: no network stack, Kubernetes client, logging or metrics. */
    public static final String[] PURE_PACKAGES = {
        "io.tenantgateway.hami..",
        "io.tenantgateway.certs.policy..",
        "io.tenantgateway.tunnel.protocol..",
        "io.tenantgateway.tunnel.policy..",
        "io.tenantgateway.webhook.policy..",
        "io.tenantgateway.webhook.quota..",
        "io.tenantgateway.agent.locks.policy..",
        "io.tenantgateway.deviceplugin.policy..",
    };

    /** Packages whose classes need nothing but the JDK (the {@code hami} module, used by every other one). */
    public static final String[] JDK_ONLY_PACKAGES = {"io.tenantgateway.hami.."};

    /** Developer and lab tools (lab, bench, the HAMi scheduler simulator), kept out of the runtime. */
    public static final String TOOLS_PACKAGE = "io.tenantgateway.tools..";

    /** What pure code must not touch: I/O runtimes, the Kubernetes client, logging and metrics. */
    static final String[] IMPURE_DEPENDENCIES = {
        "io.netty..", "io.vertx..", "io.grpc..", "io.fabric8.kubernetes..",
        "org.slf4j..", "ch.qos.logback..", "java.util.logging..", "org.apache.logging..",
        "io.prometheus..",
    };

    private ArchitectureRules() {
    }

    /** No package cycles among the packages under {@code root}: each package is its own slice. */
    public static SliceRule freeOfPackageCycles(String root) {
        return slices().matching(root + ".(**)").should().beFreeOfCycles()
                .because("packages under " + root + " must form a hierarchy (issue #15)");
    }

    /** Nothing outside {@code toolsPackage} depends on it: the runtime never imports the tools. */
    public static ArchRule toolsNotImportedByRuntime(String toolsPackage) {
        return noClasses().that().resideOutsideOfPackage(toolsPackage)
                .should().dependOnClassesThat().resideInAPackage(toolsPackage)
                .because("tools may use the runtime, never the other way round");
    }

    /** Classes in {@code packages} do not depend on network stacks, the Kubernetes client, logging or metrics. */
    public static ArchRule pure(String... packages) {
        return noClasses().that().resideInAnyPackage(packages)
                .should().dependOnClassesThat().resideInAnyPackage(IMPURE_DEPENDENCIES)
                .because("pure packages are decisions and wire formats, testable without I/O")
                .allowEmptyShould(true);
    }

    /** Classes in {@code packages} depend on nothing but the JDK and each other. */
    public static ArchRule jdkOnly(String... packages) {
        String[] allowed = new String[packages.length + 1];
        allowed[0] = "java..";
        System.arraycopy(packages, 0, allowed, 1, packages.length);
        return classes().that().resideInAnyPackage(packages)
                .should().onlyDependOnClassesThat().resideInAnyPackage(allowed)
                .because("the module has no runtime dependencies beyond the JDK")
                .allowEmptyShould(true);
    }

    /** The rules as the modules apply them. */
    public static ArchRule[] projectRules() {
        return new ArchRule[] {
            freeOfPackageCycles(ROOT),
            toolsNotImportedByRuntime(TOOLS_PACKAGE),
            pure(PURE_PACKAGES),
            jdkOnly(JDK_ONLY_PACKAGES),
        };
    }

    /** Checks every project rule on {@code classes}. */
    public static void checkAll(JavaClasses classes) {
        for (ArchRule rule : projectRules()) {
            rule.check(classes);
        }
    }

    /**
     * The production classes of the project visible on this classpath: the calling module's own plus those
     * of the modules it depends on, so that cycles across modules are caught where they can be seen.
     * Test classes (and with them the fixtures) are left out; library classes are not resolved, which
     * would take seconds and is not needed for package-level rules.
     */
    public static JavaClasses productionClasses() {
        return importWithoutResolving(new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .withImportOption(ArchitectureRules::isProductionLocation), ROOT);
    }

    /**
     * Leaves out test jars (a sibling module's {@code -tests.jar}, e.g. this one, which carries the
     * fixtures) and the fixtures themselves, wherever they come from.
     */
    private static boolean isProductionLocation(Location location) {
        return !location.contains("-tests.jar") && !location.contains("/io/tenantgateway/archfixtures/")
                && !location.contains("/io/tenantgateway/archrules/");
    }

    /** Imports {@code packages} without resolving referenced library classes from the classpath. */
    public static JavaClasses importWithoutResolving(ClassFileImporter importer, String... packages) {
        ArchConfiguration config = ArchConfiguration.get();
        boolean resolve = config.resolveMissingDependenciesFromClassPath();
        config.setResolveMissingDependenciesFromClassPath(false);
        try {
            return importer.importPackages(packages);
        } finally {
            config.setResolveMissingDependenciesFromClassPath(resolve);
        }
    }
}
