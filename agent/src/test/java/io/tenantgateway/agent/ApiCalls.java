package io.tenantgateway.agent;

import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

/**
 * Turns the requests a mock API server received into RBAC keys ({@code group/resource:verb}). Requests made by the
 * test itself carry {@link #TEST_USER_AGENT} and are left out.
 */
final class ApiCalls {
    static final String TEST_USER_AGENT = "tenant-gateway-test-harness";

    private ApiCalls() {
    }

    /** A client for the test's own writes, told apart from the agent's by its user agent. */
    static KubernetesClient testClient(KubernetesClient injected) {
        return new KubernetesClientBuilder().withConfig(new ConfigBuilder(injected.getConfiguration())
                .withUserAgent(TEST_USER_AGENT).build()).build();
    }

    static Set<String> drain(KubernetesMockServer server) throws InterruptedException {
        Set<String> keys = new TreeSet<>();
        RecordedRequest request;
        while ((request = server.takeRequest(100, TimeUnit.MILLISECONDS)) != null) {
            if (!TEST_USER_AGENT.equals(request.getHeader("User-Agent"))) {
                keys.add(key(request.getMethod(), request.getPath()));
            }
        }
        return keys;
    }

    static String key(String method, String pathAndQuery) {
        int q = pathAndQuery.indexOf('?');
        String path = q < 0 ? pathAndQuery : pathAndQuery.substring(0, q);
        String query = q < 0 ? "" : pathAndQuery.substring(q + 1);
        String[] parts = path.replaceAll("^/+", "").split("/");
        int i;
        String group;
        if (parts[0].equals("api")) {
            group = "core";
            i = 2;
        } else {
            group = parts[1];
            i = 3;
        }
        if (i < parts.length && parts[i].equals("namespaces") && i + 2 < parts.length) {
            i += 2;
        }
        String resource = parts[i];
        String name = i + 1 < parts.length ? parts[i + 1] : null;
        String subresource = i + 2 < parts.length ? parts[i + 2] : null;
        String verb = switch (method) {
            case "GET" -> name != null ? "get" : query.matches("(.*&)?watch=(true|1)(&.*)?") ? "watch" : "list";
            case "POST" -> "create";
            case "PATCH" -> "patch";
            case "PUT" -> "update";
            case "DELETE" -> "delete";
            default -> method.toLowerCase(java.util.Locale.ROOT);
        };
        return group + "/" + resource + (subresource != null ? "/" + subresource : "") + ":" + verb;
    }
}
