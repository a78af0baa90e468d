package io.tenantgateway.agent.http;

import static java.util.Objects.requireNonNull;

import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.DefaultFileRegion;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.tenantgateway.common.memory.MemoryBudget;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * The answer to one {@link Request}: set the status and headers, then end it once with a body ({@link #end}) or a
 * file ({@link #sendFile}). Every response carries {@code content-length}; keep-alive follows the request
 * ({@code Connection: close} and HTTP/1.0 without keep-alive close the connection once it is written). A
 * {@code HEAD} request gets the headers of the {@code GET} answer and no body.
 *
 * <p>Memory: a body waits in direct memory while the client does not read it; bodies over {@value #ALWAYS_SENT}
 * bytes are reserved from the endpoint's {@code http-responses} account ({@link HttpEndpoint#RESPONSES_ACCOUNT})
 * until written, and when it is full the answer is a short 503 instead (a probe's answer is always sent).
 *
 * <p>Threading: the setters are not thread-safe; one thread at a time builds the response (the loop, or the
 * blocking thread that finished the work). {@code end} and {@code sendFile} may be called from any thread: the
 * write happens on the connection's event loop. Ending twice throws.
 */
public final class Response {
    private final Channel channel;
    private final HttpVersion version;
    private final boolean keepAlive;
    private final boolean head;
    /** The connection's hook, on its loop, once the response was written (or failed): read the next or close. */
    private final Consumer<ChannelFuture> written;
    /** The connection's hook once the answer is handed to the socket (any thread). */
    private final Runnable sending;
    private final MemoryBudget.Account responses;
    private final HttpHeaders headers = new DefaultHttpHeaders();
    private final AtomicBoolean ended = new AtomicBoolean();
    private int status = 200;

    /** Bodies up to this size are sent whatever the budget says: probes' and errors' answers. */
    static final int ALWAYS_SENT = 4096;

    Response(Channel channel, HttpVersion version, boolean keepAlive, boolean head, Runnable sending,
            MemoryBudget.Account responses, Consumer<ChannelFuture> written) {
        this.channel = requireNonNull(channel, "channel");
        this.sending = requireNonNull(sending, "sending");
        this.responses = requireNonNull(responses, "responses");
        this.version = requireNonNull(version, "version");
        this.keepAlive = keepAlive;
        this.head = head;
        this.written = requireNonNull(written, "written");
    }

    /** @param code the status code (200 unless set) */
    public Response status(int code) {
        if (code < 100 || code > 999) {
            throw new IllegalArgumentException("status: " + code + " (expected: 100..999)");
        }
        this.status = code;
        return this;
    }

    public int status() {
        return status;
    }

    /** Sets header {@code name} (replacing a value set before). */
    public Response header(String name, String value) {
        headers.set(requireNonNull(name, "name"), requireNonNull(value, "value"));
        return this;
    }

    /** Whether {@link #end} or {@link #sendFile} was called. */
    public boolean ended() {
        return ended.get();
    }

    /** Ends the response with no body. */
    public void end() {
        end(new byte[0]);
    }

    /** Ends the response with {@code body} as UTF-8. */
    public void end(String body) {
        end(requireNonNull(body, "body").getBytes(StandardCharsets.UTF_8));
    }

    /** Ends the response with {@code body}. */
    public void end(byte[] body) {
        requireNonNull(body, "body");
        markEnded();
        HttpHeaders sent = headers;
        int code = status;
        if (!head && body.length > ALWAYS_SENT && !responses.tryReserve(body.length)) {
            code = 503;
            body = ("busy: answers waiting for clients to read them hold " + responses.used() + " bytes (expected:"
                    + " at most " + responses.limit() + "); try again\n").getBytes(StandardCharsets.UTF_8);
            sent = new DefaultHttpHeaders().set("content-type", "text/plain; charset=utf-8");
        } else if (!head && body.length <= ALWAYS_SENT) {
            responses.reserveAnyway(body.length);
        }
        long reserved = head ? 0 : body.length;
        FullHttpResponse response = new DefaultFullHttpResponse(version, HttpResponseStatus.valueOf(code),
                head ? Unpooled.EMPTY_BUFFER : Unpooled.wrappedBuffer(body));
        response.headers().set(sent);
        HttpUtil.setContentLength(response, body.length);
        HttpUtil.setKeepAlive(response, keepAlive);
        sending.run();
        channel.writeAndFlush(response).addListener((ChannelFuture done) -> {
            responses.release(reserved);
            written.accept(done);
        });
    }

    /**
     * Ends the response with the first {@code length} bytes of {@code file}, which it closes once sent or failed.
     * The kernel copies them to the socket ({@code sendfile}; no heap buffers, no read on the loop). Open the file
     * off the loop ({@link HttpLoop#blocking}).
     *
     * @return completes when the last byte was written, or fails (the client went away)
     */
    public CompletableFuture<Void> sendFile(FileChannel file, long length) {
        requireNonNull(file, "file");
        CompletableFuture<Void> result = new CompletableFuture<>();
        try {
            markEnded();
        } catch (IllegalStateException e) {
            closeQuietly(file);
            throw e;
        }
        HttpResponse response = new DefaultHttpResponse(version, HttpResponseStatus.valueOf(status));
        response.headers().set(headers);
        HttpUtil.setContentLength(response, length);
        HttpUtil.setKeepAlive(response, keepAlive);
        if (head) {
            closeQuietly(file);
            sending.run();
            channel.write(response);
            channel.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT).addListener((ChannelFuture done) -> {
                complete(result, done);
                written.accept(done);
            });
            return result;
        }
        DefaultFileRegion region = new DefaultFileRegion(file, 0, length); // closes the file when released
        sending.run(); // the kernel copies the file: nothing to reserve
        channel.write(response);
        channel.write(region);
        channel.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT).addListener((ChannelFuture done) -> {
            complete(result, done);
            written.accept(done);
        });
        return result;
    }

    private static void complete(CompletableFuture<Void> result, ChannelFuture done) {
        if (done.isSuccess()) {
            result.complete(null);
        } else {
            result.completeExceptionally(done.cause());
        }
    }

    private void markEnded() {
        if (!ended.compareAndSet(false, true)) {
            throw new IllegalStateException("response already ended (status " + status + ")");
        }
    }

    private static void closeQuietly(FileChannel file) {
        try {
            file.close();
        } catch (IOException ignored) {
            // nothing was sent from it
        }
    }
}
