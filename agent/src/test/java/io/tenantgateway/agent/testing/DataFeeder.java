package io.tenantgateway.agent.testing;

import com.google.protobuf.ByteString;
import io.tenantgateway.tunnel.proto.Packet;
import io.tenantgateway.tunnel.protocol.Packets;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.Random;

/** Makes one tunnel's DATA for a {@link HostileServer} flood: pseudo-random bytes, hashed as they are made. */
public final class DataFeeder {
    private final long connectId;
    private final int size;
    private final Random random;
    private final MessageDigest digest = HostileServer.newDigest();
    private long left;

    /** {@code total} bytes for {@code connectId} in DATA of {@code size} bytes, from {@code seed}. */
    public DataFeeder(long connectId, int size, long total, long seed) {
        this.connectId = connectId;
        this.size = size;
        this.left = total;
        this.random = new Random(seed);
    }

    public long connectId() {
        return connectId;
    }

    public long left() {
        return left;
    }

    /** Gives {@code more} bytes to send after what is left (the same stream of bytes goes on). */
    public void add(long more) {
        left += more;
    }

    public Packet next() {
        byte[] chunk = new byte[(int) Math.min(size, left)];
        random.nextBytes(chunk);
        digest.update(chunk);
        left -= chunk.length;
        return Packets.data(connectId, ByteString.copyFrom(chunk));
    }

    /** SHA-256 of every byte made so far. */
    public String sha256() {
        try {
            return HexFormat.of().formatHex(((MessageDigest) digest.clone()).digest());
        } catch (CloneNotSupportedException e) {
            throw new IllegalStateException(e);
        }
    }
}
