package io.tenantgateway.agent.part;

import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAnyPackage;
import static com.tngtech.archunit.core.domain.properties.HasName.Predicates.nameMatching;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.library.dependencies.SliceAssignment;
import com.tngtech.archunit.library.dependencies.SliceIdentifier;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The rule that keeps each part at home in its package: a part's package (the package of a class that implements
 * {@link Part}) depends on no other part's package. Parts meet only through their {@link PartContext}; what they share
 * lives outside every part package (the spine, {@code health}, {@code k8s}, {@code channels}, {@code doctor}, the pure
 * {@code policy} packages). A part may name another by its {@code NAME} constant (to start after it): javac inlines
 * it, so nothing of the other part is linked, and the rule sees no dependency.
 *
 * <p>And the rule that keeps the spine free of features: the part runner, {@code Agent} and {@code doctor} know no
 * part, and {@code AgentConfig} only holds the parts' settings; the one list, {@code Parts}, knows them all.
 */
final class PartRules {
    private PartRules() {
    }

    /** The packages of the {@link Part} implementations among {@code classes}. */
    static Set<String> partPackages(JavaClasses classes) {
        return classes.stream().filter(c -> !c.isInterface() && c.isAssignableTo(Part.class.getName())
                && !c.getPackageName().equals(Part.class.getPackageName()))
                .map(JavaClass::getPackageName).collect(Collectors.toSet());
    }

    /** No part package depends on another part package, among {@code classes}. */
    static ArchRule partsDoNotImportEachOther(JavaClasses classes) {
        Set<String> packages = partPackages(classes);
        SliceAssignment byPart = new SliceAssignment() {
            @Override
            public SliceIdentifier getIdentifierOf(JavaClass javaClass) {
                return packages.contains(javaClass.getPackageName()) ? SliceIdentifier.of(javaClass.getPackageName())
                        : SliceIdentifier.ignore();
            }

            @Override
            public String getDescription() {
                return "part packages " + packages;
            }
        };
        return slices().assignedFrom(byPart).should().notDependOnEachOther()
                .because("parts meet only through PartContext (issue 25): a feature is at home in one package");
    }

    /** The spine of the agent: the part runner's package, {@code Agent} and {@code doctor} (nested classes too). */
    static final String SPINE = "io\\.tenantgateway\\.agent\\.(part\\.[^.]+|Agent|ops\\.Doctor)(\\$.*)?";
    /** What holds the parts' settings without using them: {@code AgentConfig}. */
    static final String SETTINGS_HOLDER = "io\\.tenantgateway\\.agent\\.AgentConfig(\\$.*)?";

    /**
     * Classes named like {@code spine} do not depend on any part package, and those named like {@code holder} only
     * hold the parts' types (no call, no field access, no construction): a new part is its package and one line in
     * the list of parts.
     */
    static List<ArchRule> spineKnowsNoPart(JavaClasses classes, String spine, String holder) {
        String[] packages = partPackages(classes).toArray(String[]::new);
        return List.of(
                noClasses().that(nameMatching(spine)).should().dependOnClassesThat(resideInAnyPackage(packages))
                        .because("the spine derives everything about parts from the one list (issue 33)"),
                noClasses().that(nameMatching(holder)).should().accessClassesThat(resideInAnyPackage(packages))
                        .because("the configuration holds the parts' settings; each part describes its own"
                                + " (issue 33)").allowEmptyShould(true));
    }

    /**
     * The package of a part that brings its own flags ({@link PartFlags}) is named, outside itself, only by the list
     * of parts (classes named like {@code list}): the part is its package plus one line in the list.
     */
    static ArchRule onlyTheListNames(String partPackage, String list) {
        return noClasses().that().resideOutsideOfPackage(partPackage + "..").and(
                com.tngtech.archunit.base.DescribedPredicate.not(nameMatching(list)))
                .should().dependOnClassesThat().resideInAPackage(partPackage + "..")
                .because("a part with its own flags is its package and one line in Parts.FLAGS (issue 33): its"
                        + " flags, settings, views and doctor lines live in it");
    }
}
