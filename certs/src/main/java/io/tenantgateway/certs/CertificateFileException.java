package io.tenantgateway.certs;

import io.tenantgateway.common.config.ConfigException;
import java.nio.file.Path;

/**
 * A certificate, key or CA file that cannot be used. The message starts with the file and says what is wrong and
 * what was expected, so a CLI can print it as is. It is a {@link ConfigException}: the file is one a flag named (or
 * a Secret the configuration named), so the CLI exits 2 with the message, wherever it is found.
 */
public final class CertificateFileException extends ConfigException {
    private static final long serialVersionUID = 1L;
    private final transient Path file;

    public CertificateFileException(Path file, String problem) {
        this(file, problem, null);
    }

    public CertificateFileException(Path file, String problem, Throwable cause) {
        super(String.valueOf(file), problem, cause, false);
        this.file = file;
    }

    /** The file at fault. */
    public Path file() {
        return file;
    }
}
