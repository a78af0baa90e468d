package io.tenantgateway.agent.admin;

import io.tenantgateway.tunnel.client.TunnelClientSet;
import io.tenantgateway.tunnel.policy.DialPolicy;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the admin port out of the tunnel's reach: the dial policy's defaults deny it on every address of this host.
 * The host's interface addresses join the policy before the admin port listens, and (with
 * {@code --admin-server-port=0}) the port once it is bound: nothing listens there before.
 */
public final class AdminPortGuard {
    private static final Logger log = LoggerFactory.getLogger(AdminPortGuard.class);

    private AdminPortGuard() {
    }

    /**
     * Adds this host's addresses to {@code tunnel}'s policy, before the admin port listens.
     *
     * @return whether the policy guards the admin port (not with {@code --dial-allow=0.0.0.0/0,::/0}'s defaults off)
     */
    public static boolean addHostAddresses(TunnelClientSet tunnel) {
        DialPolicy.Defaults defaults = tunnel.dialPolicy().defaults();
        if (defaults.isNone()) {
            return false;
        }
        List<InetAddress> own = new ArrayList<>(defaults.hostAddresses());
        own.addAll(interfaceAddresses());
        tunnel.dialPolicy(tunnel.dialPolicy().withDefaults(defaults.withHostAddresses(own)));
        return true;
    }

    /** Adds the bound admin port to {@code tunnel}'s policy and logs the policy in force. */
    public static void addAdminPort(TunnelClientSet tunnel, int port) {
        DialPolicy policy = tunnel.dialPolicy();
        tunnel.dialPolicy(policy.withDefaults(policy.defaults().withAdminPort(port)));
        log.info("dial policy in force policy=\"{}\"", tunnel.dialPolicy().describe());
    }

    /** This host's interface addresses (loopback aside: the policy always counts it); none if unreadable. */
    private static List<InetAddress> interfaceAddresses() {
        try {
            return NetworkInterface.networkInterfaces().flatMap(NetworkInterface::inetAddresses)
                    .filter(address -> !address.isLoopbackAddress()).toList();
        } catch (SocketException e) {
            log.warn("cannot list this host's addresses ({}): the dial policy keeps the admin port closed on"
                    + " loopback and the admin bind address only", e.getMessage());
            return List.of();
        }
    }
}
