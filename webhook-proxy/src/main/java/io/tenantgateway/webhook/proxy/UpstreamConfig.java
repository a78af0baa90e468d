package io.tenantgateway.webhook.proxy;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.common.config.ConfigException;
import io.tenantgateway.common.time.GoDuration;
import java.net.URI;
import java.time.Duration;
import java.util.Locale;

/**
 * Reverse-proxy settings: requests to {@code path} on our server are forwarded to the upstream webhook at
 * {@code url} (e.g. the real {@code hami-scheduler}), whose certificate is verified against its own CA.
 *
 * @param url the upstream's https URL including its path, e.g. {@code https://hami-scheduler.kube-system.svc:443/webhook}
 * @param path our path whose requests go upstream; the webhook path itself ({@code /webhook}) forwards all
 *     admissions, another path keeps {@code /webhook} on the built-in mutator
 * @param timeout how long the upstream may take; below the API server's 10 s so our answer still arrives
 * @param failurePolicy what to answer when the upstream fails
 */
public record UpstreamConfig(URI url, String path, Duration timeout, FailurePolicy failurePolicy) {
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(9);
    /** The API server's webhook timeout in HAMi's MutatingWebhookConfiguration ({@code timeoutSeconds: 10}). */
    public static final Duration API_SERVER_TIMEOUT = Duration.ofSeconds(10);
    public static final String DEFAULT_PATH = "/webhook";

    public UpstreamConfig {
        requireNonNull(url, "url");
        requireNonNull(timeout, "timeout");
        requireNonNull(failurePolicy, "failurePolicy");
        path = path == null || path.isEmpty() ? DEFAULT_PATH : path;
        if (url.getScheme() == null || !url.getScheme().toLowerCase(Locale.ROOT).equals("https")
                || url.getHost() == null || url.getHost().isEmpty()) {
            throw new ConfigException("--upstream", "'" + url + "'",
                    "an https:// URL with a host, e.g. https://hami-scheduler.kube-system.svc:443/webhook");
        }
        if (url.getRawQuery() != null || url.getRawFragment() != null) {
            throw new ConfigException("--upstream", "'" + url + "'", "no query or fragment");
        }
        if (!path.startsWith("/")) {
            throw new ConfigException("--upstream-path", "'" + path + "'", "a path starting with /");
        }
        if (timeout.isNegative() || timeout.isZero() || timeout.compareTo(API_SERVER_TIMEOUT) >= 0) {
            throw new ConfigException("--upstream-timeout", GoDuration.format(timeout),
                    "> 0 and < 10s, so the answer reaches the API server before its own timeout");
        }
    }

    /** Forward everything under the webhook path, 9 s, fail-closed. */
    public static UpstreamConfig of(URI url) {
        return new UpstreamConfig(url, DEFAULT_PATH, DEFAULT_TIMEOUT, FailurePolicy.FAIL_CLOSED);
    }

    public UpstreamConfig withTimeout(Duration newTimeout) {
        return new UpstreamConfig(url, path, newTimeout, failurePolicy);
    }

    public UpstreamConfig withFailurePolicy(FailurePolicy newPolicy) {
        return new UpstreamConfig(url, path, timeout, newPolicy);
    }

    public UpstreamConfig withPath(String newPath) {
        return new UpstreamConfig(url, newPath, timeout, failurePolicy);
    }

    /** Host and port the client dials, with the scheme's default port filled in. */
    public int port() {
        return url.getPort() > 0 ? url.getPort() : 443;
    }
}
