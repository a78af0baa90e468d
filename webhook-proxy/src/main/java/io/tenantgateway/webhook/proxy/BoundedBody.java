package io.tenantgateway.webhook.proxy;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.streams.ReadStream;

/**
 * Reads an HTTP body into memory up to a limit, for admission requests and upstream answers alike. Past the
 * limit the bytes are counted and dropped, so the caller can still answer 413 after the request ends; past the
 * discard limit it stops waiting for the end and reports {@link Body#abandoned()} so the caller closes the
 * connection instead of reading forever.
 *
 * <p>Must be called on the stream's context before the stream delivers data (in the request handler).
 */
public final class BoundedBody {
    private BoundedBody() {
    }

    /**
     * @param body the bytes read, or {@code null} when the body was larger than the limit
     * @param size bytes seen (up to the point of abandoning)
     * @param abandoned the body went past the discard limit and was not read to its end
     */
    public record Body(Buffer body, long size, boolean abandoned) {
        public boolean tooLarge() {
            return body == null;
        }
    }

    public static Future<Body> read(ReadStream<Buffer> stream, int limit, long discardLimit) {
        Promise<Body> promise = Promise.promise();
        Reader reader = new Reader(limit, discardLimit, promise);
        stream.exceptionHandler(promise::tryFail);
        stream.handler(chunk -> {
            if (reader.accept(chunk)) {
                stream.handler(null);
                stream.endHandler(null);
            }
        });
        stream.endHandler(ignored -> reader.end());
        return promise.future();
    }

    private static final class Reader {
        private final int limit;
        private final long discardLimit;
        private final Promise<Body> promise;
        private Buffer collected = Buffer.buffer();
        private long size;

        Reader(int limit, long discardLimit, Promise<Body> promise) {
            this.limit = limit;
            this.discardLimit = Math.max(limit, discardLimit);
            this.promise = promise;
        }

        /** @return true when reading stops here (abandoned) */
        boolean accept(Buffer chunk) {
            size += chunk.length();
            if (size <= limit) {
                collected.appendBuffer(chunk);
                return false;
            }
            collected = null; // over the limit: keep counting, stop holding bytes
            if (size > discardLimit) {
                promise.tryComplete(new Body(null, size, true));
                return true;
            }
            return false;
        }

        void end() {
            promise.tryComplete(new Body(collected, size, false));
        }
    }
}
