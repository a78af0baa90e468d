package io.tenantgateway.agent.testing;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.Locale;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;

/**
 * A TLS connection to a webhook on 127.0.0.1 as kube-apiserver opens one for a {@code service} reference: the
 * certificate must chain to the given CA bundle (the webhook configuration's {@code caBundle}) and name the Service
 * ({@code <name>.<namespace>.svc}, sent as SNI and checked by the JDK's HTTPS endpoint identification). HTTP/1.1,
 * kept alive between {@link #admit} calls. Blocking; one caller at a time.
 */
public final class WebhookTlsClient implements AutoCloseable {
    public static final String SERVICE_DNS = "tenant-gateway-webhook.kube-system.svc";

    private final SSLSocket socket;
    private final InputStream in;
    private final OutputStream out;
    private int uid;

    private WebhookTlsClient(SSLSocket socket) throws IOException {
        this.socket = socket;
        this.in = socket.getInputStream();
        this.out = socket.getOutputStream();
    }

    /** Connects and completes the handshake; fails (SSLHandshakeException) when the certificate is not trusted. */
    public static WebhookTlsClient connect(int port, List<X509Certificate> caBundle) throws IOException,
            GeneralSecurityException {
        KeyStore trust = KeyStore.getInstance(KeyStore.getDefaultType());
        trust.load(null, null);
        for (int i = 0; i < caBundle.size(); i++) {
            trust.setCertificateEntry("ca-" + i, caBundle.get(i));
        }
        TrustManagerFactory trustManagers = TrustManagerFactory.getInstance("PKIX");
        trustManagers.init(trust);
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(null, trustManagers.getTrustManagers(), null);
        Socket plain = new Socket();
        try {
            plain.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), (int) Waits.WAIT.toMillis());
            plain.setSoTimeout((int) Waits.WAIT.toMillis());
            SSLSocket tls = (SSLSocket) context.getSocketFactory().createSocket(plain, SERVICE_DNS, port, true);
            SSLParameters parameters = tls.getSSLParameters();
            parameters.setEndpointIdentificationAlgorithm("HTTPS");
            tls.setSSLParameters(parameters);
            tls.startHandshake();
            return new WebhookTlsClient(tls);
        } catch (IOException | RuntimeException e) {
            plain.close();
            throw e;
        }
    }

    /** The certificate the webhook presented in this connection's handshake. */
    public X509Certificate peer() throws IOException {
        return (X509Certificate) socket.getSession().getPeerCertificates()[0];
    }

    /** Sends one AdmissionReview for a pod without GPUs on this connection; returns the HTTP status. */
    public int admit() throws IOException {
        String body = """
                {"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u-%d",\
                "kind":{"group":"","version":"v1","kind":"Pod"},"resource":{"group":"","version":"v1",\
                "resource":"pods"},"namespace":"default","operation":"CREATE","userInfo":{"username":"test"},\
                "object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"default"},\
                "spec":{"containers":[{"name":"c","image":"busybox"}]}}}}""".formatted(++uid);
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        out.write(("POST /webhook HTTP/1.1\r\nHost: " + SERVICE_DNS + "\r\nContent-Type: application/json\r\n"
                + "Content-Length: " + bytes.length + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        out.write(bytes);
        out.flush();
        String status = line();
        int length = -1;
        for (String header = line(); !header.isEmpty(); header = line()) {
            String lower = header.toLowerCase(Locale.ROOT);
            if (lower.startsWith("content-length:")) {
                length = Integer.parseInt(lower.substring("content-length:".length()).strip());
            }
        }
        if (length < 0) {
            throw new IOException("response without content-length: " + status);
        }
        in.readNBytes(length);
        return Integer.parseInt(status.split(" ")[1]);
    }

    private String line() throws IOException {
        ByteArrayOutputStream buffer = new ByteArrayOutputStream();
        int c;
        while ((c = in.read()) != '\n') {
            if (c < 0) {
                throw new IOException("connection closed by the webhook");
            }
            if (c != '\r') {
                buffer.write(c);
            }
        }
        return buffer.toString(StandardCharsets.US_ASCII);
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
