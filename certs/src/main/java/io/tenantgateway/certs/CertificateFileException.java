package io.tenantgateway.certs;

import java.nio.file.Path;

/**
 * A certificate, key or CA file that cannot be used. The message starts with the file and says what is wrong and
 * what was expected, so a CLI can print it as is.
 */
public final class CertificateFileException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final transient Path file;

    public CertificateFileException(Path file, String problem) {
        super(file + ": " + problem);
        this.file = file;
    }

    public CertificateFileException(Path file, String problem, Throwable cause) {
        super(file + ": " + problem, cause);
        this.file = file;
    }

    /** The file at fault. */
    public Path file() {
        return file;
    }
}
