package io.tenantgateway.agent.http;

import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpRequestDecoder;
import io.netty.handler.codec.http.HttpVersion;
import java.util.List;

/**
 * Netty's request decoder, strict about framing (RFC 9112): the rules that decide where a request ends must leave
 * no two readings, or a proxy in front and this port could disagree and a second, smuggled request ride in the first
 * one's body. {@link #framingProblem} names what {@link ConnectionHandler} refuses with 400 and a close:
 *
 * <ul>
 *   <li>{@code Transfer-Encoding} together with {@code Content-Length} (§6.3: "ought to be handled as an error";
 *       Netty would drop the {@code Content-Length} and read chunks: this decoder keeps both so the check sees them);
 *   <li>a transfer coding other than one {@code chunked} ({@code xchunked}, {@code gzip, chunked},
 *       {@code chunked, chunked}): §6.1, the body length cannot be determined (none of these ports decodes a coding);
 *   <li>{@code Transfer-Encoding} in an HTTP/1.0 request (§6.1: faulty framing).
 * </ul>
 *
 * <p>Netty itself fails (the head's decoder result; answered 400 and closed as well): several or non-numeric
 * {@code Content-Length} values, a header name with a non-token character or whitespace before the colon (§5.1),
 * a bare CR, and, with strict line parsing on, a line ended by a bare LF (§2.2 allows either; bare LF is refused
 * here, as every client sends CRLF). An obsolete line fold is replaced by a space (§5.2 allows that or 400).
 *
 * <p>Threading: one per connection, on its event loop.
 */
final class RequestDecoder extends HttpRequestDecoder {
    RequestDecoder(int maxInitialLine, int maxHeaderSize, int maxChunkSize) {
        super(new HttpDecoderConfig().setMaxInitialLineLength(maxInitialLine).setMaxHeaderSize(maxHeaderSize)
                .setMaxChunkSize(maxChunkSize).setAllowDuplicateContentLengths(false).setStrictLineParsing(true));
    }

    /** Keeps {@code Content-Length} next to {@code Transfer-Encoding: chunked}: {@link #framingProblem} refuses both. */
    @Override
    protected void handleTransferEncodingChunkedWithContentLength(HttpMessage message) {
        // Netty's default removes Content-Length and reads chunks; the request is refused instead.
    }

    /** What makes {@code head}'s framing ambiguous, as an error message; {@code null} when it is sound. */
    static String framingProblem(HttpRequest head) {
        List<String> encodings = head.headers().getAll(HttpHeaderNames.TRANSFER_ENCODING);
        if (encodings.isEmpty()) {
            return null;
        }
        String value = String.join(", ", encodings);
        if (head.headers().contains(HttpHeaderNames.CONTENT_LENGTH)) {
            return "both transfer-encoding (" + value + ") and content-length (expected: one of them)";
        }
        if (head.protocolVersion().equals(HttpVersion.HTTP_1_0)) {
            return "transfer-encoding: " + value + " in an HTTP/1.0 request (expected: none)";
        }
        int chunked = 0;
        int codings = 0;
        for (String part : value.split(",", -1)) {
            String coding = part.strip();
            if (coding.isEmpty()) {
                continue;
            }
            codings++;
            if (coding.equalsIgnoreCase("chunked")) {
                chunked++;
            }
        }
        if (codings != 1 || chunked != 1) {
            return "transfer-encoding: " + value + " (expected: chunked)";
        }
        return null;
    }
}
