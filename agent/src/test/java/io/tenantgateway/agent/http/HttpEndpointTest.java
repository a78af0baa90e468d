package io.tenantgateway.agent.http;

import static io.tenantgateway.agent.testing.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.tenantgateway.common.net.PortInUseException;
import io.tenantgateway.certs.vertx.ServerLimits;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The plain-Netty endpoint the health and admin ports run on, over real loopback sockets: what a handler sees and
 * sends, keep-alive and pipelining, HEAD, files, and the limits (connection cap, request deadline against a client
 * that trickles bytes, idle timeout, size limits) and the typed port-in-use error.
 */
@Timeout(60)
class HttpEndpointTest {
    @TempDir
    Path dir;

    private final HttpLoop loop = new HttpLoop("test-http");
    private final HttpClient http = HttpClient.newHttpClient();
    private final List<AutoCloseable> closeables = new ArrayList<>();

    @BeforeEach
    void startLoop() {
        loop.start();
    }

    @AfterEach
    void stop() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
        loop.close();
    }

    /**
     * The defaults, with the tests' generous ceiling as the request deadline: a test's own idle connections (the ones
     * it displaces, parks or reuses) must not be cut by a deadline while a loaded machine runs its next steps.
     */
    private static final ServerLimits ROOMY = ServerLimits.DEFAULTS.withRequestTimeout(WAIT);

    /** Starts {@code handler} on a port whose first-byte timeout is the tests' ceiling too (see {@link #ROOMY}). */
    private HttpEndpoint start(HttpHandler handler, ServerLimits limits) {
        HttpEndpoint endpoint = new HttpEndpoint(loop, "test server", "--test-port", "127.0.0.1", 0, handler, limits)
                .peerLimits(Math.min(HttpEndpoint.DEFAULT_MAX_PER_PEER, limits.maxConnections()), WAIT);
        endpoint.start();
        closeables.add(endpoint);
        return endpoint;
    }

    /**
     * A short deadline for tests that prove it cuts a client that sends nothing more, and that send their own first
     * request right after connecting: long enough that the few instructions between the connect and the write can never
     * miss it, even on a loaded machine (a thread or a GC pause of seconds), short enough to keep the test quick.
     */
    private static final Duration FIRST_BYTES_WITHIN = Duration.ofSeconds(2);

    /** Answers "ok"; a request must arrive within {@code requestTimeout} (16 connections, 60 s idle timeout). */
    private HttpEndpoint okWithRequestTimeout(Duration requestTimeout) {
        return start((request, response) -> response.end("ok"), new ServerLimits(16, Duration.ofSeconds(10),
                requestTimeout, Duration.ofSeconds(60)));
    }

    /** Echoes what the handler saw, as text. */
    private HttpEndpoint echo() {
        return start((request, response) -> response.header("content-type", "text/plain; charset=utf-8")
                .header("x-thread", Thread.currentThread().getName())
                .end(request.method() + " " + request.path() + " query=" + request.query() + " verbose="
                        + request.hasParam("verbose") + " limit=" + request.param("limit") + " host="
                        + request.host()), ROOMY);
    }

    private Socket connect(HttpEndpoint endpoint) throws IOException {
        Socket socket = new Socket(InetAddress.getLoopbackAddress(), endpoint.boundPort());
        closeables.add(socket);
        return socket;
    }

    /** Displaced and silent connections are reset (no FIN handshake, no TIME_WAIT left on the server). */
    private static void assertReset(Socket socket, String what) {
        assertThatThrownBy(() -> socket.getInputStream().read()).as("%s reset", what)
                .isInstanceOf(java.net.SocketException.class).hasMessageContaining("reset");
    }

    /** A connection from another loopback address (127.0.0.0/8 is all loopback on Linux): another peer. */
    private Socket connectFrom(HttpEndpoint endpoint, String source) throws IOException {
        Socket socket = new Socket(InetAddress.getByName("127.0.0.1"), endpoint.boundPort(),
                InetAddress.getByName(source), 0);
        closeables.add(socket);
        return socket;
    }

    private static void send(Socket socket, String text) throws IOException {
        OutputStream out = socket.getOutputStream();
        out.write(text.getBytes(StandardCharsets.ISO_8859_1));
        out.flush();
    }

    /** Sends {@code request} on a new connection and reads everything the server sends until it closes it. */
    private String exchange(HttpEndpoint endpoint, String request) throws IOException {
        Socket socket = connect(endpoint);
        send(socket, request);
        return readToClose(socket);
    }

    /** Everything the server sends until it closes the connection. */
    private static String readToClose(Socket socket) throws IOException {
        return new String(socket.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
    }

    /** One response (headers and a content-length body) off a kept-alive connection. */
    private static String readResponse(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        int matched = 0;
        while (matched < 4) {
            int b = in.read();
            assertThat(b).as("response headers so far: %s", head).isNotNegative();
            head.write(b);
            matched = (b == "\r\n\r\n".charAt(matched)) ? matched + 1 : (b == '\r' ? 1 : 0);
        }
        String headers = head.toString(StandardCharsets.ISO_8859_1);
        int length = headers.lines().filter(l -> l.toLowerCase().startsWith("content-length:"))
                .mapToInt(l -> Integer.parseInt(l.substring(l.indexOf(':') + 1).strip())).findFirst().orElse(0);
        return headers + new String(in.readNBytes(length), StandardCharsets.ISO_8859_1);
    }

    @Test
    void handlerSeesMethodPathQueryParamsAndHostOnTheLoop() throws Exception {
        HttpEndpoint endpoint = echo();
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                + endpoint.boundPort() + "/readyz?verbose&limit=3")).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.body()).isEqualTo("GET /readyz query=verbose&limit=3 verbose=true limit=3 host=127.0.0.1");
        assertThat(response.headers().firstValue("content-type")).hasValue("text/plain; charset=utf-8");
        assertThat(response.headers().firstValue("x-thread")).hasValueSatisfying(t -> assertThat(t)
                .startsWith("test-http"));

        // Absolute form: the target's authority wins over Host (RFC 9112 3.2.2).
        assertThat(exchange(endpoint, "GET http://example.com:8094/metrics?x=1 HTTP/1.1\r\nHost: [::1]:8094\r\n"
                + "Connection: close\r\n\r\n")).startsWith("HTTP/1.1 200 OK").endsWith("GET /metrics query=x=1"
                + " verbose=false limit=null host=example.com");
        assertThat(exchange(endpoint, "GET /m HTTP/1.1\r\nHost: [::1]:8094\r\nConnection: close\r\n\r\n"))
                .endsWith("GET /m query=null verbose=false limit=null host=::1");
    }

    @Test
    void keepAliveAndPipelinedRequestsAreAnsweredInOrderOnOneConnection() throws Exception {
        HttpEndpoint endpoint = echo();
        Socket socket = connect(endpoint);
        send(socket, "GET /a HTTP/1.1\r\nHost: h\r\n\r\nGET /b HTTP/1.1\r\nHost: h\r\n\r\nGET /c HTTP/1.1\r\nHost: h\r\n\r\n");
        InputStream in = socket.getInputStream();
        assertThat(readResponse(in)).endsWith("GET /a query=null verbose=false limit=null host=h");
        assertThat(readResponse(in)).endsWith("GET /b query=null verbose=false limit=null host=h");
        assertThat(readResponse(in)).endsWith("GET /c query=null verbose=false limit=null host=h");
        send(socket, "GET /d HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n");
        assertThat(readResponse(in)).contains("connection: close").endsWith("GET /d query=null verbose=false"
                + " limit=null host=h");
        assertThat(in.read()).as("closed after Connection: close").isEqualTo(-1);
        assertThat(endpoint.openConnections()).isLessThanOrEqualTo(1);
    }

    @Test
    void http10WithoutKeepAliveIsClosedAfterTheResponse() throws Exception {
        HttpEndpoint endpoint = echo();
        assertThat(exchange(endpoint, "GET /old HTTP/1.0\r\n\r\n")).startsWith("HTTP/1.0 200 OK")
                .endsWith("GET /old query=null verbose=false limit=null host=null");
    }

    @Test
    void headGetsTheHeadersOfGetAndNoBody() throws Exception {
        HttpEndpoint endpoint = echo();
        String both = exchange(endpoint, "HEAD /x HTTP/1.1\r\nHost: h\r\n\r\nGET /y HTTP/1.1\r\nHost: h\r\n"
                + "Connection: close\r\n\r\n");
        String get = "GET /y query=null verbose=false limit=null host=h";
        // The HEAD answer announces its body's length but carries none: the next bytes are the GET's answer.
        assertThat(both).startsWith("HTTP/1.1 200 OK").contains("content-length: "
                + "HEAD /x query=null verbose=false limit=null host=h".length() + "\r\n").endsWith(get);
        assertThat(both.split("HTTP/1.1 200 OK", -1)).hasSize(3);
        assertThat(both).doesNotContain("HEAD /x query");
    }

    @Test
    void answersFromAnotherThreadAndSendsFiles() throws Exception {
        byte[] content = new byte[300_000];
        for (int i = 0; i < content.length; i++) {
            content[i] = (byte) (i * 31);
        }
        Path file = Files.write(dir.resolve("data.bin"), content);
        HttpEndpoint endpoint = start((request, response) -> loop.blocking(() -> {
            FileChannel channel = FileChannel.open(file, StandardOpenOption.READ);
            return channel;
        }).thenAccept(channel -> {
            try {
                response.header("content-type", "application/octet-stream").sendFile(channel, channel.size());
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }), ROOMY);
        for (int i = 0; i < 3; i++) { // one connection, kept alive across file responses
            HttpResponse<byte[]> response = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                    + endpoint.boundPort() + "/file")).build(), HttpResponse.BodyHandlers.ofByteArray());
            assertThat(response.statusCode()).isEqualTo(200);
            assertThat(response.headers().firstValue("content-length")).hasValue(Integer.toString(content.length));
            assertThat(response.body()).isEqualTo(content);
        }
    }

    @Test
    void aThrowingHandlerAnswers500AndTheConnectionServesOn() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        HttpEndpoint endpoint = start((request, response) -> {
            if (calls.incrementAndGet() == 1) {
                throw new IllegalStateException("boom");
            }
            response.end("fine");
        }, ROOMY);
        Socket socket = connect(endpoint);
        send(socket, "GET / HTTP/1.1\r\nHost: h\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n");
        InputStream in = socket.getInputStream();
        assertThat(readResponse(in)).startsWith("HTTP/1.1 500 Internal Server Error")
                .endsWith("internal error: java.lang.IllegalStateException: boom\n");
        assertThat(readResponse(in)).startsWith("HTTP/1.1 200 OK").endsWith("fine");
    }

    @Test
    void aNewConnectionAtTheCapDisplacesTheOldestIdleOneNeverOneBeingAnswered() throws Exception {
        CompletableFuture<Response> parked = new CompletableFuture<>();
        HttpEndpoint endpoint = start((request, response) -> {
            if (request.path().equals("/park")) {
                parked.complete(response);
            } else {
                response.end("ok");
            }
        }, ROOMY.withMaxConnections(3));
        Socket answering = connect(endpoint);
        send(answering, "GET /park HTTP/1.1\r\nHost: h\r\n\r\n");
        parked.join();
        Socket older = connect(endpoint);
        await().atMost(WAIT).until(() -> endpoint.openConnections() == 2);
        Socket newer = connect(endpoint);
        await().atMost(WAIT).until(() -> endpoint.openConnections() == 3);
        // The cap is full: the probe gets in, the idle connection that waited longest goes.
        assertThat(exchange(endpoint, "GET /healthz HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n"))
                .startsWith("HTTP/1.1 200 OK").endsWith("ok");
        assertReset(older, "the oldest idle connection");
        assertThat(endpoint.displacedConnections()).isEqualTo(1);
        send(newer, "GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n");
        assertThat(readToClose(newer)).as("the younger idle one stayed").endsWith("ok");
        // The parked request still gets its answer.
        parked.join().end("late but answered");
        assertThat(readResponse(answering.getInputStream())).endsWith("late but answered");
        assertThat(endpoint.rejectedConnections()).isZero();
    }

    @Test
    void aClientThatStopsReadingItsAnswerIsDisplacedLikeAnIdleOne() throws Exception {
        byte[] huge = new byte[32 << 20]; // more than loopback's socket buffers hold: the write stalls
        CompletableFuture<Response> parked = new CompletableFuture<>();
        HttpEndpoint endpoint = new HttpEndpoint(loop, "test server", "--test-port", "127.0.0.1", 0,
                (request, response) -> {
                    switch (request.path()) {
                        case "/huge" -> response.end(huge);
                        case "/park" -> parked.complete(response);
                        default -> response.end("ok");
                    }
                }, ROOMY.withMaxConnections(2)).peerLimits(2, WAIT).responsesAccount(
                        io.tenantgateway.common.memory.MemoryBudget.fromLimits(1L << 30, 1L << 30).account("r",
                                io.tenantgateway.common.memory.MemoryBudget.Pool.DIRECT, 1, 0));
        endpoint.start();
        closeables.add(endpoint);
        Socket nonReader = connect(endpoint);
        send(nonReader, "GET /huge HTTP/1.1\r\nHost: h\r\n\r\n");
        Socket handled = connect(endpoint);
        send(handled, "GET /park HTTP/1.1\r\nHost: h\r\n\r\n");
        parked.join();
        // Both slots are taken, neither idle: one waits on its handler, one on its client to read.
        assertThat(exchange(endpoint, "GET /healthz HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n"))
                .startsWith("HTTP/1.1 200 OK").endsWith("ok");
        assertThat(endpoint.displacedConnections()).isEqualTo(1);
        assertThat(endpoint.rejectedConnections()).isZero();
        parked.join().end("answered");
        assertThat(readResponse(handled.getInputStream())).endsWith("answered");
    }

    @Test
    void withEveryConnectionBeingAnsweredANewOneIsRefused() throws Exception {
        List<Response> parked = new java.util.concurrent.CopyOnWriteArrayList<>();
        HttpEndpoint endpoint = start((request, response) -> parked.add(response),
                ROOMY.withMaxConnections(2));
        Socket first = connect(endpoint);
        Socket second = connect(endpoint);
        send(first, "GET / HTTP/1.1\r\nHost: h\r\n\r\n");
        send(second, "GET / HTTP/1.1\r\nHost: h\r\n\r\n");
        await().atMost(WAIT).until(() -> parked.size() == 2);
        Socket third = connect(endpoint);
        assertThat(third.getInputStream().read()).as("the third connection is closed").isEqualTo(-1);
        assertThat(endpoint.rejectedConnections()).isEqualTo(1);
        parked.forEach(response -> response.end("ok"));
        assertThat(readResponse(first.getInputStream())).endsWith("ok");
        assertThat(readResponse(second.getInputStream())).endsWith("ok");
    }

    @Test
    void onePeerAtItsCapDisplacesItsOwnIdleConnectionsOthersKeepTheirs() throws Exception {
        HttpEndpoint endpoint = new HttpEndpoint(loop, "test server", "--test-port", "127.0.0.1", 0,
                (request, response) -> response.end("ok " + request.path()), ROOMY)
                .peerLimits(2, WAIT);
        endpoint.start();
        closeables.add(endpoint);
        Socket other = connectFrom(endpoint, "127.0.0.3");
        await().atMost(WAIT).until(() -> endpoint.openConnections() == 1);
        List<Socket> flood = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            flood.add(connectFrom(endpoint, "127.0.0.2"));
        }
        // 127.0.0.2 holds at most 2: each new one displaced its own oldest; the probe from the same address gets in.
        await().atMost(WAIT).until(() -> endpoint.displacedConnections() == 3);
        Socket probe = connectFrom(endpoint, "127.0.0.2");
        send(probe, "GET /healthz HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n");
        assertThat(readToClose(probe)).endsWith("ok /healthz");
        for (int i = 0; i < 4; i++) {
            assertReset(flood.get(i), "flood connection " + i);
        }
        send(other, "GET /other HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n");
        assertThat(readToClose(other)).as("another address keeps its connection").endsWith("ok /other");
        assertThat(endpoint.rejectedConnections()).isZero();
    }

    @Test
    void aConnectionThatSendsNothingIsClosedAtTheFirstByteTimeoutOneThatSentABitIsNot() throws Exception {
        HttpEndpoint endpoint = new HttpEndpoint(loop, "test server", "--test-port", "127.0.0.1", 0,
                (request, response) -> response.end("ok"), new ServerLimits(16, Duration.ofSeconds(10),
                        Duration.ofSeconds(30), Duration.ofSeconds(60))).peerLimits(16, FIRST_BYTES_WITHIN);
        endpoint.start();
        closeables.add(endpoint);
        Socket silent = connect(endpoint);
        Socket started = connect(endpoint); // its first bytes follow at once: well within the first-byte timeout
        send(started, "GET / HTTP/1.1\r\n");
        assertReset(silent, "the silent connection");
        await().atMost(WAIT).until(() -> endpoint.firstByteTimeouts() == 1);
        // The other one began its request: the request deadline (30 s) applies to it, not the first-byte timeout.
        send(started, "Host: h\r\nConnection: close\r\n\r\n");
        assertThat(readToClose(started)).startsWith("HTTP/1.1 200 OK");
        assertThat(endpoint.firstByteTimeouts()).isEqualTo(1);
    }

    @Test
    void moreThanSixteenPipelinedRequestsAreCutAfterTheFirstSixteenAreAnswered() throws Exception {
        // Answered from another thread: the pipelined requests wait decoded meanwhile (an inline answer would be
        // written before the next one is decoded, and nothing would wait).
        HttpEndpoint endpoint = start((request, response) -> loop.blocking(() -> "ok " + request.path())
                .thenAccept(response::end), ROOMY);
        String all = exchange(endpoint, "GET /p HTTP/1.1\r\nHost: h\r\n\r\n".repeat(40));
        // One socket read usually holds all 40 (then exactly 16 are answered); the limit applies per read.
        int answered = all.split("HTTP/1.1 200 OK", -1).length - 1;
        assertThat(answered).as("answers before the close").isBetween(ConnectionHandler.MAX_PIPELINED, 39);
        assertThat(endpoint.pipelineOverflows()).isEqualTo(1);
    }

    @Test
    void aClientTricklingHeaderBytesIsCutAtTheRequestDeadline() throws Exception {
        // Idle timeout far off: each trickled byte would reset it; only the request deadline can cut this client.
        HttpEndpoint endpoint = okWithRequestTimeout(Duration.ofMillis(800));
        Socket socket = connect(endpoint);
        byte[] request = "GET / HTTP/1.1\r\nHost: h\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
                .getBytes(StandardCharsets.US_ASCII);
        ScheduledExecutorService trickle = Executors.newSingleThreadScheduledExecutor();
        closeables.add(trickle::shutdownNow);
        AtomicInteger sent = new AtomicInteger();
        trickle.scheduleAtFixedRate(() -> {
            int i = sent.get();
            if (i < request.length) {
                try {
                    socket.getOutputStream().write(request[i]);
                    socket.getOutputStream().flush();
                    sent.incrementAndGet();
                } catch (IOException closed) {
                    trickle.shutdown();
                }
            }
        }, 0, 50, TimeUnit.MILLISECONDS);
        // Closed without an answer: end of stream, or a reset when a trickled byte reached the closed socket first.
        int first;
        try {
            first = socket.getInputStream().read();
        } catch (java.net.SocketException reset) {
            assertThat(reset.getMessage()).contains("reset");
            first = -1;
        }
        assertThat(first).as("closed without an answer").isEqualTo(-1);
        // Cut while it was still trickling (the whole request takes over 3 s at this pace): the deadline did it.
        assertThat(sent.get()).as("bytes trickled before the cut").isLessThan(request.length);
        await().atMost(WAIT).until(() -> endpoint.timedOutConnections() == 1);
    }

    @Test
    void theDeadlineRestartsAfterEachResponseAndAnIdleConnectionIsClosed() throws Exception {
        HttpEndpoint endpoint = okWithRequestTimeout(FIRST_BYTES_WITHIN);
        Socket socket = connect(endpoint);
        send(socket, "GET / HTTP/1.1\r\nHost: h\r\n\r\n"); // sent at once: well within the deadline
        assertThat(readResponse(socket.getInputStream())).endsWith("ok");
        // Nothing more: the next request did not arrive within the deadline.
        assertThat(socket.getInputStream().read()).isEqualTo(-1);
        assertThat(endpoint.timedOutConnections()).isEqualTo(1);

        ServerLimits idle = new ServerLimits(16, Duration.ofSeconds(10), Duration.ofSeconds(30),
                Duration.ofMillis(500));
        HttpEndpoint slowHandler = start((request, response) -> {
            // Answers after the idle timeout: the connection is gone by then.
            loop.schedule(WAIT, () -> response.end("late"));
        }, idle);
        Socket waiting = connect(slowHandler);
        send(waiting, "GET / HTTP/1.1\r\nHost: h\r\n\r\n");
        assertThat(waiting.getInputStream().read()).as("closed by the idle timeout").isEqualTo(-1);
        assertThat(slowHandler.timedOutConnections()).as("idle, not a late request").isZero();
    }

    @Test
    void oversizedLinesHeadersAndBodiesAreRefused() throws Exception {
        HttpEndpoint endpoint = echo();
        assertThat(exchange(endpoint, "GET /" + "a".repeat(HttpEndpoint.MAX_INITIAL_LINE)
                + " HTTP/1.1\r\nHost: h\r\n\r\n")).startsWith("HTTP/1.1 414 ");

        assertThat(exchange(endpoint, "GET / HTTP/1.1\r\nHost: h\r\nX-Big: " + "b".repeat(HttpEndpoint.MAX_HEADER_SIZE)
                + "\r\n\r\n")).startsWith("HTTP/1.1 431 ");

        assertThat(exchange(endpoint, "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: " + (HttpEndpoint.MAX_BODY + 1)
                + "\r\n\r\n")).startsWith("HTTP/1.1 413 ").contains("expected: at most " + HttpEndpoint.MAX_BODY);

        StringBuilder body = new StringBuilder("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n");
        for (int i = 0; i < 20; i++) {
            body.append("1000\r\n").append("c".repeat(0x1000)).append("\r\n");
        }
        assertThat(exchange(endpoint, body + "0\r\n\r\n")).startsWith("HTTP/1.1 413 ");

        // A small body is read and discarded; the request is answered.
        assertThat(exchange(endpoint, "POST /p HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nConnection: close\r\n\r\n"
                + "hello")).startsWith("HTTP/1.1 200 OK")
                .endsWith("POST /p query=null verbose=false limit=null host=h");

        assertThat(exchange(endpoint, "NOT HTTP AT ALL\r\n\r\n")).startsWith("HTTP/1.1 400 ");
    }

    @Test
    void largeAnswersAreReservedFromTheBudgetAndA503WhenItIsFullProbesAlwaysAnswered() throws Exception {
        io.tenantgateway.common.memory.MemoryBudget.Account account = io.tenantgateway.common.memory.MemoryBudget
                .fromLimits(64L << 20, 64L << 20).account("http-responses", 
                        io.tenantgateway.common.memory.MemoryBudget.Pool.DIRECT, 0.001, 0);
        String big = "m".repeat(Response.ALWAYS_SENT + 1);
        HttpEndpoint endpoint = new HttpEndpoint(loop, "test server", "--test-port", "127.0.0.1", 0,
                (request, response) -> response.end(request.path().equals("/metrics") ? big : "ok"),
                ROOMY).responsesAccount(account).peerLimits(HttpEndpoint.DEFAULT_MAX_PER_PEER, WAIT);
        endpoint.start();
        closeables.add(endpoint);
        Socket socket = connect(endpoint);
        send(socket, "GET /metrics HTTP/1.1\r\nHost: h\r\n\r\n");
        assertThat(readResponse(socket.getInputStream())).startsWith("HTTP/1.1 200 OK").endsWith(big);
        await().atMost(WAIT).until(() -> account.used() == 0); // released once written
        assertThat(account.peak()).isEqualTo(big.length());

        account.reserveAnyway(account.limit()); // answers to clients that stopped reading fill it
        send(socket, "GET /metrics HTTP/1.1\r\nHost: h\r\n\r\nGET /healthz HTTP/1.1\r\nHost: h\r\n\r\n");
        assertThat(readResponse(socket.getInputStream())).startsWith("HTTP/1.1 503 Service Unavailable")
                .contains("busy: answers waiting for clients to read them hold " + account.limit() + " bytes");
        assertThat(readResponse(socket.getInputStream())).as("a probe's answer is always sent")
                .startsWith("HTTP/1.1 200 OK").endsWith("ok");
    }

    @Test
    void aBusyPortIsTheTypedErrorNamingTheFlag() throws Exception {
        try (ServerSocket busy = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            HttpEndpoint endpoint = new HttpEndpoint(loop, "test server", "--test-port", "127.0.0.1",
                    busy.getLocalPort(), (request, response) -> response.end());
            assertThatThrownBy(endpoint::start).isInstanceOf(PortInUseException.class)
                    .hasMessage("--test-port: 127.0.0.1:" + busy.getLocalPort() + " is in use");
            assertThat(endpoint.boundPort()).isEqualTo(-1);
        }
    }

    @Test
    void closeClosesOpenConnectionsAndIsIdempotent() throws Exception {
        CompletableFuture<Response> parked = new CompletableFuture<>();
        HttpEndpoint endpoint = start((request, response) -> parked.complete(response), ROOMY);
        int port = endpoint.boundPort();
        Socket socket = connect(endpoint);
        send(socket, "GET / HTTP/1.1\r\nHost: h\r\n\r\n");
        parked.join();
        endpoint.close();
        endpoint.close();
        assertThat(socket.getInputStream().read()).isEqualTo(-1);
        assertThat(endpoint.boundPort()).isEqualTo(-1);
        try (ServerSocket again = new ServerSocket(port, 1, InetAddress.getByName("127.0.0.1"))) {
            assertThat(again.getLocalPort()).as("the port is free again").isEqualTo(port);
        }
    }

    @Test
    void aFullBlockingExecutorRefusesWithRejectedExecution() throws Exception {
        CompletableFuture<Void> release = new CompletableFuture<>();
        List<CompletableFuture<?>> tasks = new ArrayList<>();
        for (int i = 0; i < HttpLoop.BLOCKING_THREADS + HttpLoop.BLOCKING_QUEUE; i++) {
            tasks.add(loop.blocking(release::join));
        }
        CompletableFuture<Object> refused = loop.blocking(() -> "never");
        assertThat(refused).isCompletedExceptionally();
        assertThatThrownBy(refused::join).hasRootCauseInstanceOf(java.util.concurrent.RejectedExecutionException.class)
                .hasMessageContaining("busy: 2 blocking tasks running and 16 queued");
        release.complete(null);
        CompletableFuture.allOf(tasks.toArray(CompletableFuture[]::new)).join();
        assertThat(loop.blocking(() -> "again").join()).isEqualTo("again");
    }
}
