package io.tenantgateway.agent.testing;

import static io.tenantgateway.agent.testing.Waits.WAIT;

import com.google.protobuf.ByteString;
import com.google.protobuf.CodedOutputStream;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.NettyServerBuilder;
import io.netty.handler.ssl.SslProvider;
import io.tenantgateway.certs.ClientAuthMode;
import io.tenantgateway.certs.TlsContexts;
import io.tenantgateway.certs.testing.TestPki;
import io.tenantgateway.tunnel.proto.Packet;
import io.tenantgateway.tunnel.proto.PacketType;
import io.tenantgateway.tunnel.protocol.Packets;
import io.tenantgateway.tunnel.transport.TunnelMethods;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.security.MessageDigest;
import java.time.Clock;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * A konnectivity-server written to attack the agent: speaks {@code /AgentService/Connect} with the generated tunnel
 * proto (no flow-control extension, as upstream), and can stop reading the agent's stream (it stops calling
 * {@code request}), flood it with any packets, and send bytes that are not a valid message field (invalid UTF-8).
 * Every stream operation runs on one scheduled thread (grpc calls are not thread-safe), which also paces floods.
 *
 * <p>It records what the agent answers: DIAL_RSPs by dial id, CLOSE_RSPs, and DATA per connectID (byte count and a
 * SHA-256 of everything in order).
 */
