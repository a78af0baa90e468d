package io.tenantgateway.agent.ops;

import static java.util.Objects.requireNonNull;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.unix.DomainSocketAddress;
import io.netty.handler.ssl.SslContext;
import io.tenantgateway.agent.admission.AdmissionConnection;
import io.tenantgateway.certs.TlsContexts;
import io.tenantgateway.certs.TlsMaterial;
import io.tenantgateway.certs.TrustBundle;
import io.tenantgateway.common.net.HostPort;
import io.tenantgateway.tunnel.proxy.ProxyClient;
import io.tenantgateway.tunnel.server.FrontendMode;
import io.tenantgateway.tunnel.transport.Transports;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import tools.jackson.databind.node.ObjectNode;

/**
 * Runs the probe's stages in order — server, dial, TLS, webhook — stopping at the first failure, and reports each
 * with its timing. Runs on the calling thread, which blocks on each stage (it is the CLI's main thread; the I/O
 * itself runs on one Netty event loop owned by this object).
 */
final class Probe implements AutoCloseable {
    private final ProbeConfig config;
    private final Optional<TlsMaterial> serverTls;
    private final Optional<TrustBundle> targetTrust;
    private final ObjectNode pod;
    private final Clock clock;
    private final EventLoopGroup group = Transports.newGroup(1, "probe");
    private final ProbeExplanations.Context context;
    private final List<StageResult> stages = new ArrayList<>();
    private ProxyClient proxyClient;
    private Channel serverChannel;
    private Channel tunnel;
    private ChainCheck.Result chain;
    private TlsHandshakes.PeerSession session;
    private AdmissionProbe.Answer answer;

    /**
     * @param serverTls TLS for a TCP frontend (CA, and client identity for mTLS); empty for a Unix socket or
     *     {@code --plaintext}
     * @param targetTrust the CA the target's chain must verify against ({@code --target-ca}), when known
     * @param pod the pod of the dry-run AdmissionReview
     */
    Probe(ProbeConfig config, Optional<TlsMaterial> serverTls, Optional<TrustBundle> targetTrust, ObjectNode pod,
            Clock clock) {
        this.config = requireNonNull(config, "config");
        this.serverTls = requireNonNull(serverTls, "serverTls");
        this.targetTrust = requireNonNull(targetTrust, "targetTrust");
        this.pod = requireNonNull(pod, "pod");
        this.clock = requireNonNull(clock, "clock");
        this.context = new ProbeExplanations.Context(config.serverDescription(), config.unixSocket().isPresent(),
                config.target().toString(), config.tlsServerName().orElse(config.target().host()),
                config.dialTimeout(), config.webhookPath().orElse("/webhook"),
                serverTls.flatMap(tls -> tls.current().identity()).isPresent());
    }

    ProbeReport run() throws InterruptedException {
        boolean ok = connectServer() && dial() && handshake() && webhook();
        if (ok && stages.size() < ProbeStage.values().length) {
            // Stages not asked for are listed as skipped, so the output always has the same shape.
            for (ProbeStage stage : ProbeStage.values()) {
                if (stages.stream().noneMatch(s -> s.stage() == stage)) {
                    stages.add(StageResult.skip(stage, stage == ProbeStage.TLS
                            ? "not asked for (--tls-server-name)" : "not asked for (--webhook)"));
                }
            }
        } else if (!ok) {
            String failed = stages.get(stages.size() - 1).stage().label();
            for (ProbeStage stage : ProbeStage.values()) {
                if (stage.ordinal() >= stages.size()) {
                    stages.add(StageResult.skip(stage, "not run: " + failed + " failed"));
                }
            }
        }
        return new ProbeReport(config, stages, Optional.ofNullable(session), Optional.ofNullable(chain),
                Optional.ofNullable(answer));
    }

    // ---- server ----

