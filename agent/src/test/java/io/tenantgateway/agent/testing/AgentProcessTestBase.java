package io.tenantgateway.agent.testing;

import java.nio.file.Path;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the ITs that run {@code tenant-gateway run} as a child process share: a temp dir, a konnectivity-server
 * testbed and the agent process, both closed after each test ({@link AutoClose} skips the ones a test left unset).
 */
public abstract class AgentProcessTestBase {
    @TempDir
    protected Path dir;

    @AutoClose
    protected TunnelTestbed testbed;

    @AutoClose
    protected AgentProcess agent;
}
