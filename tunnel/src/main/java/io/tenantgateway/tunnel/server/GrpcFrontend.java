package io.tenantgateway.tunnel.server;

import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.Status;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.tenantgateway.tunnel.proto.Packet;
import io.tenantgateway.tunnel.proto.PacketType;
import io.tenantgateway.tunnel.protocol.Packets;
import io.tenantgateway.tunnel.transport.Transports;
import java.util.ArrayDeque;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code /ProxyService/Proxy}: one stream per tunnelled connection. The first packet is a DIAL_REQ; after the
 * agent's DIAL_RSP the stream carries DATA both ways until a CLOSE_REQ / CLOSE_RSP exchange. Client messages
 * are requested one at a time (manual flow control), and only while the tunnel may send to its agent, so a
 * stalled target pushes back on exactly this client stream.
 */
final class GrpcFrontend implements ServerCallHandler<Packet, Packet> {
    private static final Logger log = LoggerFactory.getLogger(GrpcFrontend.class);
    private static final int ON_READY_THRESHOLD = 256 * 1024;

    private final AgentRegistry registry;
    private final EventLoopGroup group;

    GrpcFrontend(AgentRegistry registry, EventLoopGroup group) {
        this.registry = registry;
        this.group = group;
    }

    @Override
    public ServerCall.Listener<Packet> startCall(ServerCall<Packet, Packet> call, Metadata headers) {
        EventLoop loop = Transports.currentLoop(group);
        if (loop == null) {
            throw new IllegalStateException("ProxyService call started outside the server's event loops (the"
                    + " server must use directExecutor)");
        }
        Session session = new Session(call, loop);
        session.start();
        return session;
    }

    private enum State { NEW, DIALING, ESTABLISHED, CLOSING, DONE }

    /** One client stream; confined to the event loop of its transport. */
    private final class Session extends ServerCall.Listener<Packet> implements Frontend {
        private final ServerCall<Packet, Packet> call;
        private final EventLoop loop;
        private final ArrayDeque<Packet> outbound = new ArrayDeque<>();
        private State state = State.NEW;
        private long random;
        private ServerTunnel tunnel;
        private boolean requested;
        private boolean closeWhenFlushed;
        private boolean callClosed;

        Session(ServerCall<Packet, Packet> call, EventLoop loop) {
            this.call = call;
            this.loop = loop;
        }

        void start() {
            call.setOnReadyThreshold(ON_READY_THRESHOLD);
            call.sendHeaders(new Metadata());
            request();
        }

        @Override
        public EventLoop loop() {
            return loop;
        }

        private void request() {
            if (!requested && state != State.DONE) {
                requested = true;
                call.request(1);
            }
        }

        private void readNext() {
            if (state == State.ESTABLISHED && tunnel.parkUnlessReadable()) {
                request();
            }
        }

        @Override
        public void resumeReading() {
            if (state == State.ESTABLISHED && tunnel.unparkIfReadable()) {
                request();
            }
        }

        @Override
        public void onMessage(Packet packet) {
            requested = false;
            Packets.Malformation problem = Packets.check(packet, false);
            if (problem != null) {
                fail(Status.INVALID_ARGUMENT.withDescription(problem.message()));
                return;
            }
            switch (state) {
                case NEW -> {
                    if (packet.getType() != PacketType.DIAL_REQ) {
                        fail(Status.INVALID_ARGUMENT.withDescription("first packet is " + Packets.typeName(packet)
                                + " (expected: DIAL_REQ)"));
                    } else {
                        dial(packet);
                    }
                }
                case DIALING -> {
                    if (packet.getType() == PacketType.DIAL_CLS) {
                        cancelDial();
                        finish(Status.OK);
                    } else {
                        request();
                    }
                }
                case ESTABLISHED -> established(packet);
                case CLOSING, DONE -> request();
            }
        }

        private void established(Packet packet) {
            switch (packet.getType()) {
                case DATA -> {
                    if (packet.getData().getConnectID() != tunnel.connectId) {
                        fail(Status.INVALID_ARGUMENT.withDescription("DATA for connectID "
                                + packet.getData().getConnectID() + " (expected: " + tunnel.connectId + ")"));
                        return;
                    }
                    tunnel.toAgent(packet);
                    readNext();
                }
                case CLOSE_REQ -> {
                    state = State.CLOSING;
                    tunnel.closeFromFrontend();
                    request();
                }
                default -> request();
            }
        }