    private boolean connectServer() throws InterruptedException {
        long start = System.nanoTime();
        try {
            SocketAddress address;
            if (config.unixSocket().isPresent()) {
                if (!Files.exists(config.unixSocket().get())) {
                    throw new NoSuchFileException(config.unixSocket().get() + ": no such file");
                }
                address = new DomainSocketAddress(config.unixSocket().get().toString());
            } else {
                HostPort server = config.server().orElseThrow();
                address = new InetSocketAddress(resolve(server.host()), server.port());
            }
            serverChannel = Connections.await(Connections.connect(group, address, config.timeout()),
                    "connect", config.timeout());
            String detail = "connected to " + config.serverDescription();
            // With TLS 1.3 a server refuses a client certificate only after the client finished the handshake, and
            // a server in the other --mode accepts the connection too: in grpc mode an HTTP/2 exchange settles both.
            Http2Preface preface = config.mode() == FrontendMode.GRPC ? new Http2Preface(serverTls.isPresent()) : null;
            if (serverTls.isPresent()) {
                HostPort server = config.server().orElseThrow();
                var builder = TlsContexts.clientBuilder(serverTls.get(), clock);
                if (preface != null) {
                    TlsContexts.alpn(builder, "h2");
                }
                TlsHandshakes.PeerSession tls = Connections.await(TlsHandshakes.handshake(serverChannel,
                        TlsContexts.build(builder), server.host(), server.port(), config.timeout(),
                        preface == null ? new ChannelHandler[0] : new ChannelHandler[] {preface}),
                        "TLS handshake", config.timeout());
                detail += " (" + tls.protocol() + ", server certificate verified"
                        + (serverTls.get().current().identity().isPresent() ? ", client certificate presented" : "")
                        + ")";
            } else if (preface != null) {
                serverChannel.pipeline().addLast(preface);
            }
            if (preface != null) {
                detail += ", " + Connections.await(preface.result(), "HTTP/2 preface", config.timeout());
                // The ProxyService client opens its own connection; this one only checked the server.
                serverChannel.close();
                serverChannel = null;
            }
            stages.add(StageResult.pass(ProbeStage.SERVER, millisSince(start), detail, List.of()));
            return true;
        } catch (InterruptedException e) {
            throw e;
        } catch (Exception e) {
            return failed(ProbeStage.SERVER, start, e, ProbeExplanations::server);
        }
    }

    private static InetAddress resolve(String host) throws UnknownHostException {
        // The CLI thread may block on DNS; the event loop never does.
        return InetAddress.getByName(host);
    }

    // ---- dial ----

    private boolean dial() throws InterruptedException {
        long start = System.nanoTime();
        HostPort target = config.target();
        try {
            if (config.mode() == FrontendMode.GRPC) {
                ProxyClient.Builder builder = ProxyClient.builder().eventLoopGroup(group).clock(clock)
                        .dialTimeout(config.dialTimeout());
                if (config.unixSocket().isPresent()) {
                    builder.unixSocket(config.unixSocket().get());
                } else {
                    HostPort server = config.server().orElseThrow();
                    builder.tcp(new InetSocketAddress(server.host(), server.port()), serverTls.orElse(null));
                }
                proxyClient = builder.build();
                tunnel = Connections.await(proxyClient.dial(target.host(), target.port(), new ChannelInitializer<>() {
                    @Override
                    protected void initChannel(Channel channel) {
                        // TLS and HTTP handlers are added by the next stages.
                    }
                }), "dial", config.dialTimeout().plusSeconds(5));
                stages.add(StageResult.pass(ProbeStage.DIAL, millisSince(start), "DIAL_RSP: tunnel open to "
                        + target + (config.unixSocket().isPresent() ? "" : " (includes the gRPC connection setup)"),
                        List.of()));
            } else {
                AdmissionConnection frontend = AdmissionConnection.plain(serverChannel);
                AdmissionConnection.Response response = Connections.await(frontend.connect(target.toString()),
                        "CONNECT", config.dialTimeout().plusSeconds(5));
                if (response.status() / 100 != 2) {
                    String error = response.body().strip();
                    String summary = "HTTP " + response.status() + " " + response.reason()
                            + (error.isEmpty() ? "" : ": " + error);
                    stages.add(StageResult.fail(ProbeStage.DIAL, millisSince(start), summary,
                            ProbeExplanations.dial(error.isEmpty() ? summary : error, context),
                            ProbeStage.DIAL.exitCode(), List.of()));
                    return false;
                }
                frontend.removeHttp();
                tunnel = serverChannel;
                serverChannel = null;
                stages.add(StageResult.pass(ProbeStage.DIAL, millisSince(start), "HTTP " + response.status() + " "
                        + response.reason() + ": tunnel open to " + target, List.of()));
            }
            return true;
        } catch (InterruptedException e) {
            throw e;
        } catch (Exception e) {
            return failed(ProbeStage.DIAL, start, e, ProbeExplanations::dial);
        }
    }

    // ---- TLS ----

    private boolean handshake() throws InterruptedException {
        if (config.tlsServerName().isEmpty()) {
            return true;
        }
        String name = config.tlsServerName().get();
        long start = System.nanoTime();
        try {
            SslContext inspecting = TlsHandshakes.inspectingClient(null, List.of("http/1.1"));
            session = Connections.await(TlsHandshakes.handshake(tunnel, inspecting, name, config.target().port(),
                    config.timeout()), "TLS handshake", config.timeout());
        } catch (InterruptedException e) {
            throw e;
        } catch (Exception e) {
            String error = Connections.describe(e);
            stages.add(StageResult.fail(ProbeStage.TLS, millisSince(start), error,
                    ProbeExplanations.tls(null, error, context), ProbeStage.TLS.exitCode(), List.of()));
            return false;
        }
        chain = ChainCheck.evaluate(session.chain(), targetTrust, name, clock.instant());
        List<String> details = chainLines(chain);
        double millis = millisSince(start);
        if (!chain.ok()) {
            ChainCheck.Finding finding = chain.first().orElseThrow();
            stages.add(StageResult.fail(ProbeStage.TLS, millis, finding.message(),
                    ProbeExplanations.tls(finding.problem(), finding.message(), context), ProbeStage.TLS.exitCode(),
                    details));
            return false;
        }
        stages.add(StageResult.pass(ProbeStage.TLS, millis, session.protocol() + " " + session.cipherSuite()
                + ", certificate matches " + name + (chain.trustChecked() ? ", chain verified against --target-ca"
                : ", chain NOT verified (no --target-ca)"), details));
        return true;
    }

