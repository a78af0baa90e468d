package io.tenantgateway.tunnel.server;

import io.tenantgateway.common.config.ConfigException;
import java.util.ArrayList;
import java.util.List;

/** How the server picks an agent for a dial ({@code --proxy-strategies}, tried in order). */
public enum ProxyStrategy {
    /** Any connected agent, at random. */
    DEFAULT("default"),
    /** An agent whose {@code host}, {@code ipv4} or {@code ipv6} identifier equals the dial's host. */
    DEST_HOST("destHost"),
    /** An agent that announced {@code default-route=true}. */
    DEFAULT_ROUTE("defaultRoute");

    private final String flagName;

    ProxyStrategy(String flagName) {
        this.flagName = flagName;
    }

    public String flagName() {
        return flagName;
    }

    /** Parses upstream's comma-separated flag value, e.g. {@code destHost,default}. */
    public static List<ProxyStrategy> parse(String flag) {
        List<ProxyStrategy> out = new ArrayList<>();
        for (String part : flag.split(",")) {
            String name = part.strip();
            ProxyStrategy match = null;
            for (ProxyStrategy strategy : values()) {
                if (strategy.flagName.equals(name)) {
                    match = strategy;
                }
            }
            if (match == null) {
                throw new ConfigException("--proxy-strategies", "\"" + name + "\"",
                        "default, destHost or defaultRoute");
            }
            out.add(match);
        }
        return out;
    }
}
