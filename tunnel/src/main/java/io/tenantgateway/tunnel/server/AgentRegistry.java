package io.tenantgateway.tunnel.server;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;

/** Connected agents and pending dials; thread-safe (agent and frontend loops both use it). */
final class AgentRegistry {
    private final List<AgentConnection> agents = new CopyOnWriteArrayList<>();
    private final Map<Long, PendingDial> pending = new ConcurrentHashMap<>();
    private final List<ProxyStrategy> strategies;

    AgentRegistry(List<ProxyStrategy> strategies) {
        this.strategies = List.copyOf(strategies);
    }

    void add(AgentConnection agent) {
        agents.add(agent);
    }

    void remove(AgentConnection agent) {
        agents.remove(agent);
    }

    List<AgentConnection> agents() {
        return List.copyOf(agents);
    }

    /**
     * Picks an agent for a dial to {@code host} by trying the strategies in order. Draining agents are used
     * only when no other agent matches any strategy (so a lone draining agent still serves, as upstream does).
     */
    AgentConnection pick(String host) {
        AgentConnection choice = pick(host, false);
        return choice != null ? choice : pick(host, true);
    }

    private AgentConnection pick(String host, boolean allowDraining) {
        for (ProxyStrategy strategy : strategies) {
            List<AgentConnection> candidates = new ArrayList<>();
            for (AgentConnection agent : agents) {
                if (agent.isDone() || (agent.draining() && !allowDraining)) {
                    continue;
                }
                boolean matches = switch (strategy) {
                    case DEFAULT -> true;
                    case DEST_HOST -> agent.identifiers.matchesHost(host);
                    case DEFAULT_ROUTE -> agent.identifiers.defaultRoute();
                };
                if (matches) {
                    candidates.add(agent);
                }
            }
            if (!candidates.isEmpty()) {
                return candidates.get(ThreadLocalRandom.current().nextInt(candidates.size()));
            }
        }
        return null;
    }

    /** Registers a dial; false when the random is already pending (a client bug or a collision). */
    boolean addPending(PendingDial dial) {
        return pending.putIfAbsent(dial.random(), dial) == null;
    }

    PendingDial takePending(long random) {
        return pending.remove(random);
    }

    /** Takes the pending dial only if it was sent to {@code agent}. */
    PendingDial takePendingFor(long random, AgentConnection agent) {
        PendingDial dial = pending.get(random);
        if (dial == null || dial.agent() != agent) {
            return null;
        }
        return pending.remove(random, dial) ? dial : null;
    }

    List<PendingDial> takeAllPendingFor(AgentConnection agent) {
        List<PendingDial> out = new ArrayList<>();
        for (PendingDial dial : pending.values()) {
            if (dial.agent() == agent && pending.remove(dial.random(), dial)) {
                out.add(dial);
            }
        }
        return out;
    }

    int pendingCount() {
        return pending.size();
    }
}
