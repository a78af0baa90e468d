package io.tenantgateway.certs;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Map;

/**
 * Reproduces the kubelet's secret-volume layout: {@code tls.crt -> ..data/tls.crt}, {@code ..data -> ..<version>},
 * and an update that writes a new version directory and swaps {@code ..data} with one atomic rename.
 */
final class SecretVolume {
    private final Path root;
    private int version;

    SecretVolume(Path root, Map<String, String> files) throws IOException {
        this.root = root;
        Path first = writeVersion(files);
        Files.createSymbolicLink(root.resolve("..data"), first.getFileName());
        for (String name : files.keySet()) {
            Files.createSymbolicLink(root.resolve(name), Path.of("..data", name));
        }
    }

    Path file(String name) {
        return root.resolve(name);
    }

    /** Writes a new version and flips {@code ..data} to it atomically, like the kubelet's AtomicWriter. */
    void update(Map<String, String> files) throws IOException {
        Path next = writeVersion(files);
        Path temp = root.resolve("..data_tmp");
        Files.createSymbolicLink(temp, next.getFileName());
        Files.move(temp, root.resolve("..data"), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    private Path writeVersion(Map<String, String> files) throws IOException {
        Path directory = Files.createDirectory(root.resolve("..2026_11_30_00_00_0" + (++version)));
        for (Map.Entry<String, String> file : files.entrySet()) {
            Files.writeString(directory.resolve(file.getKey()), file.getValue());
        }
        return directory;
    }
}
