package io.tenantgateway.tools.bench;

import io.netty.channel.EventLoopGroup;
import io.tenantgateway.tunnel.transport.Transports;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

/**
 * The footprint scenario's baseline: a bare JVM that runs only a Netty server (the bench's
 * {@link LoopbackTarget#transfer} target on one event loop) and nothing else, started with exactly the JVM options
 * the launcher gave the agent. It is the floor a JVM agent cannot go below: the JVM, Netty's classes and its
 * allocator, with no gRPC, TLS, Kubernetes client or configuration. Prints {@code footprint-floor listening PORT}
 * once bound; exits when stdin closes.
 */
public final class FootprintFloor {
    static final String READY = "footprint-floor listening ";

    private FootprintFloor() {
    }

    public static void main(String[] args) throws Exception {
        EventLoopGroup group = Transports.newGroup(1, "floor");
        try (LoopbackTarget target = LoopbackTarget.transfer(group)) {
            System.out.println(READY + target.address().getPort());
            System.out.flush();
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            while (in.readLine() != null) {
                // nothing to do: the parent measures this process from outside and closes stdin to stop it
            }
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        }
    }
}
