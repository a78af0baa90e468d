package io.tenantgateway.hami;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The vendor table against the repository's README vendor table, own-node policies, chart values and kustomize
 * switches ({@link VendorTableTie}); then the same check on copies with one key edited away, each of which it must
 * report by name (a key added or removed in one place and not the others fails the build).
 */
class VendorTableTieTest {

    private static final Path ROOT = Path.of(System.getProperty("user.dir")).resolve("..").normalize();
    private static final String BASE_POLICY = "manifests/base/own-node-policy.yaml";
    private static final String CHART_POLICY = "charts/tenant-gateway/templates/own-node-policy.yaml";

    private static VendorTableTie.Texts repository() throws IOException {
        Map<String, String> policies = new LinkedHashMap<>();
        policies.put(BASE_POLICY, read(BASE_POLICY));
        policies.put(CHART_POLICY, read(CHART_POLICY));
        Map<String, String> components = new TreeMap<>();
        try (Stream<Path> dirs = Files.list(ROOT.resolve("manifests/components"))) {
            for (Path dir : dirs.filter(d -> d.getFileName().toString().startsWith("enable-")).toList()) {
                components.put(dir.getFileName().toString(), Files.readString(dir.resolve("kustomization.yaml")));
            }
        }
        return new VendorTableTie.Texts(read("README.md"), read("charts/tenant-gateway/values.yaml"),
                read("charts/tenant-gateway/templates/_helpers.tpl"), policies, components);
    }

    private static String read(String path) throws IOException {
        return Files.readString(ROOT.resolve(path));
    }

    @Test
    void theRepositoryAgreesWithTheVendorTable() throws IOException {
        assertThat(VendorTableTie.problems(repository())).isEmpty();
    }

    @Test
    void aReadmeRowMissingOrLackingAKeyIsReported() throws IOException {
        VendorTableTie.Texts texts = repository();
        String readme = texts.readme();
        String withoutVastai = readme.replaceAll("\\n\\| Vastai \\|[^\\n]*", "");
        assertThat(added(texts, with(texts, withoutVastai, texts.chartValues(), texts.policies())))
                .containsExactly("README.md vendor table: no row for Vastai");
        String wrongKey = readme.replace("| `hami.io/node-dcu-register` |", "| `hami.io/node-dcu-registry` |");
        assertThat(added(texts, with(texts, wrongKey, texts.chartValues(), texts.policies())))
                .containsExactly("README.md vendor table, row Hygon: lacks `hami.io/node-dcu-register`");
        String extra = readme.replace("\n| Vastai |", "\n| Acme | `acme.com/npu` | nothing | capacity |\n| Vastai |");
        assertThat(added(texts, with(texts, extra, texts.chartValues(), texts.policies())))
                .containsExactly("README.md vendor table: row Acme is no vendor of HamiVendor");
    }

    @Test
    void aPolicyListEditedAloneIsReported() throws IOException {
        VendorTableTie.Texts texts = repository();
        Map<String, String> policies = new LinkedHashMap<>(texts.policies());
        policies.put(CHART_POLICY, policies.get(CHART_POLICY).replace(", 'hygon.com/dcucores'", ""));
        policies.put(BASE_POLICY, policies.get(BASE_POLICY).replace("'hami-vnpu-core'",
                "'hami-vnpu-core', 'hami.io/node-handshake-xpu'"));
        assertThat(added(texts, with(texts, texts.readme(), texts.chartValues(), policies)))
                .containsExactly(BASE_POLICY + " vendorAnnotations: has hami.io/node-handshake-xpu, which the vendor"
                        + " table does not name", CHART_POLICY + " vendorResources: lacks hygon.com/dcucores");
    }

    @Test
    void aVendorSwitchMissingFromTheChartOrKustomizeIsReported() throws IOException {
        VendorTableTie.Texts texts = repository();
        String values = texts.chartValues().replace("  iluvatar:\n    enabled: false\n", "");
        Map<String, String> components = new TreeMap<>(texts.components());
        components.remove("enable-ascend");
        components.put("enable-acme", "value: --enable-acme\n");
        VendorTableTie.Texts broken = new VendorTableTie.Texts(texts.readme(), values,
                texts.chartHelpers().replace("- --enable-ascend\n", ""), texts.policies(), components);
        assertThat(added(texts, broken)).containsExactly(
                "_helpers.tpl: does not pass --enable-ascend for devices.ascend.enabled",
                "manifests/components: lacks enable-ascend",
                "values.yaml: lacks devices.iluvatar.enabled",
                "manifests/components/enable-acme is no vendor switch of HamiVendor");
    }

    /** What {@code broken} adds to the problems of {@code texts}: each fixture fails for its own edit only. */
    private static List<String> added(VendorTableTie.Texts texts, VendorTableTie.Texts broken) {
        List<String> before = VendorTableTie.problems(texts);
        return VendorTableTie.problems(broken).stream().filter(p -> !before.contains(p)).toList();
    }

    private static VendorTableTie.Texts with(VendorTableTie.Texts texts, String readme, String values,
                                             Map<String, String> policies) {
        return new VendorTableTie.Texts(readme, values, texts.chartHelpers(), policies, texts.components());
    }
}
