package io.tenantgateway.tools.lab;

import static java.util.Objects.requireNonNull;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.zjsonpatch.JsonPatch;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslHandler;
import io.tenantgateway.agent.k8s.AdmissionRequests;
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
    private static final int MAX_RESPONSE_BYTES = 1024 * 1024;
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

        CompletableFuture<Void> handshake = new CompletableFuture<>();
        CompletableFuture<HttpAnswer> answer = new CompletableFuture<>();
        long start = System.nanoTime();
        Channel channel;
        Duration dial;
        Duration tlsTime;
        Duration http;
        try (ProxyClient proxy = proxyClients.get()) {
            try {
                channel = await(proxy.dial(service.getHostString(), service.getPort(),
                        new ExchangeInitializer(handshake, answer)));
            } catch (ExecutionException | TimeoutException e) {
                throw new AdmissionFailure(Stage.DIAL, "dial " + target + " through " + serverName + " failed: "
                        + reason(e), e);
            }
            long dialed = System.nanoTime();
            dial = Duration.ofNanos(dialed - start);
            try {
                try {
                    await(handshake);
                } catch (ExecutionException | TimeoutException e) {
                    throw new AdmissionFailure(Stage.TLS, "TLS handshake with " + WEBHOOK_DNS_NAME + " (" + target
                            + " through " + serverName + ") failed: " + reason(e), e);
                }
                long handshaken = System.nanoTime();
                tlsTime = Duration.ofNanos(handshaken - dialed);
                channel.writeAndFlush(request(review));
                HttpAnswer response;
                try {
                    response = await(answer);
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
                channel.close();
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

    private static FullHttpRequest request(String review) {
        byte[] body = review.getBytes(StandardCharsets.UTF_8);
        FullHttpRequest request = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.POST,
                WEBHOOK_PATH + "?timeout=10s", Unpooled.wrappedBuffer(body));
        request.headers().set(HttpHeaderNames.HOST, WEBHOOK_DNS_NAME + ":" + SERVICE_PORT)
                .set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON)
                .set(HttpHeaderNames.ACCEPT, HttpHeaderValues.APPLICATION_JSON)
                .set(HttpHeaderNames.CONTENT_LENGTH, body.length)
                .set(HttpHeaderNames.USER_AGENT, "tenant-gateway-lab (kube-apiserver admission)");
        return request;
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

    /** Status and body of the webhook's answer. */
    private record HttpAnswer(int status, String body) {
    }

    /** TLS verifying the Service name, HTTP/1.1, and one response. */
    private final class ExchangeInitializer extends ChannelInitializer<Channel> {
        private final CompletableFuture<Void> handshake;
        private final CompletableFuture<HttpAnswer> answer;

        ExchangeInitializer(CompletableFuture<Void> handshake, CompletableFuture<HttpAnswer> answer) {
            this.handshake = handshake;
            this.answer = answer;
        }

        @Override
        protected void initChannel(Channel channel) {
            // The bytes go to the Service address; the certificate must name the Service, as kube-apiserver checks.
            SslHandler ssl = tls.newHandler(channel.alloc(), WEBHOOK_DNS_NAME, SERVICE_PORT);
            ssl.handshakeFuture().addListener(done -> {
                if (done.isSuccess()) {
                    handshake.complete(null);
                } else {
                    handshake.completeExceptionally(done.cause());
                }
            });
            channel.pipeline().addLast(ssl, new HttpClientCodec(), new HttpObjectAggregator(MAX_RESPONSE_BYTES),
                    new SimpleChannelInboundHandler<FullHttpResponse>() {
                        @Override
                        protected void channelRead0(ChannelHandlerContext ctx, FullHttpResponse response) {
                            answer.complete(new HttpAnswer(response.status().code(),
                                    response.content().toString(StandardCharsets.UTF_8)));
                        }

                        @Override
                        public void channelInactive(ChannelHandlerContext ctx) {
                            ClosedChannelException closed = new ClosedChannelException();
                            handshake.completeExceptionally(closed);
                            answer.completeExceptionally(closed);
                            ctx.fireChannelInactive();
                        }

                        @Override
                        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                            handshake.completeExceptionally(cause);
                            answer.completeExceptionally(cause);
                            ctx.close();
                        }
                    });
        }
    }
}
