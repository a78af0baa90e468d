package io.tenantgateway.agent.locks;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.tngtech.archunit.ArchConfiguration;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.lang.ArchRule;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The lock decisions and codecs stay pure: no Kubernetes client, no network stack, no metrics. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class PureCodeArchitectureTest {
    private static final ArchRule PURE = noClasses().should().dependOnClassesThat()
            .resideInAnyPackage("io.fabric8..", "io.netty..", "io.vertx..", "io.prometheus..");

    @Test
    void decisionsAndCodecsDoNotImportClientOrNetworkCode() {
        PURE.check(importOnly(NodeLock.class, MalformedNodeLockException.class, ContainerDevice.class,
                DeviceAllocationCodec.class, LockPolicy.class, LockDecision.class, LockDecision.Keep.class,
                LockDecision.Release.class, LockHolder.class, LockHolder.State.class, ReleaseReason.class,
                AllocationConfig.class, AllocationMode.class, LockAction.class, LockSnapshot.class));
    }

    @Test
    void theRuleDoesCatchClientCode() {
        assertThatThrownBy(() -> PURE.check(importOnly(AllocationController.class))).isInstanceOf(AssertionError.class);
    }

    /** Imports just these classes; resolving every referenced library class would take seconds. */
    private static JavaClasses importOnly(Class<?>... classes) {
        ArchConfiguration archConfiguration = ArchConfiguration.get();
        boolean resolve = archConfiguration.resolveMissingDependenciesFromClassPath();
        archConfiguration.setResolveMissingDependenciesFromClassPath(false);
        try {
            return new ClassFileImporter().importClasses(classes);
        } finally {
            archConfiguration.setResolveMissingDependenciesFromClassPath(resolve);
        }
    }
}
