package io.tenantgateway.tunnel.transport;

import io.grpc.Metadata;
import java.util.ArrayList;
import java.util.List;

/** Reading and writing the protocol's ASCII metadata (keys from {@link io.tenantgateway.tunnel.protocol.Headers}). */
public final class GrpcHeaders {
    private GrpcHeaders() {
    }

    public static Metadata.Key<String> key(String name) {
        return Metadata.Key.of(name, Metadata.ASCII_STRING_MARSHALLER);
    }

    /** Every value of {@code name}, in order (empty when absent). */
    public static List<String> values(Metadata headers, String name) {
        Iterable<String> values = headers.getAll(key(name));
        List<String> out = new ArrayList<>();
        if (values != null) {
            values.forEach(out::add);
        }
        return out;
    }
}
