package io.tenantgateway.hami;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The check that ties the vendor table ({@link HamiVendor}) to the texts outside Java that list vendors: the README's
 * vendor table, the own-node policy's key lists (kustomize's and the chart's), the chart's vendor switches
 * ({@code values.yaml}, the flags {@code _helpers.tpl} passes) and kustomize's {@code components/enable-*}. Pure: it
 * takes the texts, so a test runs it on the repository's files and on broken copies of them.
 */
final class VendorTableTie {

    /**
     * The texts checked.
     *
     * @param readme       README.md
     * @param chartValues  charts/tenant-gateway/values.yaml
     * @param chartHelpers charts/tenant-gateway/templates/_helpers.tpl
     * @param policies     each own-node policy by where it is (manifests/base/…, the chart's template)
     * @param components   manifests/components: each directory named {@code enable-*} → its kustomization.yaml
     */
    record Texts(String readme, String chartValues, String chartHelpers, Map<String, String> policies,
                 Map<String, String> components) {
    }

    private static final Pattern CEL_LIST = Pattern.compile(
            "- name: (\\w+)\\s*\\n\\s*expression: \"\\[((?:'[^']*'(?:,\\s*)?)*)]\"");
    private static final Pattern QUOTED = Pattern.compile("'([^']*)'");

    private VendorTableTie() {
    }

    /** Every disagreement, one line each naming the place and the key; empty when all agree. */
    static List<String> problems(Texts texts) {
        List<String> problems = new ArrayList<>();
        readme(texts.readme(), problems);
        for (Map.Entry<String, String> policy : texts.policies().entrySet()) {
            policy(policy.getKey(), policy.getValue(), problems);
        }
        switches(texts, problems);
        return problems;
    }

    /** README.md, "HAMi vendors": one row per vendor, naming its count resource, register key or capacity, switch. */
    private static void readme(String readme, List<String> problems) {
        Map<String, String> rows = new LinkedHashMap<>();
        int section = readme.indexOf("\n## HAMi vendors");
        if (section < 0) {
            problems.add("README.md: no section \"## HAMi vendors\"");
            return;
        }
        int end = readme.indexOf("\n## ", section + 1);
        String table = readme.substring(section, end < 0 ? readme.length() : end);
        for (String line : table.split("\n")) {
            if (!line.startsWith("| ") || line.startsWith("| vendor |")) {
                continue;
            }
            String first = line.substring(2, line.indexOf(" |", 1));
            String name = first.replaceAll("\\s*\\(.*\\)$", "").strip();
            rows.put(name, line);
        }
        Set<String> known = new LinkedHashSet<>();
        for (HamiVendor vendor : HamiVendor.values()) {
            known.add(vendor.display());
            String row = rows.get(vendor.display());
            if (row == null) {
                problems.add("README.md vendor table: no row for " + vendor.display());
                continue;
            }
            List<String> expected = new ArrayList<>();
            expected.add("`" + vendor.countResource() + "`");
            if (!vendor.registerKey().isEmpty()) {
                expected.add("`" + vendor.registerKey() + "`");
            }
            boolean everyRelease = Arrays.stream(HamiRelease.values()).allMatch(vendor::in);
            for (HamiRelease release : HamiRelease.values()) {
                if (!vendor.capacityResource(release).isEmpty()) {
                    expected.add("capacity `" + vendor.capacityResource(release) + "`");
                }
                if (!everyRelease && vendor.in(release)) {
                    expected.add("(" + release.label() + ")");
                }
            }
            if (!vendor.enableFlag().isEmpty()) {
                expected.add("`" + vendor.enableFlag() + "`");
            }
            for (String text : expected) {
                if (!row.contains(text)) {
                    problems.add("README.md vendor table, row " + vendor.display() + ": lacks " + text);
                }
            }
        }
        for (String name : rows.keySet()) {
            if (!known.contains(name)) {
                problems.add("README.md vendor table: row " + name + " is no vendor of HamiVendor");
            }
        }
    }

