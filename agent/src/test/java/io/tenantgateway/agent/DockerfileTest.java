package io.tenantgateway.agent;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The image recipe (it cannot be built here: no Docker engine): base images pinned by digest, the OCI labels, the
 * jlink stage reading the module list RuntimeJlinkIT checks, the files it copies exist in a build, and the
 * class-data archive made the way {@code agent/pom.xml} makes it, next to the jar where the launcher looks.
 */
class DockerfileTest {
    private static final Path ROOT = Path.of(System.getProperty("user.dir")).resolve("..").normalize();

    private static String dockerfile() throws IOException {
        return Files.readString(ROOT.resolve("Dockerfile")).replace("\\\n", " ");
    }

    @Test
    void baseImagesArePinnedByDigest() throws IOException {
        String text = dockerfile();
        Matcher images = Pattern.compile("(?m)^ARG (\\w+_IMAGE)=(\\S+)$").matcher(text);
        int found = 0;
        while (images.find()) {
            found++;
            assertThat(images.group(2)).as(images.group(1)).matches("[\\w./-]+:[\\w.-]+@sha256:[0-9a-f]{64}");
        }
        assertThat(found).as("ARG *_IMAGE lines").isEqualTo(2);
        List<String> froms = text.lines().filter(line -> line.startsWith("FROM ")).toList();
        assertThat(froms).hasSize(2).allSatisfy(line -> assertThat(line).matches("FROM \\$\\{\\w+_IMAGE}( AS \\w+)?"));
    }

    @Test
    void theImageSaysWhatItIs() throws IOException {
        String text = dockerfile();
        for (String label : List.of("version", "revision", "source", "title")) {
            assertThat(text).contains("org.opencontainers.image." + label + "=");
        }
        assertThat(text).contains("ARG VERSION=", "ARG REVISION=", "ARG SOURCE=");
    }

    @Test
    void theRuntimeIsJlinkedFromTheCheckedModuleList() throws IOException {
        String text = dockerfile();
        assertThat(text).contains("COPY agent/src/main/jlink/modules ")
                .containsPattern("jlink --add-modules \"\\$\\(grep -v '\\^#' /tmp/jlink-modules")
                .contains("--generate-cds-archive", "COPY --from=runtime /opt/java /opt/java");
        assertThat(ROOT.resolve("agent/src/main/jlink/modules")).isRegularFile();
        assertThat(ROOT.resolve("bin/tenant-gateway")).isExecutable();
        assertThat(ROOT.resolve("bin/proxy-agent")).isExecutable();
    }

    @Test
    void theClassDataArchiveIsMadeAsTheBuildMakesIt() throws IOException {
        String text = dockerfile();
        assertThat(text).as("the archive RUN line").contains("RUN /opt/tenant-gateway/bin/tenant-gateway cds-archive");
        String pom = Files.readString(ROOT.resolve("agent/pom.xml"));
        assertThat(pom).as("agent/pom.xml's cds-archive step runs the launcher's cds-archive too")
                .contains("<argument>${project.basedir}/../bin/tenant-gateway</argument>")
                .contains("<argument>cds-archive</argument>");
        String launcher = Files.readString(ROOT.resolve("bin/tenant-gateway"));
        assertThat(launcher).contains("jsa=\"${jar%.jar}.jsa\"", "cds-training --launcher=",
                "-Xshare:dump -XX:SharedClassListFile=");
    }
}
