package io.tenantgateway.agent.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * Plain-HTTP GETs to the agent's health and admin ports on 127.0.0.1, each given {@link Waits#WAIT} to connect and
 * answer (a refused connection still fails at once: {@link #status} says -1 while nothing listens).
 */
public final class LoopbackHttp {
    private static final HttpClient CLIENT = HttpClient.newBuilder().connectTimeout(Waits.WAIT)
            .followRedirects(HttpClient.Redirect.NEVER).build();

    private LoopbackHttp() {
    }

    /** {@code GET http://127.0.0.1:port/pathAndQuery}. */
    public static HttpResponse<String> get(int port, String pathAndQuery) throws IOException, InterruptedException {
        return CLIENT.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + pathAndQuery))
                .timeout(Waits.WAIT).build(), HttpResponse.BodyHandlers.ofString());
    }

    /** The status of one GET, or -1 when nothing listens (yet). */
    public static int status(int port, String pathAndQuery) throws InterruptedException {
        try {
            return get(port, pathAndQuery).statusCode();
        } catch (IOException notListening) {
            return -1;
        }
    }

    /**
     * One kubelet-like probe of {@code 127.0.0.1:port}: a new connection, {@code Connection: close}, {@code timeout} for
     * all of it; the status code as text, or why there is none.
     */
    public static String probe(int port, String path, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), (int) timeout.toMillis());
            OutputStream out = socket.getOutputStream();
            out.write(("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1:" + port + "\r\nUser-Agent: kube-probe/1.31\r\n"
                    + "Accept: */*\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = socket.getInputStream();
            StringBuilder received = new StringBuilder();
            byte[] buffer = new byte[4096];
            while (true) {
                long left = (deadline - System.nanoTime()) / 1_000_000;
                if (left <= 0) {
                    return "timeout (received " + received.length() + " bytes)";
                }
                socket.setSoTimeout((int) left);
                int n = in.read(buffer);
                if (n < 0) {
                    break;
                }
                received.append(new String(buffer, 0, n, StandardCharsets.ISO_8859_1));
            }
            String text = received.toString();
            return text.startsWith("HTTP/1.1 ") && text.length() >= 12 ? text.substring(9, 12)
                    : "no status line: '" + text + "'";
        } catch (SocketTimeoutException e) {
            return "timeout: " + e.getMessage();
        } catch (IOException e) {
            return e.toString();
        }
    }
}
