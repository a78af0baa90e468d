package io.tenantgateway.common.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ConfigFilesTest {
    @TempDir
    Path dir;

    @Test
    void aMissingFileOrADirectoryNamesTheFlag() throws Exception {
        Path file = Files.writeString(dir.resolve("ca.crt"), "x");
        assertThat(ConfigFiles.require("--ca-cert", file)).isEqualTo(file);
        assertThat(ConfigFiles.optional("--ca-cert", null)).isNull();
        assertThatThrownBy(() -> ConfigFiles.optional("--ca-cert", dir.resolve("nope")))
                .isInstanceOf(ConfigException.class).hasMessage("--ca-cert: " + dir.resolve("nope") + ": file not found");
        assertThatThrownBy(() -> ConfigFiles.require("--ca-cert", dir)).isInstanceOf(ConfigException.class)
                .hasMessage("--ca-cert: " + dir + ": not a regular file");
    }
}
