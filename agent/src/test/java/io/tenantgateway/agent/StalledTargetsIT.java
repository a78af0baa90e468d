package io.tenantgateway.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tenantgateway.agent.testing.DataFeeder;
import io.tenantgateway.agent.testing.HostileServer;
import io.tenantgateway.agent.testing.HostileServerTestBase;
import io.tenantgateway.agent.testing.ThrottledTarget;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code kubectl exec -i} into processes that never read stdin (issue 24), against a server without the flow-control
 * extension (as upstream): 12 tunnels fed 64 KiB DATA and one fed 4 MiB DATA, into targets that do not read. The agent
 * pauses the shared stream within its direct-memory budget, closes none of them and does not run out of memory;
 * when the targets read, every byte arrives in order. This is the agent waiting for its targets as the Go agent does
 * ({@code --stuck-target-timeout=0}); closing stuck targets after the timeout is {@code StuckTargetsIT}'s.
 */
@Timeout(120)
class StalledTargetsIT extends HostileServerTestBase {
    private static final int SMALL_TUNNELS = 12;
    private static final int SMALL_DATA = 64 * 1024;
    private static final long SMALL_BYTES = 8 * MIB;
    private static final int BIG_DATA = 4 * 1024 * 1024;
    private static final long BIG_BYTES = 32 * MIB;

    private final List<ThrottledTarget> targets = new ArrayList<>();

    @AfterEach
    void closeTargets() throws IOException {
        for (ThrottledTarget target : targets) {
            target.close();
        }
    }

    /** 12 × 64 KiB DATA: each tunnel stays under its high-water mark; together they fill the budget. */
    @Test
    void twelveTunnelsIntoTargetsThatNeverReadPauseTheStreamAtTheBudgetAndResumeIntact() throws Exception {
        stallAndResume(SMALL_TUNNELS, false, "target buffers reached the agent's direct-memory budget");
    }

    /** 4 MiB DATA (what an upstream server may send) into a target that never reads, next to the 12 small ones. */
    @Test
    void fourMebibyteDataIntoATargetThatNeverReadsPausesTheStreamAndResumesIntact() throws Exception {
        stallAndResume(SMALL_TUNNELS, true, "pausing the server stream");
    }

    private void stallAndResume(int smallTunnels, boolean withBig, String pauseLog) throws Exception {
        start("--stuck-target-timeout=0");
        int tunnels = smallTunnels + (withBig ? 1 : 0);
        long[] expected = new long[tunnels];
        DataFeeder[] feeders = new DataFeeder[tunnels];
        for (int i = 0; i < tunnels; i++) {
            boolean big = i == smallTunnels;
            ThrottledTarget target = new ThrottledTarget(0);
            targets.add(target);
            expected[i] = big ? BIG_BYTES : SMALL_BYTES;
            feeders[i] = new DataFeeder(server.dial(target.address(), 100 + i), big ? BIG_DATA : SMALL_DATA,
                    expected[i], i);
        }
        int[] turn = {0};
        CompletableFuture<Void> flood = server.flood(HostileServer.until(() -> {
            for (int tried = 0; tried < tunnels; tried++) {
                DataFeeder feeder = feeders[turn[0]++ % tunnels];
                if (feeder.left() > 0) {
                    return feeder.next();
                }
            }
            return null;
        }), 16, 1);

        // The shared stream pauses (budget or a tunnel's high-water mark) and stays paused: nothing moves.
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200)).until(() -> {
            sampleMemory();
            return value(metrics(), "tenant_gateway_tunnel_shared_stream_pauses_total") >= 1;
        });
        double[] seen = {-1};
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(500)).until(() -> {
            sampleMemory();
            double now = value(metrics(), "tenant_gateway_tunnel_bytes_total", "direction=\"to_target\"");
            boolean still = now == seen[0];
            seen[0] = now;
            return still;
        });
        String paused = metrics();
        double budgetLimit = value(paused, "tenant_gateway_memory_budget_limit_bytes", "account=\"tunnel-target-buffers\"");
        System.out.printf("paused: %.1f of %.1f MiB accepted for targets, flood done=%s, budget limit %.1f MiB; %s%n",
                seen[0] / MIB, (smallTunnels * SMALL_BYTES + (withBig ? BIG_BYTES : 0)) / (double) MIB, flood.isDone(),
                budgetLimit / MIB, memoryReport());
        System.out.printf("pauses: budget WARN %d, tunnel-buffer WARN %d%n",
                agent.lines("reached the agent's direct-memory budget").size(),
                agent.lines("tunnel buffer full; pausing").size());
        assertThat(agent.lines(pauseLog)).as("pause logged: %s", pauseLog).hasSize(1);
        assertThat(flood).as("the server is held back").isNotDone();
        assertThat(server.closeResponses.get()).as("no tunnel closed").isZero();
        assertThat(peakBudgetUsed).as("target-buffer budget used")
                .isLessThanOrEqualTo((long) budgetLimit + 2L * (BIG_DATA + 64 * 1024));
        assertThat(peakDirect).as("direct buffers").isLessThanOrEqualTo(DIRECT_LIMIT);

        // The targets read: everything arrives, in order, and no tunnel was closed.
        targets.forEach(ThrottledTarget::readFreely);
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200)).untilAsserted(() -> {
            sampleMemory();
            for (int i = 0; i < tunnels; i++) {
                assertThat(targets.get(i).received.get()).as("tunnel %d", i).isEqualTo(expected[i]);
            }
        });
        assertThat(flood).isDone();
        for (int i = 0; i < tunnels; i++) {
            assertThat(targets.get(i).sha256()).as("tunnel %d", i).isEqualTo(feeders[i].sha256());
        }
        assertThat(server.closeResponses.get()).as("no tunnel closed").isZero();
        assertThat(value(metrics(), "konnectivity_network_proxy_agent_open_endpoint_connections"))
                .isEqualTo(tunnels);
        System.out.printf("resumed: all %d tunnels intact; %s%n", tunnels, memoryReport());
        assertThat(peakRss).as("RSS").isLessThan(RSS_LIMIT);
        assertCleanLog();
    }
}
