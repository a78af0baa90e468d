package io.tenantgateway.agent.devices;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.tngtech.archunit.ArchConfiguration;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.lang.ArchRule;
import io.tenantgateway.hami.GpuDevice;
import io.tenantgateway.hami.HamiDeviceCodec;

import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The device model, codec, inventory and config stay pure: no Kubernetes client, network stack or metrics. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class PureDeviceCodeArchitectureTest {
    private static final ArchRule PURE = noClasses().should().dependOnClassesThat()
            .resideInAnyPackage("io.fabric8..", "io.netty..", "io.vertx..", "io.prometheus..");

    @Test
    void modelCodecAndInventoryDoNotImportClientOrNetworkCode() {
        PURE.check(importOnly(GpuDevice.class, HamiDeviceCodec.class, GpuPreset.class, MockInventory.class,
                MockInventory.Entry.class, MockDeviceSource.class, NvidiaSmiDeviceSource.class, FailureReason.class,
                DeviceDiscoveryException.class, DeviceRegistrationConfig.class, DeviceRegistrationSnapshot.class));
    }

    @Test
    void theRuleDoesCatchClientCode() {
        assertThatThrownBy(() -> PURE.check(importOnly(DeviceRegistrar.class))).isInstanceOf(AssertionError.class);
    }

    /** Without resolving referenced library classes from the classpath, which takes seconds. */
    private static JavaClasses importOnly(Class<?>... classes) {
        ArchConfiguration config = ArchConfiguration.get();
        boolean resolve = config.resolveMissingDependenciesFromClassPath();
        config.setResolveMissingDependenciesFromClassPath(false);
        try {
            return new ClassFileImporter().importClasses(classes);
        } finally {
            config.setResolveMissingDependenciesFromClassPath(resolve);
        }
    }
}
