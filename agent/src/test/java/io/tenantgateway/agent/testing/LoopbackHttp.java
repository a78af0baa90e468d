package io.tenantgateway.agent.testing;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/** Plain-HTTP GETs to the agent's health and admin ports on 127.0.0.1, with short timeouts. */
public final class LoopbackHttp {
    private static final HttpClient CLIENT = HttpClient.newBuilder().connectTimeout(Duration.ofMillis(500))
            .followRedirects(HttpClient.Redirect.NEVER).build();

    private LoopbackHttp() {
    }

    /** {@code GET http://127.0.0.1:port/pathAndQuery}. */
    public static HttpResponse<String> get(int port, String pathAndQuery) throws IOException, InterruptedException {
        return CLIENT.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + pathAndQuery))
                .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
    }

    /** The status of one GET, or -1 when nothing listens (yet). */
    public static int status(int port, String pathAndQuery) throws InterruptedException {
        try {
            return get(port, pathAndQuery).statusCode();
        } catch (IOException notListening) {
            return -1;
        }
    }
}
