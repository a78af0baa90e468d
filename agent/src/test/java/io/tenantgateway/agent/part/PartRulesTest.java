package io.tenantgateway.agent.part;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/** Parts do not import each other: true of the agent, and the rule fails on a fixture that does. */
class PartRulesTest {
    private static final JavaClasses AGENT = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS).importPackages("io.tenantgateway.agent");

    @Test
    void theAgentsPartsMeetOnlyThroughTheirContext() {
        assertThat(PartRules.partPackages(AGENT)).as("the rule sees every part").contains(
                "io.tenantgateway.agent.webhook", "io.tenantgateway.agent.devices",
                "io.tenantgateway.agent.deviceplugin", "io.tenantgateway.agent.locks",
                "io.tenantgateway.agent.leases");
        PartRules.partsDoNotImportEachOther(AGENT).check(AGENT);
    }

    @Test
    void theSpineKnowsNoPartBeyondTheOneList() {
        PartRules.spineKnowsNoPart(AGENT, PartRules.SPINE, PartRules.SETTINGS_HOLDER).forEach(rule -> rule.check(AGENT));
    }

    @Test
    void theSpineRuleFailsWhenTheSpineUsesAPart() {
        JavaClasses fixtures = new ClassFileImporter().importPackages("io.tenantgateway.agentfixtures.parts");
        var rules = PartRules.spineKnowsNoPart(fixtures, "io\\.tenantgateway\\.agentfixtures\\.parts\\.Spine",
                "io\\.tenantgateway\\.agentfixtures\\.parts\\.Settings");
        assertThatThrownBy(() -> rules.get(0).check(fixtures)).isInstanceOf(AssertionError.class)
                .hasMessageContaining("Spine").hasMessageContaining("AlphaPart");
        assertThatThrownBy(() -> rules.get(1).check(fixtures)).isInstanceOf(AssertionError.class)
                .hasMessageContaining("Settings").hasMessageContaining("AlphaPart");
    }

    @Test
    void aPartWithItsOwnFlagsIsNamedOnlyByTheList() {
        assertThat(io.tenantgateway.agent.Parts.FLAGS).as("the parts that bring their own flags").isNotEmpty();
        for (var flags : io.tenantgateway.agent.Parts.FLAGS) {
            String partPackage = flags.get().getClass().getPackageName();
            PartRules.onlyTheListNames(partPackage, "io\\.tenantgateway\\.agent\\.Parts(\\$.*)?").check(AGENT);
        }
    }

    @Test
    void theListRuleFailsWhenAnotherClassNamesThePart() {
        JavaClasses fixtures = new ClassFileImporter().importPackages("io.tenantgateway.agentfixtures.parts");
        // Spine builds AlphaPart itself: only Settings is allowed to name it here.
        assertThatThrownBy(() -> PartRules.onlyTheListNames("io.tenantgateway.agentfixtures.parts.alpha",
                "io\\.tenantgateway\\.agentfixtures\\.parts\\.Settings").check(fixtures))
                .isInstanceOf(AssertionError.class).hasMessageContaining("Spine").hasMessageContaining("AlphaPart");
    }

    @Test
    void theRuleFailsWhenOnePartImportsAnother() {
        JavaClasses fixtures = new ClassFileImporter().importPackages("io.tenantgateway.agentfixtures.parts");
        assertThat(PartRules.partPackages(fixtures)).hasSize(2);
        assertThatThrownBy(() -> PartRules.partsDoNotImportEachOther(fixtures).check(fixtures))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("BetaPart")
                .hasMessageContaining("AlphaPart");
    }
}
