package io.tenantgateway.tunnel.protocol;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Allocates agent-side connectIDs: one monotonically increasing counter starting at 1, shared by every server
 * stream of one agent. The spec allows this instead of upstream's per-stream counter, and it keeps IDs unique in
 * logs and snapshots across servers. 0 is never allocated: it means "no connection" on the wire.
 */
public final class ConnectionIds {
    private final AtomicLong next = new AtomicLong(1);

    public long next() {
        return next.getAndIncrement();
    }
}
