package io.tenantgateway.agent.locks;

import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeEach;

/**
 * What the lock ITs share: a {@link LockTestCluster} (CRUD mock API server, scheduler simulator) with this node
 * created, closed after each test. A subclass's own {@code @BeforeEach} runs after this one.
 */
abstract class LockClusterTestBase {
    @AutoClose
    protected LockTestCluster cluster;

    @BeforeEach
    void startCluster() {
        cluster = LockTestCluster.start();
        cluster.createNode(LockTestCluster.NODE);
    }
}
