package io.tenantgateway.tools.lab;

import static java.util.Objects.requireNonNull;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.zjsonpatch.JsonPatch;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.ssl.SslContext;
import io.tenantgateway.agent.admission.AdmissionConnection;
import io.tenantgateway.agent.ops.AdmissionRequests;
import io.tenantgateway.tunnel.proxy.ProxyClient;
import java.net.InetSocketAddress;
import java.nio.channels.ClosedChannelException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * Creates pods the way a tenant's kube-apiserver on Kamaji does when a mutating webhook is configured by Service:
 * dial the Service address through the tenant's konnectivity-server ({@code /ProxyService/Proxy}, a fresh gRPC
 * connection per call like kube-apiserver's single-use tunnels), TLS verifying {@code <svc>.<ns>.svc} against the
 * tenant CA, {@code POST /webhook} an {@code admission.k8s.io/v1} AdmissionReview, apply the returned JSONPatch and
 * store the pod. A denied review is not stored.
 *
 * <p>Blocking: runs on the caller's thread (never an event loop); the network I/O runs on the ProxyClient's loop.
 */
final class AdmissionCaller {
    private static final Logger log = LoggerFactory.getLogger(AdmissionCaller.class);
    static final String WEBHOOK_SERVICE = "tenant-gateway-webhook";
    static final String WEBHOOK_NAMESPACE = "kube-system";
    static final String WEBHOOK_DNS_NAME = WEBHOOK_SERVICE + "." + WEBHOOK_NAMESPACE + ".svc";
    static final int SERVICE_PORT = 443;
    static final String WEBHOOK_PATH = "/webhook";
    private static final JsonMapper JSON = JsonMapper.builder().build();

    /** Where the call failed, in the order kube-apiserver goes through them. */
    enum Stage { DIAL, TLS, HTTP, RESPONSE, STORE }

    /** The call failed before a decision arrived (kube-apiserver: "failed calling webhook"). */
    static final class AdmissionFailure extends Exception {
        private static final long serialVersionUID = 1L;
        private final Stage stage;

        AdmissionFailure(Stage stage, String message, Throwable cause) {
            super(message, cause);
            this.stage = stage;
            log.debug("admission call failed at {}: {}", stage, message, cause);
        }

        Stage stage() {
            return stage;
        }
    }

    /**
     * A decision and, when allowed, the stored pod.
     *
     * @param patchOperations {@code op path} of each JSONPatch operation
     * @param stored the pod as the API server stored it, or {@code null} when denied
     */
    record Admission(String uid, boolean allowed, int code, String message, List<String> patchOperations, Pod stored,
            Duration dial, Duration tls, Duration http) {
        String timings() {
            return "dial " + Lab.millis(dial) + ", TLS " + Lab.millis(tls) + ", HTTP " + Lab.millis(http);
        }
    }

    private final String serverName;
    private final Supplier<ProxyClient> proxyClients;
    private final Supplier<InetSocketAddress> serviceAddress;
    private final SslContext tls;
    private final KubernetesClient client;
    private final Duration timeout;

    /**
     * @param serverName the konnectivity-server, for messages
     * @param proxyClients a new single-use ProxyService client per call (closed here)
     * @param serviceAddress the webhook Service's address ({@code ClusterIP:443} in a cluster)
     * @param tls trusts the tenant CA and verifies host names
     * @param timeout per stage (kube-apiserver's webhook {@code timeoutSeconds} is 10)
     */
    AdmissionCaller(String serverName, Supplier<ProxyClient> proxyClients, Supplier<InetSocketAddress> serviceAddress,
            SslContext tls, KubernetesClient client, Duration timeout) {
        this.serverName = requireNonNull(serverName, "serverName");
        this.proxyClients = requireNonNull(proxyClients, "proxyClients");
        this.serviceAddress = requireNonNull(serviceAddress, "serviceAddress");
        this.tls = requireNonNull(tls, "tls");
        this.client = requireNonNull(client, "client");
        this.timeout = requireNonNull(timeout, "timeout");
    }

