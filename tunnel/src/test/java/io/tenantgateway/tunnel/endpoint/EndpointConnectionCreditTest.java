package io.tenantgateway.tunnel.endpoint;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.tenantgateway.tunnel.protocol.ReceiveWindow;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * TG_CREDIT with absurd values (red team, issue 24): credit saturates at {@code Long.MAX_VALUE}. Granting
 * {@code Long.MAX_VALUE} twice used to wrap the tunnel's send credit negative, and the target was never read again.
 */
class EndpointConnectionCreditTest {
    @Test
    void creditSaturatesInsteadOfWrappingNegative() {
        AtomicInteger reads = new AtomicInteger();
        EmbeddedChannel target = new EmbeddedChannel(new ChannelOutboundHandlerAdapter() {
            @Override
            public void read(ChannelHandlerContext ctx) {
                reads.incrementAndGet();
            }
        });
        target.config().setAutoRead(false);
        AtomicInteger sent = new AtomicInteger();
        EndpointConnection connection = new EndpointConnection(7, 7, "127.0.0.1:1", Instant.now(), new Port(sent),
                1024, new ReceiveWindow(1024, 1024));
        assertThat(connection.dialed(target)).isTrue();
        int registered = reads.get(); // EmbeddedChannel may read once when it registers
        connection.startReading();
        assertThat(reads).hasValue(registered + 1);
        connection.onRead(Unpooled.buffer(1024).writeZero(1024)); // the whole window used
        connection.onReadComplete();
        assertThat(reads).as("no read without credit").hasValue(registered + 1);

        connection.addCredit(Long.MAX_VALUE);
        assertThat(reads).hasValue(registered + 2);
        connection.addCredit(Long.MAX_VALUE); // while a read is in flight
        connection.onRead(Unpooled.buffer(1).writeZero(1));
        connection.onReadComplete();
        assertThat(reads).as("reads go on after absurd credit").hasValue(registered + 3);
        assertThat(sent).hasValue(2);
        target.finishAndReleaseAll();
    }

    private record Port(AtomicInteger sent) implements EndpointConnection.TunnelPort {
        @Override
        public void sendData(EndpointConnection connection, ByteBuf data) {
            sent.incrementAndGet();
            data.release();
        }

        @Override
        public void sendCloseResponse(long connectId, String errorOrNull) {
        }

        @Override
        public void sendCredit(long connectId, long bytes) {
        }

        @Override
        public boolean streamWritable() {
            return true;
        }

        @Override
        public void parkUntilWritable(EndpointConnection connection) {
        }

        @Override
        public void targetWriteStarted(int bytes) {
        }

        @Override
        public void targetWriteDone(int bytes) {
        }

        @Override
        public void bufferFull(EndpointConnection connection, boolean full) {
        }

        @Override
        public void closed(EndpointConnection connection) {
        }
    }
}
