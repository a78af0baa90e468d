package io.tenantgateway.tunnel.testing;

import java.nio.file.Path;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** What the tunnel ITs share: a temp dir (Unix sockets, tokens) and the harness that closes what a test started. */
public abstract class TunnelTestBase {
    @TempDir
    protected Path dir;

    @RegisterExtension
    protected final TunnelHarness harness = new TunnelHarness();
}
