package io.tenantgateway.agent.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpVersion;
import io.tenantgateway.certs.vertx.ServerLimits;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The framing rules of RFC 9112 the health and admin ports enforce, over real loopback sockets: each ambiguous or
 * malformed request is answered 400 once, the connection closes, and nothing sent after it (a smuggled request) is
 * ever answered or reaches the handler.
 */
@Timeout(60)
class RequestFramingTest {
    private final HttpLoop loop = new HttpLoop("test-http");
    private final List<String> handled = new CopyOnWriteArrayList<>();
    private HttpEndpoint endpoint;

    @BeforeEach
    void start() {
        loop.start();
        endpoint = new HttpEndpoint(loop, "test server", "--test-port", "127.0.0.1", 0, (request, response) -> {
            handled.add(request.method() + " " + request.path());
            response.end("ok " + request.path());
        }, ServerLimits.DEFAULTS);
        endpoint.start();
    }

    @AfterEach
    void stop() {
        endpoint.close();
        loop.close();
    }

    /** Sends {@code text}, reads until the server closes. */
    private String exchange(String text) throws IOException {
        try (Socket socket = new Socket(InetAddress.getByName("127.0.0.1"), endpoint.boundPort())) {
            OutputStream out = socket.getOutputStream();
            out.write(text.getBytes(StandardCharsets.ISO_8859_1));
            out.flush();
            return new String(socket.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
        }
    }

    private static int responses(String received) {
        return received.split("HTTP/1\\.[01] \\d\\d\\d ", -1).length - 1;
    }

    private void assertRefusedOnce(String request, String reason) throws IOException {
        String received = exchange(request + "GET /debug/config HTTP/1.1\r\nHost: h\r\n\r\n");
        assertThat(received).as("answer to %s", request).startsWith("HTTP/1.1 400 Bad Request\r\n")
                .contains("connection: close").contains(reason);
        assertThat(responses(received)).as("responses in %s", received).isEqualTo(1);
        assertThat(handled).as("requests the handler saw").isEmpty();
    }

    @Test
    void contentLengthWithChunkedIsRefused() throws IOException {
        assertRefusedOnce("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"
                + "0\r\n\r\n", "both transfer-encoding (chunked) and content-length (expected: one of them)");
        assertRefusedOnce("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nContent-Length: 0\r\n\r\n"
                + "0\r\n\r\n", "both transfer-encoding");
    }

    @Test
    void anUnknownTransferCodingWithContentLengthAndAPipelinedRequestIsRefused() throws IOException {
        assertRefusedOnce("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: xchunked\r\nContent-Length: 5\r\n\r\n"
                + "hello", "both transfer-encoding (xchunked) and content-length");
    }

    @ParameterizedTest
    @ValueSource(strings = {"xchunked", "gzip", "chunked, gzip", "gzip, chunked", "chunked, chunked", "identity",
            ""})
    void anyTransferCodingButOneChunkedIsRefused(String coding) throws IOException {
        assertRefusedOnce("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: " + coding + "\r\n\r\n0\r\n\r\n",
                "(expected: chunked)");
    }

    @Test
    void transferEncodingInHttp10IsRefused() throws IOException {
        assertRefusedOnce("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
                "in an HTTP/1.0 request (expected: none)");
    }

    @Test
    void duplicateOrConflictingContentLengthsAreRefused() throws IOException {
        assertRefusedOnce("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello",
                "Multiple Content-Length values found");
        assertRefusedOnce("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello",
                "Multiple Content-Length values found");
        assertRefusedOnce("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5, 5\r\n\r\nhello",
                "Multiple Content-Length values found");
        assertRefusedOnce("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: +5\r\n\r\nhello",
                "Content-Length value is not a number");
    }

    @Test
    void invalidHeaderNamesBareCrAndBareLfAreRefused() throws IOException {
        assertRefusedOnce("GET / HTTP/1.1\r\nHost : h\r\n\r\n", "header name can only contain");
        assertRefusedOnce("GET / HTTP/1.1\r\nHost: h\r\nBad Name: a\r\n\r\n", "header name can only contain");
        assertRefusedOnce("GET / HTTP/1.1\r\n X-Leading-Space: a\r\nHost: h\r\n\r\n", "header name can only contain");
        assertRefusedOnce("GET / HTTP/1.1\r\nHost: h\r\nX: a\rb\r\n\r\n", "Validation failed for header 'X'");
        assertRefusedOnce("GET / HTTP/1.1\nHost: h\n\n", "Line Feed must be preceded by Carriage Return");
    }

    @Test
    void chunkedAloneAndContentLengthAloneAreServedAndAnObsFoldIsASpace() throws IOException {
        String chunked = exchange("POST /c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
                + "5\r\nhello\r\n0\r\n\r\nGET /next HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n");
        assertThat(responses(chunked)).isEqualTo(2);
        assertThat(chunked).startsWith("HTTP/1.1 200 OK").endsWith("ok /next");
        String length = exchange("POST /l HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello");
        assertThat(length).startsWith("HTTP/1.1 200 OK").endsWith("ok /l");
        // RFC 9112 5.2: a recipient may replace an obs-fold with a space instead of refusing it.
        String folded = exchange("GET /f HTTP/1.1\r\nHost: h\r\nX-Folded: a\r\n b\r\nConnection: close\r\n\r\n");
        assertThat(folded).startsWith("HTTP/1.1 200 OK").endsWith("ok /f");
        assertThat(handled).containsExactly("POST /c", "GET /next", "POST /l", "GET /f");
    }

    @Test
    void framingProblemNamesWhatWasWrong() {
        assertThat(RequestDecoder.framingProblem(request(HttpVersion.HTTP_1_1))).isNull();
        HttpRequest chunked = request(HttpVersion.HTTP_1_1);
        chunked.headers().add("Transfer-Encoding", "Chunked");
        assertThat(RequestDecoder.framingProblem(chunked)).isNull();
        HttpRequest twice = request(HttpVersion.HTTP_1_1);
        twice.headers().add("Transfer-Encoding", "chunked").add("Transfer-Encoding", "chunked");
        assertThat(RequestDecoder.framingProblem(twice)).isEqualTo("transfer-encoding: chunked, chunked"
                + " (expected: chunked)");
        HttpRequest both = request(HttpVersion.HTTP_1_1);
        both.headers().add("Transfer-Encoding", "xchunked").add("Content-Length", "5");
        assertThat(RequestDecoder.framingProblem(both)).isEqualTo("both transfer-encoding (xchunked) and"
                + " content-length (expected: one of them)");
        HttpRequest old = request(HttpVersion.HTTP_1_0);
        old.headers().add("Transfer-Encoding", "chunked");
        assertThat(RequestDecoder.framingProblem(old)).isEqualTo("transfer-encoding: chunked in an HTTP/1.0 request"
                + " (expected: none)");
    }

    private static HttpRequest request(HttpVersion version) {
        return new DefaultHttpRequest(version, HttpMethod.POST, "/");
    }
}
