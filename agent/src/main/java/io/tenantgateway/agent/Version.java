package io.tenantgateway.agent;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;
import picocli.CommandLine.IVersionProvider;

/** The version Maven wrote into {@code version.properties}: for {@code --version}, logs and the status page. */
public final class Version implements IVersionProvider {
    @Override
    public String[] getVersion() {
        return new String[] {"tenant-gateway " + version(), "Java " + System.getProperty("java.version")};
    }

    public static String version() {
        try (InputStream in = Version.class.getResourceAsStream("version.properties")) {
            Properties properties = new Properties();
            if (in != null) {
                properties.load(in);
            }
            return properties.getProperty("version", "unknown");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read version.properties", e);
        }
    }
}
