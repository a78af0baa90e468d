package io.tenantgateway.agent.k8s;

import static java.util.Objects.requireNonNull;

import io.fabric8.kubernetes.client.http.AsyncBody;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.Interceptor;
import java.io.IOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.util.List;

/**
 * A bound on what the agent reads from the tenant API in one answer: {@value #LIMIT} bytes a response, and for a
 * watch (newline-delimited events) a single event. The API server stores no object that large (etcd's default limit
 * is 1.5 MiB, kube-apiserver takes requests up to 3 MiB) and the agent's lists are read in pages
 * ({@link Pages}: 100 pods or 20 Nodes), so only something else answers more; fabric8 would read the whole answer into the heap before anything of
 * ours sees it (an 8 MiB Node ran the 48 MiB agent out of heap). Past the limit the call fails with an
 * {@link IOException} naming the request and the limit, the connection is reset, and the part that made it reports
 * the failure and retries as for any API error.
 *
 * <p>Counted as the bytes arrive, on the client's I/O thread, before they are handed on; no copy is kept.
 */
final class ResponseSizeLimit implements Interceptor {
    /** The most bytes of one answer (a watch: of one event). */
    static final int LIMIT = 4 * 1024 * 1024;

    private final int limit;

    ResponseSizeLimit(int limit) {
        if (limit <= 0) {
            throw new IllegalArgumentException("limit: " + limit + " (expected: > 0)");
        }
        this.limit = limit;
    }

    @Override
    public AsyncBody.Consumer<List<ByteBuffer>> consumer(AsyncBody.Consumer<List<ByteBuffer>> consumer,
            HttpRequest request) {
        return new Counting(requireNonNull(consumer, "consumer"), request.method() + " " + withoutQuery(request.uri()),
                isWatch(request.uri()), limit);
    }

    static boolean isWatch(URI uri) {
        String query = uri.getRawQuery();
        if (query == null) {
            return false;
        }
        for (String parameter : query.split("&")) {
            if (parameter.equals("watch=true") || parameter.equals("watch=1")) {
                return true;
            }
        }
        return false;
    }

    private static String withoutQuery(URI uri) {
        return uri.getScheme() + "://" + uri.getRawAuthority() + uri.getRawPath();
    }

    /** Counts what passes; a watch's count starts again after each line feed (an event's end). */
    private static final class Counting implements AsyncBody.Consumer<List<ByteBuffer>> {
        private final AsyncBody.Consumer<List<ByteBuffer>> delegate;
        private final String request;
        private final boolean watch;
        private final int limit;
        private long count;

        Counting(AsyncBody.Consumer<List<ByteBuffer>> delegate, String request, boolean watch, int limit) {
            this.delegate = delegate;
            this.request = request;
            this.watch = watch;
            this.limit = limit;
        }

        @Override
        public void consume(List<ByteBuffer> buffers, AsyncBody body) throws Exception {
            for (ByteBuffer buffer : buffers) {
                if (!watch) {
                    count += buffer.remaining();
                    continue;
                }
                for (int i = buffer.position(); i < buffer.limit(); i++) {
                    count = buffer.get(i) == '\n' ? 0 : count + 1;
                    if (count > limit) {
                        break;
                    }
                }
            }
            if (count > limit) {
                throw new IOException(request + ": " + (watch ? "a watch event" : "the answer") + " is over " + limit
                        + " bytes (expected: at most " + limit + ", more than any object an API server stores); not"
                        + " read");
            }
            delegate.consume(buffers, body);
        }

        @Override
        public <U> U unwrap(Class<U> type) {
            return type.isInstance(this) ? type.cast(this) : delegate.unwrap(type);
        }
    }
}
