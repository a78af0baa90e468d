package io.tenantgateway.agent.http;

import static java.util.Objects.requireNonNull;

import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.Map;

/**
 * Who holds the connection slots of one {@link HttpEndpoint}, and whom a new connection displaces when they are
 * full: the decision that lets a probe in however many idle connections a peer holds open.
 *
 * <ul>
 *   <li>A slot is {@link State#IDLE} while nothing of a request has arrived (a new connection, or a kept-alive one
 *       between requests), {@link State#RECEIVING} from the first byte of a request until it arrived in full,
 *       {@link State#RESPONDING} while its answer is built, and {@link State#SENDING} once the answer was handed to
 *       the socket until the client took it all. Receiving and sending slots are "waiting on the client": a client
 *       that trickles its request or stops reading its answer holds its slot only until someone needs it.
 *   <li>A peer (remote address) that holds {@code perPeer} slots and opens one more displaces its own oldest idle
 *       slot (else its oldest one waiting on the client); the new connection is always taken. Refusing it instead would lock out
 *       everyone else behind that address: the kubelet probes from the node's own address, which host-network
 *       processes share.
 *   <li>At {@code max} slots, a new connection displaces the slot idle the longest, of any peer; with none idle, the
 *       oldest receiving slot of the peer holding the most. A probe connection is never displaced this way before it
 *       sends its request: every slot taken after it is younger.
 *   <li>A slot {@link State#RESPONDING} is never displaced (its handler is at work: its request gets its answer):
 *       with every slot responding the new connection is refused.
 * </ul>
 *
 * <p>Displaced slots leave the table at once (their connection closes afterwards), so the counts never exceed the
 * caps.
 *
 * <p>Threading: not thread-safe; confined to the endpoint's one event loop.
 */
final class ConnectionSlots {
    enum State { IDLE, RECEIVING, RESPONDING, SENDING }

    /** How a connection was let in. */
    enum Admission { TAKEN, DISPLACED_PEER, DISPLACED_OLDEST_IDLE, DISPLACED_OLDEST_WAITING, REFUSED }

    /** One connection's slot; {@code owner} is what the endpoint closes when the slot is displaced. */
    static final class Slot {
        final Object peer;
        final Object owner;
        State state = State.IDLE;
        boolean held = true;

        private Slot(Object peer, Object owner) {
            this.peer = peer;
            this.owner = owner;
        }

        State state() {
            return state;
        }
    }

    /** The result of {@link #open}: the new slot ({@code null} when refused) and the slot it displaced, if any. */
    record Opened(Admission admission, Slot slot, Slot displaced) {
    }

    private static final class Peer {
        final LinkedHashSet<Slot> idle = new LinkedHashSet<>();
        /** Receiving or sending: waiting on the client, the one waiting the longest first. */
        final LinkedHashSet<Slot> waiting = new LinkedHashSet<>();
        int count;
    }

    private final int max;
    private final int perPeer;
    /** Every idle slot, the one idle the longest first. */
    private final LinkedHashSet<Slot> idle = new LinkedHashSet<>();
    private final Map<Object, Peer> peers = new HashMap<>();
    private int open;

    ConnectionSlots(int max, int perPeer) {
        if (max < 1) {
            throw new IllegalArgumentException("max connections: " + max + " (expected: >= 1)");
        }
        if (perPeer < 1 || perPeer > max) {
            throw new IllegalArgumentException("max connections per peer: " + perPeer + " (expected: 1.." + max + ")");
        }
        this.max = max;
        this.perPeer = perPeer;
    }

    /** Takes a slot for a new connection from {@code peer}, displacing another when the caps say so. */
    Opened open(Object peer, Object owner) {
        requireNonNull(peer, "peer");
        requireNonNull(owner, "owner");
        Peer own = peers.get(peer);
        Slot displaced = null;
        Admission admission = Admission.TAKEN;
        if (own != null && own.count >= perPeer) {
            displaced = oldest(own);
            if (displaced == null) {
                return new Opened(Admission.REFUSED, null, null);
            }
            admission = Admission.DISPLACED_PEER;
        } else if (open >= max) {
            displaced = idle.isEmpty() ? null : idle.iterator().next();
            admission = Admission.DISPLACED_OLDEST_IDLE;
            if (displaced == null) {
                Peer biggest = null;
                for (Peer candidate : peers.values()) {
                    if (!candidate.waiting.isEmpty() && (biggest == null || candidate.count > biggest.count)) {
                        biggest = candidate;
                    }
                }
                displaced = biggest == null ? null : biggest.waiting.iterator().next();
                admission = Admission.DISPLACED_OLDEST_WAITING;
            }
            if (displaced == null) {
                return new Opened(Admission.REFUSED, null, null);
            }
        }
        if (displaced != null) {
            close(displaced);
        }
        Slot slot = new Slot(peer, owner);
        Peer holder = peers.computeIfAbsent(peer, p -> new Peer());
        holder.count++;
        holder.idle.add(slot);
        idle.add(slot);
        open++;
        return new Opened(admission, slot, displaced);
    }

    private static Slot oldest(Peer peer) {
        if (!peer.idle.isEmpty()) {
            return peer.idle.iterator().next();
        }
        return peer.waiting.isEmpty() ? null : peer.waiting.iterator().next();
    }

    /** Moves {@code slot} to {@code state}; a slot that became idle again is now the youngest idle one. */
    void set(Slot slot, State state) {
        if (!slot.held || slot.state == state) {
            return;
        }
        Peer holder = peers.get(slot.peer);
        leave(slot, holder);
        slot.state = state;
        switch (state) {
            case IDLE -> {
                idle.add(slot);
                holder.idle.add(slot);
            }
            case RECEIVING, SENDING -> holder.waiting.add(slot);
            case RESPONDING -> { }
        }
    }

    /** The slot's connection closed (or was displaced): frees it; again is a no-op. */
    void close(Slot slot) {
        if (!slot.held) {
            return;
        }
        slot.held = false;
        Peer holder = peers.get(slot.peer);
        leave(slot, holder);
        if (--holder.count == 0) {
            peers.remove(slot.peer);
        }
        open--;
    }

    private void leave(Slot slot, Peer holder) {
        switch (slot.state) {
            case IDLE -> {
                idle.remove(slot);
                holder.idle.remove(slot);
            }
            case RECEIVING, SENDING -> holder.waiting.remove(slot);
            case RESPONDING -> { }
        }
    }

    int open() {
        return open;
    }

    int peers() {
        return peers.size();
    }

    /** Slots held by {@code peer}. */
    int openFrom(Object peer) {
        Peer holder = peers.get(peer);
        return holder == null ? 0 : holder.count;
    }

    int max() {
        return max;
    }

    int perPeer() {
        return perPeer;
    }

}
