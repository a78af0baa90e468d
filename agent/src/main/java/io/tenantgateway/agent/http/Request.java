package io.tenantgateway.agent.http;

import static java.util.Objects.requireNonNull;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.QueryStringDecoder;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

/**
 * One HTTP request as a handler sees it: method, raw path and query, the decoded query parameters and the host the
 * client addressed. The body is not kept (the health and admin ports take none). Immutable, so any thread may read
 * it.
 *
 * @param method the method as sent ({@code GET}, {@code HEAD}, …)
 * @param path the path, not percent-decoded ({@code /readyz}); from an absolute-form target its path part
 * @param query the raw query after {@code ?}, or {@code null} when the target has no {@code ?}
 * @param params the query's parameters, decoded; a name without {@code =} has the value {@code ""}
 * @param host the host the client addressed (an absolute-form target's, else the {@code Host} header's), without port or
 *     IPv6 brackets; {@code null} when it named none
 */
public record Request(String method, String path, String query, Map<String, List<String>> params, String host) {
    public Request {
        requireNonNull(method, "method");
        requireNonNull(path, "path");
        Map<String, List<String>> copy = new java.util.LinkedHashMap<>();
        requireNonNull(params, "params").forEach((name, values) -> copy.put(name, List.copyOf(values)));
        params = java.util.Collections.unmodifiableMap(copy);
    }

    /** Built from what Netty decoded. */
    static Request of(HttpRequest request) {
        String target = request.uri();
        String host = host(request.headers().get(HttpHeaderNames.HOST));
        if (target.startsWith("http://") || target.startsWith("https://")) {
            // Absolute form (RFC 9112 3.2.2): path and query from the URI, and its authority wins over Host.
            try {
                URI uri = URI.create(target);
                target = (uri.getRawPath() == null || uri.getRawPath().isEmpty() ? "/" : uri.getRawPath())
                        + (uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery());
                if (uri.getHost() != null) {
                    host = host(uri.getHost());
                }
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("request target: '" + request.uri() + "' (expected: a URI)", e);
            }
        }
        int question = target.indexOf('?');
        String path = question < 0 ? target : target.substring(0, question);
        String query = question < 0 ? null : target.substring(question + 1);
        Map<String, List<String>> params = query == null ? Map.of()
                : new QueryStringDecoder(query, StandardCharsets.UTF_8, false).parameters();
        return new Request(request.method().name(), path, query, params, host);
    }

    /** {@code example.com:8094} → {@code example.com}; {@code [::1]:8094} → {@code ::1}. */
    static String host(String header) {
        if (header == null || header.isBlank()) {
            return null;
        }
        String value = header.strip();
        if (value.startsWith("[")) {
            int end = value.indexOf(']');
            return end < 0 ? value : value.substring(1, end);
        }
        int colon = value.indexOf(':');
        return colon < 0 ? value : value.substring(0, colon);
    }

    /** The first value of query parameter {@code name}, or {@code null}. */
    public String param(String name) {
        List<String> values = params.get(name);
        return values == null || values.isEmpty() ? null : values.get(0);
    }

    /** Whether the query names {@code name} ({@code ?verbose} does). */
    public boolean hasParam(String name) {
        return params.containsKey(name);
    }

    public boolean isGetOrHead() {
        return method.equals("GET") || method.equals("HEAD");
    }
}