    static List<String> chainLines(ChainCheck.Result chain) {
        List<String> lines = new ArrayList<>();
        for (int i = 0; i < chain.chain().size(); i++) {
            CertificateInfo certificate = chain.chain().get(i);
            lines.add("[" + i + "] " + certificate.subject() + " issued by " + certificate.issuer() + ", valid "
                    + certificate.notBefore() + " .. " + certificate.notAfter());
            if (!certificate.names().isEmpty()) {
                lines.add("    names: " + String.join(", ", certificate.names()));
            }
        }
        return lines;
    }

    // ---- webhook ----

    private boolean webhook() throws InterruptedException {
        if (config.webhookPath().isEmpty()) {
            return true;
        }
        long start = System.nanoTime();
        String uid = UUID.randomUUID().toString();
        String host = config.tlsServerName().orElseThrow();
        String authority = config.target().port() == 443 ? host : host + ":" + config.target().port();
        AdmissionConnection.Response response;
        try {
            response = Connections.await(AdmissionConnection.plain(tunnel).postJson(authority,
                    config.webhookPath().get(), AdmissionProbe.request(pod, uid).getBytes(StandardCharsets.UTF_8),
                    null), "POST " + config.webhookPath().get(), config.timeout());
        } catch (InterruptedException e) {
            throw e;
        } catch (Exception e) {
            return webhookFailed(start, Connections.describe(e));
        }
        if (response.status() != 200) {
            String body = response.body().strip().lines().findFirst().orElse("");
            return webhookFailed(start, "HTTP " + response.status() + " " + response.reason()
                    + (body.isEmpty() ? "" : ": " + body));
        }
        try {
            answer = AdmissionProbe.parse(response.body(), uid);
        } catch (IllegalArgumentException e) {
            return webhookFailed(start, e.getMessage());
        }
        double millis = millisSince(start);
        List<String> details = new ArrayList<>(answer.patch());
        answer.warnings().forEach(warning -> details.add("warning: " + warning));
        if (!answer.allowed()) {
            String summary = "HTTP 200: refused, code " + answer.code()
                    + (answer.message().isEmpty() ? "" : ": " + answer.message());
            stages.add(StageResult.fail(ProbeStage.WEBHOOK, millis, summary,
                    ProbeExplanations.refused(answer.code(), answer.message()), ProbeStage.WEBHOOK_REFUSED_EXIT_CODE,
                    details));
            return false;
        }
        String patch = answer.patch().isEmpty() ? "no patch"
                : answer.patchType() + " with " + answer.patch().size() + " operation(s)";
        stages.add(StageResult.pass(ProbeStage.WEBHOOK, millis, "HTTP 200: allowed, " + patch
                + (answer.message().isEmpty() ? "" : " (" + answer.message() + ")"), details));
        return true;
    }

    private boolean webhookFailed(long start, String error) {
        stages.add(StageResult.fail(ProbeStage.WEBHOOK, millisSince(start), error,
                ProbeExplanations.webhook(error, context), ProbeStage.WEBHOOK.exitCode(), List.of()));
        return false;
    }

    private static double millisSince(long startNanos) {
        return Math.round((System.nanoTime() - startNanos) / 100_000.0) / 10.0;
    }

    @Override
    public void close() {
        if (tunnel != null) {
            tunnel.close().awaitUninterruptibly(1, TimeUnit.SECONDS); // sends CLOSE_REQ through the tunnel
        }
        if (serverChannel != null) {
            serverChannel.close();
        }
        if (proxyClient != null) {
            proxyClient.close();
        }
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
    }

    /** Records {@code stage} as failed with what went wrong and its explanation; returns {@code false}. */
    private boolean failed(ProbeStage stage, long start, Exception e,
            java.util.function.BiFunction<String, ProbeExplanations.Context, ProbeExplanations.Explanation> explain) {
        String error = Connections.describe(e);
        stages.add(StageResult.fail(stage, millisSince(start), error, explain.apply(error, context), stage.exitCode(),
                List.of()));
        return false;
    }
}
