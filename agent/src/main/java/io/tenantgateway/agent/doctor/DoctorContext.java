package io.tenantgateway.agent.doctor;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.netty.channel.EventLoopGroup;
import io.tenantgateway.agent.part.Channel;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;

/**
 * What {@code doctor} gives a part's checks: the clock, the timeout of each network step, an event loop for sockets,
 * what the earlier checks found about the Kubernetes API, an API client, and channels on which one part's checks
 * leave what another's need (as the parts' channels at run time). Used on the doctor's one thread.
 */
public interface DoctorContext {
    Clock clock();

    /** The timeout of each network step ({@code --timeout}). */
    Duration timeout();

    /** One event loop (epoll where it loads) for socket probes. */
    EventLoopGroup group();

    /** Whether some enabled part uses the Kubernetes API (else the agent never talks to it). */
    boolean needsApi();

    /** Whether the Kubernetes API answered the permission review (the checks that read objects go on). */
    boolean apiOk();

    /** A new API client with the agent's kubeconfig and the timeout; the caller closes it. */
    KubernetesClient kubernetes() throws IOException;

    /** The channel {@code key} names, for this doctor run. */
    <T> Channel<T> channel(Channel.Key<T> key);
}
