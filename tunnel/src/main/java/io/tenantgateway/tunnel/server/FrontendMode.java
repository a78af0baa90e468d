package io.tenantgateway.tunnel.server;

/** The protocol clients (kube-apiserver) speak to the server ({@code --mode}). */
public enum FrontendMode {
    /** {@code /ProxyService/Proxy}: one gRPC stream per tunnelled connection. */
    GRPC,
    /** {@code CONNECT host:port HTTP/1.1}, then raw bytes. */
    HTTP_CONNECT
}