    /** The own-node policy's lists: NVIDIA's annotations and resources, the other simulated vendors'. */
    private static void policy(String where, String text, List<String> problems) {
        Map<String, Set<String>> lists = new LinkedHashMap<>();
        Matcher list = CEL_LIST.matcher(text);
        while (list.find()) {
            Set<String> items = new TreeSet<>();
            Matcher item = QUOTED.matcher(list.group(2));
            while (item.find()) {
                items.add(item.group(1));
            }
            lists.put(list.group(1), items);
        }
        HamiVendor.OwnNodeKeys nvidia = HamiVendor.NVIDIA.ownNodeKeys();
        Set<String> annotations = new TreeSet<>();
        Set<String> annotationPrefixes = new TreeSet<>();
        Set<String> resources = new TreeSet<>();
        Set<String> resourcePrefixes = new TreeSet<>();
        for (HamiVendor vendor : HamiVendor.values()) {
            if (vendor != HamiVendor.NVIDIA) {
                HamiVendor.OwnNodeKeys keys = vendor.ownNodeKeys();
                annotations.addAll(keys.annotations());
                annotationPrefixes.addAll(keys.annotationPrefixes());
                resources.addAll(keys.resources());
                resourcePrefixes.addAll(keys.resourcePrefixes());
            }
        }
        compare(where, "hamiAnnotations", new TreeSet<>(nvidia.annotations()), lists, problems);
        compare(where, "gpuResources", new TreeSet<>(nvidia.resources()), lists, problems);
        compare(where, "vendorAnnotations", annotations, lists, problems);
        compare(where, "vendorAnnotationPrefixes", annotationPrefixes, lists, problems);
        compare(where, "vendorResources", resources, lists, problems);
        compare(where, "vendorResourcePrefixes", resourcePrefixes, lists, problems);
    }

    private static void compare(String where, String name, Set<String> expected, Map<String, Set<String>> lists,
                                List<String> problems) {
        Set<String> actual = lists.get(name);
        if (actual == null) {
            problems.add(where + ": no list " + name);
            return;
        }
        for (String key : expected) {
            if (!actual.contains(key)) {
                problems.add(where + " " + name + ": lacks " + key);
            }
        }
        for (String key : actual) {
            if (!expected.contains(key)) {
                problems.add(where + " " + name + ": has " + key + ", which the vendor table does not name");
            }
        }
    }

    /** The vendor switches: values.yaml's devices.X.enabled, the flag _helpers.tpl passes, components/enable-X. */
    private static void switches(Texts texts, List<String> problems) {
        Set<String> expected = new TreeSet<>();
        Arrays.stream(HamiVendor.values()).map(HamiVendor::switchName).filter(s -> !s.isEmpty())
                .forEach(expected::add);
        Set<String> inValues = new TreeSet<>();
        int devices = texts.chartValues().indexOf("\ndevices:\n");
        if (devices < 0) {
            problems.add("values.yaml: no devices block");
        } else {
            Matcher next = Pattern.compile("\\n[A-Za-z]").matcher(texts.chartValues());
            int end = next.find(devices + 1) ? next.start() : texts.chartValues().length();
            String body = texts.chartValues().substring(devices, end);
            Matcher enabled = Pattern.compile("\\n  (\\w+):\\n    enabled: ").matcher(body);
            while (enabled.find()) {
                inValues.add(enabled.group(1));
            }
        }
        for (String name : expected) {
            if (!inValues.contains(name)) {
                problems.add("values.yaml: lacks devices." + name + ".enabled");
            }
            if (!texts.chartHelpers().contains("devices." + name + ".enabled }}\n- --enable-" + name + "\n")) {
                problems.add("_helpers.tpl: does not pass --enable-" + name + " for devices." + name + ".enabled");
            }
            String component = texts.components().get("enable-" + name);
            if (component == null) {
                problems.add("manifests/components: lacks enable-" + name);
            } else if (!component.contains("value: --enable-" + name + "\n")
                    && !component.endsWith("value: --enable-" + name)) {
                problems.add("manifests/components/enable-" + name + ": does not add --enable-" + name);
            }
        }
        for (String name : inValues) {
            if (!expected.contains(name)) {
                problems.add("values.yaml: devices." + name + ".enabled is no vendor switch of HamiVendor");
            }
        }
        for (String component : texts.components().keySet()) {
            if (!expected.contains(component.substring("enable-".length()))) {
                problems.add("manifests/components/" + component + " is no vendor switch of HamiVendor");
            }
        }
    }
}