        private void dial(Packet packet) {
            random = packet.getDialRequest().getRandom();
            String address = packet.getDialRequest().getAddress();
            AgentConnection agent = registry.pick(hostOf(address));
            if (agent == null) {
                log.debug("no agent for dial dialID={} address={}", random, address);
                sendAndFinish(Packets.dialFailure(random, Packets.NO_AGENT_AVAILABLE));
                return;
            }
            state = State.DIALING;
            if (!registry.addPending(new PendingDial(random, address, agent, this))) {
                state = State.DONE;
                sendAndFinish(Packets.dialFailure(random, "dial id " + random + " is already in use"));
                return;
            }
            if (!agent.execute(() -> agent.sendDialRequest(packet))) {
                registry.takePending(random);
                sendAndFinish(Packets.dialFailure(random, "agent disconnected"));
                return;
            }
            request(); // DIAL_CLS or a half-close may follow
        }

        @Override
        public void dialSucceeded(ServerTunnel established, Packet response) {
            if (state != State.DIALING) {
                established.closeFromFrontend(); // the client left while the agent was dialling
                return;
            }
            tunnel = established;
            state = State.ESTABLISHED;
            call.sendMessage(response);
            readNext();
        }

        @Override
        public void dialFailed(Packet response) {
            if (state == State.DIALING) {
                sendAndFinish(response);
            }
        }

        @Override
        public void deliver(Packet data) {
            int size = data.getData().getData().size();
            if (state == State.DONE || closeWhenFlushed) {
                tunnel.deliveredToClient(size);
                return;
            }
            if (!tunnel.received(size)) {
                log.warn("agent exceeded the flow-control window; closing tunnel connectionID={}", tunnel.connectId);
                tunnel.deliveredToClient(size);
                fail(Status.RESOURCE_EXHAUSTED.withDescription("agent exceeded the flow-control window"));
                return;
            }
            outbound.add(data);
            flush();
        }

        @Override
        public void closedByAgent(String error) {
            if (state == State.DONE || closeWhenFlushed) {
                return;
            }
            state = State.CLOSING;
            outbound.add(error == null || error.isEmpty() ? Packets.closeResponse(tunnel.connectId)
                    : Packets.closeResponse(tunnel.connectId, error));
            closeWhenFlushed = true;
            flush();
        }

        private void flush() {
            while (!outbound.isEmpty() && call.isReady()) {
                Packet packet = outbound.poll();
                call.sendMessage(packet);
                if (packet.getType() == PacketType.DATA) {
                    tunnel.deliveredToClient(packet.getData().getData().size());
                }
            }
            if (outbound.isEmpty() && closeWhenFlushed) {
                finish(Status.OK);
            }
        }

        @Override
        public void onReady() {
            if (state != State.DONE) {
                flush();
            }
        }

        @Override
        public void onHalfClose() {
            switch (state) {
                case NEW -> finish(Status.OK);
                case DIALING -> {
                    cancelDial();
                    finish(Status.OK);
                }
                case ESTABLISHED -> {
                    // No half-close in the protocol: the client is done, so the tunnel closes; the stream ends
                    // after the agent's CLOSE_RSP has been passed on.
                    state = State.CLOSING;
                    tunnel.closeFromFrontend();
                }
                default -> {
                }
            }
        }

        @Override
        public void onCancel() {
            if (state == State.DIALING) {
                cancelDial();
            } else if (tunnel != null) {
                tunnel.closeFromFrontend();
            }
            drop();
            state = State.DONE;
            callClosed = true;
        }

        private void cancelDial() {
            state = State.DONE;
            PendingDial pending = registry.takePending(random);
            if (pending != null) {
                pending.agent().execute(() -> pending.agent().sendDialClose(random));
            }
        }

        private void sendAndFinish(Packet packet) {
            call.sendMessage(packet);
            finish(Status.OK);
        }

        private void fail(Status status) {
            if (state == State.DIALING) {
                cancelDial();
            } else if (tunnel != null) {
                tunnel.closeFromFrontend();
            }
            finish(status);
        }

        private void finish(Status status) {
            state = State.DONE;
            drop();
            if (!callClosed) {
                callClosed = true;
                call.close(status, new Metadata());
            }
        }

        private void drop() {
            Packet packet;
            while ((packet = outbound.poll()) != null) {
                if (packet.getType() == PacketType.DATA) {
                    tunnel.deliveredToClient(packet.getData().getData().size());
                }
            }
        }
    }

    /** The host part of {@code host:port} ({@code [v6]:port} → {@code v6}). */
    static String hostOf(String address) {
        int colon = address.lastIndexOf(':');
        String host = colon > 0 ? address.substring(0, colon) : address;
        return host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
    }
}
