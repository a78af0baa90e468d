package io.tenantgateway.tunnel;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import io.tenantgateway.tunnel.protocol.Packets;
import org.junit.jupiter.api.Test;

/**
 * The pure packages do not reach into the agent or server side. That they stay free of transport runtimes is
 * the shared rule in {@link ProjectRulesTest}.
 */
class ArchitectureTest {
    // Import only this module's compiled classes (scanning the whole classpath takes seconds).
    private static final JavaClasses CLASSES = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importUrl(Packets.class.getProtectionDomain().getCodeSource().getLocation());

    @Test
    void protocolDoesNotDependOnTheAgentOrServer() {
        noClasses().that().resideInAnyPackage("..tunnel.protocol..", "..tunnel.policy..")
                .should().dependOnClassesThat().resideInAnyPackage("..tunnel.client..", "..tunnel.server..",
                        "..tunnel.endpoint..", "..tunnel.proxy..")
                .check(CLASSES);
    }
}
