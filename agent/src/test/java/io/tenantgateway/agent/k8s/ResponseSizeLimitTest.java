package io.tenantgateway.agent.k8s;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.client.http.AsyncBody;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.StandardHttpRequest;
import java.io.IOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class ResponseSizeLimitTest {
    private final List<String> passed = new ArrayList<>();
    private final AsyncBody.Consumer<List<ByteBuffer>> sink = (buffers, body) -> buffers
            .forEach(b -> passed.add(StandardCharsets.UTF_8.decode(b.duplicate()).toString()));

    private AsyncBody.Consumer<List<ByteBuffer>> counting(String uri) {
        HttpRequest request = new StandardHttpRequest.Builder().uri(uri).build();
        return new ResponseSizeLimit(10).consumer(sink, request);
    }

    private static List<ByteBuffer> bytes(String text) {
        return List.of(ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8)));
    }

    @Test
    void anAnswerPastTheLimitFailsBeforeItIsHandedOn() throws Exception {
        AsyncBody.Consumer<List<ByteBuffer>> consumer = counting("https://api:6443/api/v1/nodes/n1?timeout=5s");
        consumer.consume(bytes("{\"a\":"), null);
        consumer.consume(bytes("1}\n"), null); // 8 bytes: a line feed does not reset a plain answer
        assertThatThrownBy(() -> consumer.consume(bytes("{}\n"), null)).isInstanceOf(IOException.class)
                .hasMessage("GET https://api:6443/api/v1/nodes/n1: the answer is over 10 bytes (expected: at most 10,"
                        + " more than any object an API server stores); not read");
        assertThat(passed).containsExactly("{\"a\":", "1}\n");
    }

    @Test
    void aWatchCountsEachEvent() throws Exception {
        AsyncBody.Consumer<List<ByteBuffer>> consumer = counting("https://api:6443/api/v1/pods?watch=true&rv=1");
        consumer.consume(bytes("123456789\n123456789\n1234"), null);
        consumer.consume(bytes("56789\n"), null);
        assertThatThrownBy(() -> consumer.consume(bytes("12345678901"), null))
                .hasMessageStartingWith("GET https://api:6443/api/v1/pods: a watch event is over 10 bytes");
        assertThat(ResponseSizeLimit.isWatch(URI.create("http://x/api?watch=1"))).isTrue();
        assertThat(ResponseSizeLimit.isWatch(URI.create("http://x/api?watchx=true"))).isFalse();
        assertThat(ResponseSizeLimit.isWatch(URI.create("http://x/api"))).isFalse();
    }
}
