package io.tenantgateway.tunnel.client;

import java.util.List;
import java.util.stream.Collectors;

/** What {@link TunnelClientSet#drainAndClose} did on every server connection. */
public record DrainReport(List<DrainResult> servers) {
    public DrainReport {
        servers = List.copyOf(servers);
    }

    public boolean lossless() {
        return servers.stream().allMatch(DrainResult::lossless);
    }

    public int tunnelsCut() {
        return servers.stream().mapToInt(DrainResult::tunnelsCut).sum();
    }

    /** {@code serverID=tunnelsCut} for each server that lost something, for logs: {@code kas-0=3, kas-1=stream}. */
    public String describeCuts() {
        return servers.stream().filter(s -> !s.lossless())
                .map(s -> s.serverId() + "=" + (s.tunnelsCut() > 0 ? s.tunnelsCut() + " tunnel(s)" : "stream"))
                .collect(Collectors.joining(", "));
    }
}
