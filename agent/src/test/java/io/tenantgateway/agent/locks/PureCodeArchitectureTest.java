package io.tenantgateway.agent.locks;

import static org.assertj.core.api.Assertions.assertThat;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.ArchConfiguration;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The lock decisions and codecs stay pure: no Kubernetes client, no network stack, no metrics. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class PureCodeArchitectureTest {
    @Test
    void decisionsAndCodecsDoNotImportClientOrNetworkCode() throws URISyntaxException {
        // Resolving every referenced library class from the classpath takes seconds; the rule only
        // needs the names of the classes these depend on.
        ArchConfiguration archConfiguration = ArchConfiguration.get();
        boolean resolve = archConfiguration.resolveMissingDependenciesFromClassPath();
        archConfiguration.setResolveMissingDependenciesFromClassPath(false);
        JavaClasses classes;
        try {
            // Only this module's main classes, not every jar on the test classpath.
            classes = new ClassFileImporter()
                    .withImportOption(location -> location.contains("/io/tenantgateway/agent/locks/"))
                    .importPath(Path.of(NodeLock.class.getProtectionDomain().getCodeSource().getLocation().toURI()));
        } finally {
            archConfiguration.setResolveMissingDependenciesFromClassPath(resolve);
        }
        noClasses()
                .that().haveSimpleNameStartingWith("NodeLock")
                .or().haveSimpleNameStartingWith("DeviceAllocationCodec")
                .or().haveSimpleNameStartingWith("ContainerDevice")
                .or().haveSimpleNameStartingWith("LockPolicy")
                .or().haveSimpleNameStartingWith("LockDecision")
                .or().haveSimpleNameStartingWith("LockHolder")
                .or().haveSimpleNameStartingWith("ReleaseReason")
                .or().haveSimpleNameStartingWith("RetryBackoff")
                .or().haveSimpleNameStartingWith("AllocationConfig")
                .or().haveSimpleNameStartingWith("AllocationMode")
                .or().haveSimpleNameStartingWith("MalformedNodeLockException")
                .should().dependOnClassesThat().resideInAnyPackage(
                        "io.fabric8..", "io.netty..", "io.vertx..", "io.prometheus..")
                .check(classes);
        // The rule must have seen the classes it names (an empty import would pass vacuously).
        assertThat(classes.contain(LockPolicy.class)).isTrue();
        assertThat(classes.contain(AllocationController.class)).isTrue();
    }
}