    /** Admits {@code pod} (CREATE) through the webhook and stores the mutated pod when allowed. */
    Admission create(Pod pod) throws AdmissionFailure, InterruptedException {
        String uid = UUID.randomUUID().toString();
        ObjectNode podJson = (ObjectNode) JSON.readTree(client.getKubernetesSerialization().asJson(pod));
        String review = JSON.writeValueAsString(AdmissionRequests.podCreate(podJson, uid, "lab-user", false));
        InetSocketAddress service = serviceAddress.get();
        String target = service.getHostString() + ":" + service.getPort();

        CompletableFuture<AdmissionConnection> connecting = new CompletableFuture<>();
        long start = System.nanoTime();
        AdmissionConnection connection;
        Duration dial;
        Duration tlsTime;
        Duration http;
        try (ProxyClient proxy = proxyClients.get()) {
            try {
                await(proxy.dial(service.getHostString(), service.getPort(), new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel channel) {
                        // The bytes go to the Service address; the certificate must name the Service, as
                        // kube-apiserver checks.
                        connecting.complete(AdmissionConnection.withTls(channel, tls, WEBHOOK_DNS_NAME, SERVICE_PORT));
                    }
                }));
                connection = await(connecting);
            } catch (ExecutionException | TimeoutException e) {
                throw new AdmissionFailure(Stage.DIAL, "dial " + target + " through " + serverName + " failed: "
                        + reason(e), e);
            }
            long dialed = System.nanoTime();
            dial = Duration.ofNanos(dialed - start);
            try {
                try {
                    await(connection.handshake());
                } catch (ExecutionException | TimeoutException e) {
                    throw new AdmissionFailure(Stage.TLS, "TLS handshake with " + WEBHOOK_DNS_NAME + " (" + target
                            + " through " + serverName + ") failed: " + reason(e), e);
                }
                long handshaken = System.nanoTime();
                tlsTime = Duration.ofNanos(handshaken - dialed);
                AdmissionConnection.Response response;
                try {
                    response = await(connection.postJson(WEBHOOK_DNS_NAME + ":" + SERVICE_PORT,
                            WEBHOOK_PATH + "?timeout=10s", review.getBytes(StandardCharsets.UTF_8),
                            "tenant-gateway-lab (kube-apiserver admission)"));
                } catch (ExecutionException | TimeoutException e) {
                    throw new AdmissionFailure(Stage.HTTP, "POST https://" + WEBHOOK_DNS_NAME + WEBHOOK_PATH
                            + " failed: " + reason(e), e);
                }
                http = Duration.ofNanos(System.nanoTime() - handshaken);
                if (response.status() != 200) {
                    throw new AdmissionFailure(Stage.HTTP, "POST https://" + WEBHOOK_DNS_NAME + WEBHOOK_PATH
                            + " answered HTTP " + response.status() + ": " + abbreviate(response.body()), null);
                }
                return decide(uid, podJson, pod, response.body(), dial, tlsTime, http);
            } finally {
                connection.close();
            }
        }
    }

    private Admission decide(String uid, ObjectNode podJson, Pod pod, String body, Duration dial, Duration tlsTime,
            Duration http) throws AdmissionFailure {
        JsonNode response;
        try {
            response = JSON.readTree(body).path("response");
        } catch (JacksonException e) {
            throw new AdmissionFailure(Stage.RESPONSE, "webhook answered something that is not an AdmissionReview: "
                    + abbreviate(body), e);
        }
        if (!uid.equals(response.path("uid").asString(""))) {
            throw new AdmissionFailure(Stage.RESPONSE, "webhook answered uid " + response.path("uid").asString("")
                    + " (expected: " + uid + ")", null);
        }
        boolean allowed = response.path("allowed").asBoolean();
        int code = response.path("status").path("code").asInt(allowed ? 200 : 403);
        String message = response.path("status").path("message").asString("");
        if (!allowed) {
            return new Admission(uid, false, code, message, List.of(), null, dial, tlsTime, http);
        }
        List<String> operations = new ArrayList<>();
        JsonNode mutated = podJson;
        String patch = response.path("patch").asString("");
        if (!patch.isEmpty()) {
            try {
                JsonNode operationsJson = JSON.readTree(Base64.getDecoder().decode(patch));
                for (JsonNode operation : operationsJson) {
                    operations.add(operation.path("op").asString("") + " " + operation.path("path").asString(""));
                }
                mutated = JsonPatch.apply(operationsJson, podJson);
            } catch (RuntimeException e) { // bad base64, JSON or patch
                throw new AdmissionFailure(Stage.RESPONSE, "webhook patch cannot be applied: " + e.getMessage(), e);
            }
        }
        Pod toStore = client.getKubernetesSerialization().unmarshal(JSON.writeValueAsString(mutated), Pod.class);
        Pod stored;
        try {
            stored = client.pods().inNamespace(pod.getMetadata().getNamespace()).resource(toStore).create();
        } catch (RuntimeException e) {
            throw new AdmissionFailure(Stage.STORE, "API server refused the admitted pod: " + e.getMessage(), e);
        }
        return new Admission(uid, true, code, message, operations, stored, dial, tlsTime, http);
    }

    private <T> T await(CompletableFuture<T> future) throws ExecutionException, TimeoutException,
            InterruptedException {
        try {
            return future.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            future.cancel(false);
            throw e;
        }
    }

    private String reason(Exception e) {
        if (e instanceof TimeoutException) {
            return "no answer within " + Lab.seconds(timeout);
        }
        Throwable cause = e.getCause() == null ? e : e.getCause();
        while (cause.getCause() != null && (cause.getMessage() == null || cause.getMessage().isBlank()
                || cause instanceof DecoderException)) {
            cause = cause.getCause();
        }
        if (cause instanceof ClosedChannelException) {
            return "connection closed by the remote side";
        }
        String message = cause.getMessage();
        return message == null || message.isBlank() ? cause.getClass().getSimpleName() : message;
    }

    static String abbreviate(String text) {
        String oneLine = text.replaceAll("\\s+", " ").strip();
        return oneLine.length() <= 200 ? oneLine : oneLine.substring(0, 200) + "…";
    }
}
