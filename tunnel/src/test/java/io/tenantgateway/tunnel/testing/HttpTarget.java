package io.tenantgateway.tunnel.testing;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import io.tenantgateway.tunnel.transport.Transports;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.security.MessageDigest;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * An HTTP/1.1 target: {@code POST /upload} with a streamed body; answers with the body's SHA-256 in
 * {@code x-upload-sha256} and a streamed response of {@code x-response-bytes} bytes of payload
 * {@code x-response-seed}. Both sides respect writability, so 64 MiB never sits in memory.
 */
public final class HttpTarget implements AutoCloseable {
    public static final String UPLOAD_SHA = "x-upload-sha256";
    public static final String RESPONSE_BYTES = "x-response-bytes";
    public static final String RESPONSE_SEED = "x-response-seed";
    private static final int CHUNK = 64 * 1024;

    private final EventLoopGroup group;
    private final Channel server;

    public HttpTarget() {
        group = Transports.newGroup(1, "http-target");
        server = new ServerBootstrap().group(group).channel(Transports.serverSocketChannel(group))
                .childHandler(new ChannelInitializer<>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        ch.pipeline().addLast(new HttpServerCodec(), new ServerHandler());
                    }
                })
                .bind(new InetSocketAddress("127.0.0.1", 0)).syncUninterruptibly().channel();
    }

    public String hostPort() {
        return "127.0.0.1:" + ((InetSocketAddress) server.localAddress()).getPort();
    }

    @Override
    public void close() {
        server.close().syncUninterruptibly();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }

    private static final class ServerHandler extends ChannelInboundHandlerAdapter {
        private MessageDigest digest;
        private Payload payload;
        private long remaining;

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            try {
                if (msg instanceof HttpRequest request) {
                    digest = Payload.newDigest();
                    remaining = Long.parseLong(request.headers().get(RESPONSE_BYTES, "0"));
                    payload = new Payload(Long.parseLong(request.headers().get(RESPONSE_SEED, "1")));
                }
                if (msg instanceof HttpContent content) {
                    digest.update(content.content().nioBuffer());
                    if (msg instanceof LastHttpContent) {
                        HttpResponse response = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
                        response.headers().set(UPLOAD_SHA, Payload.hex(digest));
                        response.headers().set(HttpHeaderNames.CONTENT_LENGTH, remaining);
                        ctx.write(response);
                        writeMore(ctx);
                    }
                }
            } finally {
                ReferenceCountUtil.release(msg);
            }
        }

        private void writeMore(ChannelHandlerContext ctx) {
            while (payload != null && remaining > 0 && ctx.channel().isWritable()) {
                int size = (int) Math.min(CHUNK, remaining);
                ByteBuf buf = ctx.alloc().buffer(size);
                payload.fill(buf, size);
                remaining -= size;
                ctx.write(new DefaultHttpContent(buf));
            }
            if (payload != null && remaining == 0) {
                payload = null;
                ctx.write(LastHttpContent.EMPTY_LAST_CONTENT);
            }
            ctx.flush();
        }

        @Override
        public void channelWritabilityChanged(ChannelHandlerContext ctx) {
            if (ctx.channel().isWritable()) {
                writeMore(ctx);
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }

    /** The client side: add {@link #pipeline()} to a channel; {@link #done()} completes with the result. */
    public static final class Upload extends ChannelInboundHandlerAdapter {
        private final Payload payload;
        private final long uploadBytes;
        private final long responseBytes;
        private final long responseSeed;
        private final MessageDigest sent = Payload.newDigest();
        private final MessageDigest received = Payload.newDigest();
        private final CompletableFuture<Result> done = new CompletableFuture<>();
        private long remaining;
        private long receivedBytes;
        private String uploadShaFromServer;

        public record Result(int status, String sentSha256, String serverSawSha256, String receivedSha256,
                long receivedBytes) {
        }

        public Upload(long seed, long uploadBytes, long responseSeed, long responseBytes) {
            this.payload = new Payload(seed);
            this.uploadBytes = uploadBytes;
            this.remaining = uploadBytes;
            this.responseBytes = responseBytes;
            this.responseSeed = responseSeed;
        }

        public ChannelInitializer<Channel> pipeline() {
            Upload self = this;
            return new ChannelInitializer<>() {
                @Override
                protected void initChannel(Channel ch) {
                    ch.pipeline().addLast(new HttpClientCodec(), self);
                }
            };
        }

        public CompletableFuture<Result> done() {
            return done;
        }

        private int status;

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            HttpRequest request = new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.POST, "/upload");
            request.headers().set(HttpHeaderNames.HOST, "target");
            request.headers().set(HttpHeaderNames.CONTENT_LENGTH, uploadBytes);
            request.headers().set(RESPONSE_BYTES, responseBytes);
            request.headers().set(RESPONSE_SEED, responseSeed);
            ctx.write(request);
            writeMore(ctx);
            ctx.fireChannelActive();
        }

        private void writeMore(ChannelHandlerContext ctx) {
            while (remaining > 0 && ctx.channel().isWritable()) {
                int size = (int) Math.min(CHUNK, remaining);
                ByteBuf buf = ctx.alloc().buffer(size);
                payload.fill(buf, size);
                sent.update(buf.nioBuffer());
                remaining -= size;
                ctx.write(new DefaultHttpContent(buf));
                if (remaining == 0) {
                    ctx.write(LastHttpContent.EMPTY_LAST_CONTENT);
                }
            }
            ctx.flush();
        }

        @Override
        public void channelWritabilityChanged(ChannelHandlerContext ctx) {
            if (ctx.channel().isWritable()) {
                writeMore(ctx);
            }
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            try {
                if (msg instanceof HttpResponse response) {
                    status = response.status().code();
                    uploadShaFromServer = response.headers().get(UPLOAD_SHA);
                }
                if (msg instanceof HttpContent content) {
                    received.update(content.content().nioBuffer());
                    receivedBytes += content.content().readableBytes();
                    if (msg instanceof LastHttpContent) {
                        done.complete(new Result(status, Payload.hex(sent), uploadShaFromServer,
                                Payload.hex(received), receivedBytes));
                    }
                }
            } finally {
                ReferenceCountUtil.release(msg);
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            done.completeExceptionally(new IOException("connection closed after " + receivedBytes
                    + " response bytes"));
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            done.completeExceptionally(cause);
            ctx.close();
        }
    }
}
