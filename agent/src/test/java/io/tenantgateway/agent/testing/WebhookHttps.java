package io.tenantgateway.agent.testing;

import io.tenantgateway.certs.TlsContexts;
import io.tenantgateway.certs.testing.TestPki;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.Base64;
import java.util.UUID;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** Pod CREATE AdmissionReviews over HTTPS to a webhook on 127.0.0.1 whose certificate a {@link TestPki} signed. */
public final class WebhookHttps {
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private final HttpClient client;

    public WebhookHttps(TestPki pki) throws Exception {
        SSLContext ssl = SSLContext.getInstance("TLS");
        ssl.init(null, new TrustManager[] {TlsContexts.trustManager(pki.trustOnlyMaterial(), Clock.systemUTC())},
                null);
        client = HttpClient.newBuilder().sslContext(ssl).version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Waits.WAIT).build();
    }

    /** The answer to a pod CREATE of {@code podJson} (single quotes allowed) in {@code namespace}. */
    public Answer admitPod(int port, String namespace, String podJson) throws Exception {
        String review = """
                {"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"%s",
                 "kind":{"group":"","version":"v1","kind":"Pod"},"operation":"CREATE","namespace":"%s",
                 "object":%s}}""".formatted(UUID.randomUUID(), namespace, podJson.replace('\'', '"'));
        HttpResponse<String> response = client.send(HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + port
                + "/webhook")).header("Content-Type", "application/json").timeout(Waits.WAIT)
                .POST(HttpRequest.BodyPublishers.ofString(review)).build(), HttpResponse.BodyHandlers.ofString());
        return new Answer(response.statusCode(), JSON.readTree(response.body()).path("response"));
    }

    /** The AdmissionReview {@code response}, with the decoded patch. */
    public record Answer(int httpStatus, JsonNode response) {
        public boolean allowed() {
            return response.path("allowed").asBoolean(false);
        }

        public String message() {
            return response.path("status").path("message").asString("");
        }

        /** The JSON patch as text ({@code ""} when none): resource names appear with {@code ~1} for {@code /}. */
        public String patch() {
            String patch = response.path("patch").asString("");
            return patch.isEmpty() ? "" : new String(Base64.getDecoder().decode(patch), StandardCharsets.UTF_8);
        }
    }
}
