package io.tenantgateway.agent.part;

import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.library.dependencies.SliceAssignment;
import com.tngtech.archunit.library.dependencies.SliceIdentifier;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The rule that keeps each part at home in its package: a part's package (the package of a class that implements
 * {@link Part}) depends on no other part's package. Parts meet only through their {@link PartContext}; what they share
 * lives outside every part package (the spine, {@code health}, {@code k8s}, the pure {@code policy} packages).
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
}
