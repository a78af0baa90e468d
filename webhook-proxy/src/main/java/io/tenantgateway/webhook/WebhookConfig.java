package io.tenantgateway.webhook;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.certs.ClientAuthMode;
import io.tenantgateway.certs.vertx.ServerLimits;
import io.tenantgateway.common.config.ConfigException;
import io.tenantgateway.webhook.policy.PolicyConfig;
import io.tenantgateway.webhook.proxy.UpstreamConfig;
import java.util.Optional;

/**
 * Everything the webhook server needs besides live objects (TLS material, quota lookup, metrics registry), which
 * {@link WebhookServer.Builder} takes separately.
 *
 * @param host address to bind ({@code 0.0.0.0} for all IPv4 interfaces, {@code ::} for all)
 * @param port port to bind; 0 picks a free one (tests)
 * @param path the admission path the API server calls ({@code /webhook}, as HAMi)
 * @param clientAuth whether callers must present a client certificate signed by the server material's CA
 *     (kube-apiserver can, via its admission-control kubeconfig)
 * @param policy scheduler name, force-overwrite, HAMi compatibility
 * @param upstream reverse-proxy settings, when an upstream webhook answers some or all requests
 * @param maxRequestBytes requests larger than this are answered 413 (default
 *     {@link #DEFAULT_MAX_REQUEST_BYTES}: kube-apiserver's 3 MiB request limit plus the review around the pod)
 * @param recentAdmissions how many recent decisions {@link RecentAdmissions} keeps (0 keeps none)
 * @param limits connection cap and timeouts (the webhook runs with {@code failurePolicy: Fail}: one client holding
 *     every connection would stop every GPU pod)
 */
public record WebhookConfig(String host, int port, String path, ClientAuthMode clientAuth, PolicyConfig policy,
        Optional<UpstreamConfig> upstream, int maxRequestBytes, int recentAdmissions, ServerLimits limits) {

    public static final int DEFAULT_PORT = 9443;
    public static final String DEFAULT_PATH = "/webhook";
    /**
     * 3 MiB + 256 KiB = 3,407,872 bytes: kube-apiserver reads at most 3 MiB of a request body (k8s.io/apiserver
     * {@code server.NewConfig}: {@code MaxRequestBodyBytes: 3 * 1024 * 1024}, twice etcd's 1.5 MiB because JSON is
     * larger than the protobuf stored), and HAMi's webhook is registered for pod CREATE only, so a review carries
     * one object ({@code oldObject} is null) plus the review around it (uid, kinds, resources, userInfo, options: a
     * few KiB) and the defaults the API server fills in before calling webhooks. 256 KiB covers both with room.
     * (controller-runtime, and HAMi, allow 7 MiB; nothing the API server sends for a pod CREATE gets near it.)
     */
    public static final int DEFAULT_MAX_REQUEST_BYTES = 3 * 1024 * 1024 + 256 * 1024;
    public static final int DEFAULT_RECENT_ADMISSIONS = 200;
    private static final int MAX_RECENT_ADMISSIONS = 100_000;

    public WebhookConfig {
        requireNonNull(host, "host");
        requireNonNull(clientAuth, "clientAuth");
        requireNonNull(policy, "policy");
        limits = limits == null ? ServerLimits.DEFAULTS : limits;
        upstream = upstream == null ? Optional.empty() : upstream;
        path = path == null || path.isEmpty() ? DEFAULT_PATH : path;
        if (host.isBlank()) {
            throw new ConfigException("--listen", "host ''", "an address such as 0.0.0.0");
        }
        if (port < 0 || port > 65535) {
            throw new ConfigException("--listen", "port " + port, "0..65535");
        }
        if (!path.startsWith("/")) {
            throw new IllegalArgumentException("path: '" + path + "' (expected: a path starting with /)");
        }
        if (maxRequestBytes <= 0) {
            throw new IllegalArgumentException("maxRequestBytes: " + maxRequestBytes + " (expected: > 0)");
        }
        if (recentAdmissions < 0 || recentAdmissions > MAX_RECENT_ADMISSIONS) {
            throw new IllegalArgumentException("recentAdmissions: " + recentAdmissions + " (expected: 0.."
                    + MAX_RECENT_ADMISSIONS + ")");
        }
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Whether requests to the admission path itself go upstream (rather than to the built-in mutator). */
    public boolean proxiesAdmissionPath() {
        return upstream.map(u -> u.path().equals(path)).orElse(false);
    }

    /** Builds a {@link WebhookConfig}; unset values take the defaults above. */
    public static final class Builder {
        private String host = "0.0.0.0";
        private int port = DEFAULT_PORT;
        private String path = DEFAULT_PATH;
        private ClientAuthMode clientAuth = ClientAuthMode.NONE;
        private PolicyConfig policy = PolicyConfig.defaults();
        private UpstreamConfig upstream;
        private int maxRequestBytes = DEFAULT_MAX_REQUEST_BYTES;
        private int recentAdmissions = DEFAULT_RECENT_ADMISSIONS;
        private ServerLimits limits = ServerLimits.DEFAULTS;

        private Builder() {
        }

        public Builder host(String value) {
            this.host = value;
            return this;
        }

        public Builder port(int value) {
            this.port = value;
            return this;
        }

        public Builder path(String value) {
            this.path = value;
            return this;
        }

        public Builder clientAuth(ClientAuthMode value) {
            this.clientAuth = value;
            return this;
        }

        public Builder policy(PolicyConfig value) {
            this.policy = value;
            return this;
        }

        public Builder upstream(UpstreamConfig value) {
            this.upstream = value;
            return this;
        }

        public Builder maxRequestBytes(int value) {
            this.maxRequestBytes = value;
            return this;
        }

        /** Connection cap and timeouts; default {@link ServerLimits#DEFAULTS}. */
        public Builder limits(ServerLimits value) {
            this.limits = requireNonNull(value, "limits");
            return this;
        }

        public Builder recentAdmissions(int value) {
            this.recentAdmissions = value;
            return this;
        }

        public WebhookConfig build() {
            return new WebhookConfig(host, port, path, clientAuth, policy, Optional.ofNullable(upstream),
                    maxRequestBytes, recentAdmissions, limits);
        }
    }
}
