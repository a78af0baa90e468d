package io.tenantgateway.common.config;

import java.nio.file.Files;
import java.nio.file.Path;

/** Files that flags name, checked when the flags are read so that the message names the flag. */
public final class ConfigFiles {
    private ConfigFiles() {
    }

    /**
     * {@code file}, which must exist and be a regular file.
     *
     * @throws ConfigException {@code flag: FILE: file not found} or {@code flag: FILE: not a regular file}
     */
    public static Path require(String flag, Path file) {
        if (!Files.exists(file)) {
            throw ConfigException.of(flag, file + ": file not found");
        }
        if (!Files.isRegularFile(file)) {
            throw ConfigException.of(flag, file + ": not a regular file");
        }
        return file;
    }

    /** {@link #require} for a flag that may be left out: {@code null} stays {@code null}. */
    public static Path optional(String flag, Path file) {
        return file == null ? null : require(flag, file);
    }
}