public final class HostileServer implements AutoCloseable {
    private final ScheduledExecutorService executor = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread thread = new Thread(r, "hostile-server");
        thread.setDaemon(true);
        return thread;
    });
    private final Server server;
    private volatile ServerCall<Packet, byte[]> call;
    /** Messages requested in one go while reading (a per-message request would cost a thread hop each). */
    public static final int READ_BATCH = 1000;
    private volatile boolean reading = true;
    private int outstanding; // requested, not yet delivered (executor thread)
    private Runnable onReadyTask;

    public final Map<Long, CompletableFuture<Packet>> dialResponses = new ConcurrentHashMap<>();
    public final AtomicLong dialResponseCount = new AtomicLong();
    public final AtomicLong dialErrors = new AtomicLong();
    public final AtomicLong closeResponses = new AtomicLong();
    /** The error of every CLOSE_RSP that carried one, by connectID. */
    public final Map<Long, String> closeErrors = new ConcurrentHashMap<>();
    public final Map<Long, Received> data = new ConcurrentHashMap<>();
    public final CompletableFuture<Void> connected = new CompletableFuture<>();
    /** Connect streams the agent opened so far (a reconnect opens another; the newest is the one served). */
    public final AtomicInteger streams = new AtomicInteger();

    /** DATA received for one connectID. */
    public static final class Received {
        public final AtomicLong bytes = new AtomicLong();
        public final java.util.concurrent.BlockingQueue<ByteString> chunks =
                new java.util.concurrent.LinkedBlockingQueue<>();
        private final MessageDigest digest = newDigest();
        private final boolean keep;

        Received(boolean keep) {
            this.keep = keep;
        }

        synchronized void add(ByteString payload) {
            payload.asReadOnlyByteBufferList().forEach(digest::update);
            bytes.addAndGet(payload.size());
            if (keep) {
                chunks.add(payload);
            }
        }

        public synchronized String sha256() {
            try {
                return HexFormat.of().formatHex(((MessageDigest) digest.clone()).digest());
            } catch (CloneNotSupportedException e) {
                throw new IllegalStateException(e);
            }
        }
    }

    public HostileServer(TestPki pki) throws IOException {
        MethodDescriptor<Packet, byte[]> method = TunnelMethods.CONNECT.toBuilder(
                TunnelMethods.CONNECT.getRequestMarshaller(), new RawMarshaller()).build();
        ServerCallHandler<Packet, byte[]> handler = (serverCall, headers) -> {
            call = serverCall;
            Metadata response = new Metadata();
            response.put(Metadata.Key.of("serverid", Metadata.ASCII_STRING_MARSHALLER), "hostile-0");
            response.put(Metadata.Key.of("servercount", Metadata.ASCII_STRING_MARSHALLER), "1");
            serverCall.sendHeaders(response);
            outstanding = READ_BATCH;
            serverCall.request(READ_BATCH);
            streams.incrementAndGet();
            connected.complete(null);
            return new ServerCall.Listener<>() {
                @Override
                public void onMessage(Packet packet) {
                    outstanding--;
                    received(packet);
                    if (reading && outstanding <= READ_BATCH / 2) {
                        serverCall.request(READ_BATCH - outstanding);
                        outstanding = READ_BATCH;
                    }
                }

                @Override
                public void onReady() {
                    Runnable task = onReadyTask;
                    if (task != null) {
                        task.run();
                    }
                }
            };
        };
        server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                .sslContext(TlsContexts.build(GrpcSslContexts.configure(TlsContexts.serverBuilder(
                        pki.serverMaterial(), ClientAuthMode.NONE, Clock.systemUTC()), SslProvider.JDK)))
                .executor(executor)
                .maxInboundMessageSize(16 * 1024 * 1024)
                .addService(ServerServiceDefinition.builder(TunnelMethods.AGENT_SERVICE).addMethod(method, handler)
                        .build())
                .build().start();
    }

    public int port() {
        return ((InetSocketAddress) server.getListenSockets().get(0)).getPort();
    }

    private void received(Packet packet) {
        switch (packet.getType()) {
            case DIAL_RSP -> {
                dialResponseCount.incrementAndGet();
                if (!packet.getDialResponse().getError().isEmpty()) {
                    dialErrors.incrementAndGet();
                }
                dialResponses.computeIfAbsent(packet.getDialResponse().getRandom(), r -> new CompletableFuture<>())
                        .complete(packet);
            }
            case CLOSE_RSP -> {
                closeResponses.incrementAndGet();
                if (!packet.getCloseResponse().getError().isEmpty()) {
                    closeErrors.putIfAbsent(packet.getCloseResponse().getConnectID(),
                            packet.getCloseResponse().getError());
                }
            }
            case DATA -> data.computeIfAbsent(packet.getData().getConnectID(), id -> new Received(false))
                    .add(packet.getData().getData());
            default -> {
            }
        }
    }

    /** The DIAL_RSP for dial id {@code random} (completes when it arrives). */
    public CompletableFuture<Packet> dialResponse(long random) {
        return dialResponses.computeIfAbsent(random, r -> new CompletableFuture<>());
    }

    /** Counts and hashes DATA of {@code connectId} (register before the first DATA can arrive). */
    public Received track(long connectId) {
        return data.computeIfAbsent(connectId, id -> new Received(false));
    }

    /** Keeps DATA of {@code connectId} as chunks too (for round trips), besides counting and hashing it. */
    public Received keepData(long connectId) {
        return data.computeIfAbsent(connectId, id -> new Received(true));
    }

    /**
     * Stops reading the agent's stream: no more {@code request} (up to {@link #READ_BATCH} messages already requested
     * are still read), so grpc stops consuming and HTTP/2 pushes back.
     */
    public void stopReading() {
        reading = false;
    }

    public void resumeReading() {
        executor.execute(() -> {
            reading = true;
            if (outstanding < READ_BATCH) { // a new stream starts with READ_BATCH requested
                call.request(READ_BATCH - outstanding);
                outstanding = READ_BATCH;
            }
        });
    }

    /** Ends the current stream with {@code status} (trailers), as a server does when its handler returns. */
    public void endStream(Status status) {
        executor.execute(() -> call.close(status, new Metadata()));
    }

    public void send(Packet packet) {
        executor.execute(() -> call.sendMessage(packet.toByteArray()));
    }

    /** Sends wire bytes as one message (for fields the generated builders would refuse). */
    public void sendRaw(byte[] message) {
        executor.execute(() -> call.sendMessage(message));
    }

    /**
     * Sends every packet of {@code packets}, {@code perTick} every {@code tickMillis}, waiting while the stream is
     * not ready (a Go server's {@code Send} blocks); completes when the last one was handed to grpc.
     */
    public CompletableFuture<Void> flood(Iterator<byte[]> packets, int perTick, long tickMillis) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        Runnable[] tick = new Runnable[1];
        tick[0] = () -> {
            int sent = 0;
            while (packets.hasNext() && sent < perTick) {
                if (!call.isReady()) {
                    onReadyTask = () -> {
                        onReadyTask = null;
                        executor.execute(tick[0]);
                    };
                    return;
                }
                call.sendMessage(packets.next());
                sent++;
            }
            if (packets.hasNext()) {
                executor.schedule(tick[0], tickMillis, TimeUnit.MILLISECONDS);
            } else {
                done.complete(null);
            }
        };
        executor.execute(tick[0]);
        return done;
    }

    /** {@code count} packets made by {@code make(i)}, serialised lazily. */
    public static Iterator<byte[]> packets(long count, java.util.function.LongFunction<Packet> make) {
        return new Iterator<>() {
            long next;

            @Override
            public boolean hasNext() {
                return next < count;
            }

            @Override
            public byte[] next() {
                return make.apply(next++).toByteArray();
            }
        };
    }

    /** {@code supplier}'s packets until it returns {@code null}. */
    public static Iterator<byte[]> until(Supplier<Packet> supplier) {
        return new Iterator<>() {
            Packet next = supplier.get();

            @Override
            public boolean hasNext() {
                return next != null;
            }

            @Override
            public byte[] next() {
                byte[] bytes = next.toByteArray();
                next = supplier.get();
                return bytes;
            }
        };
    }

    /** A DIAL_REQ whose address is raw bytes (not necessarily UTF-8), written by hand. */
    public static byte[] dialRequestWithRawAddress(byte[] address, long random) {
        try {
            ByteArrayOutputStream inner = new ByteArrayOutputStream();
            CodedOutputStream in = CodedOutputStream.newInstance(inner);
            in.writeString(1, "tcp");
            in.writeBytes(2, ByteString.copyFrom(address));
            in.writeInt64(3, random);
            in.flush();
            ByteArrayOutputStream outer = new ByteArrayOutputStream();
            CodedOutputStream out = CodedOutputStream.newInstance(outer);
            out.writeEnum(1, PacketType.DIAL_REQ_VALUE);
            out.writeBytes(Packet.DIALREQUEST_FIELD_NUMBER, ByteString.copyFrom(inner.toByteArray()));
            out.flush();
            return outer.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Dials {@code address} through the agent and returns the connectID (fails on a DIAL_RSP error). */
    public long dial(String address, long random) throws Exception {
        send(Packets.dialRequest(address, random));
        Packet response = dialResponse(random).get(WAIT.toSeconds(), TimeUnit.SECONDS);
        if (!response.getDialResponse().getError().isEmpty()) {
            throw new AssertionError("dial " + address + ": " + response.getDialResponse().getError());
        }
        return response.getDialResponse().getConnectID();
    }

    static MessageDigest newDigest() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public void close() throws InterruptedException {
        server.shutdownNow();
        server.awaitTermination(WAIT.toSeconds(), TimeUnit.SECONDS);
        executor.shutdownNow();
    }

    /** Writes messages as given; the agent side decides what they mean. */
    private static final class RawMarshaller implements MethodDescriptor.Marshaller<byte[]> {
        @Override
        public InputStream stream(byte[] value) {
            return new ByteArrayInputStream(value);
        }

        @Override
        public byte[] parse(InputStream stream) {
            try {
                return stream.readAllBytes();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }
}
