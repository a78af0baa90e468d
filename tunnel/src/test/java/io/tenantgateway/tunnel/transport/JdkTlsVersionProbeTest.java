package io.tenantgateway.tunnel.transport;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.Security;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class JdkTlsVersionProbeTest {
    @TempDir
    Path dir;

    @Test
    void nettysDefaultsComeOutTheSameWithTheProbeAndTheJdkHandshakeClassesStayUnloaded() throws Exception {
        Path probeLog = dir.resolve("probe-classes.log");
        Path jdkLog = dir.resolve("jdk-classes.log");
        List<String> withProbe = child("probe", probeLog);
        List<String> askingTheJdk = child("jdk", jdkLog);

        assertThat(withProbe).as("Netty's TLS defaults with the probe vs asking the JDK").isEqualTo(askingTheJdk);
        assertThat(withProbe).contains("probe provider left: false");
        assertThat(String.join("\n", withProbe)).contains("TLSv1.3");
        String handshake = "sun.security.ssl.SSLSocketImpl ";
        assertThat(beforeMarker(jdkLog)).as("asking the JDK loads its handshake (the check can fail)")
                .contains(handshake);
        assertThat(beforeMarker(probeLog)).doesNotContain(handshake);
    }

    @Test
    void aContextMadeWhileTheProbeIsInPlaceStillWorksAndTheProviderGoesAfterwards() throws Exception {
        boolean[] seen = new boolean[1];
        boolean answered = JdkTlsVersionProbe.answering(() -> {
            try {
                SSLContext context = SSLContext.getInstance("TLS");
                assertThat(context.getProvider().getName()).isEqualTo(JdkTlsVersionProbe.PROVIDER_NAME);
                assertThat(context.getDefaultSSLParameters().getProtocols()).containsExactly("TLSv1.3", "TLSv1.2");
                context.init(null, null, null);
                SSLEngine engine = context.createSSLEngine("node-1.example", 443);
                engine.setUseClientMode(true);
                assertThat(engine.getPeerHost()).isEqualTo("node-1.example");
                assertThat(engine.getEnabledProtocols()).contains("TLSv1.3");
                assertThat(context.getSocketFactory().getDefaultCipherSuites()).isNotEmpty();
                seen[0] = true;
                return true;
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        });
        assertThat(answered).isTrue();
        assertThat(seen[0]).isTrue();
        assertThat(Security.getProvider(JdkTlsVersionProbe.PROVIDER_NAME)).isNull();
        assertThat(SSLContext.getInstance("TLS").getProvider().getName()).isEqualTo("SunJSSE");
    }

    /** Runs {@link Child} in a new JVM (Netty's OpenSsl initialises once per JVM) and returns what it printed. */
    private static List<String> child(String mode, Path classLog) throws Exception {
        String java = ProcessHandle.current().info().command().orElse("java");
        List<String> command = new ArrayList<>(List.of(java, "-Xlog:class+load=info:file=" + classLog,
                "-cp", System.getProperty("java.class.path"), Child.class.getName(), mode));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        byte[] output = process.getInputStream().readAllBytes();
        assertThat(process.waitFor(2, TimeUnit.MINUTES)).isTrue();
        String text = new String(output, StandardCharsets.UTF_8);
        assertThat(process.exitValue()).as("child %s printed:%n%s", mode, text).isZero();
        return text.lines().filter(line -> line.startsWith("probe ") || line.startsWith("netty ")).toList();
    }

    /** Its line in the class-load log marks where the child turns to Netty's JDK contexts. */
    static final class Marker {
        static void loaded() {
        }
    }

    /** The class-load log up to {@link Marker}'s line. */
    private static String beforeMarker(Path classLog) throws Exception {
        String log = Files.readString(classLog);
        int marker = log.indexOf(Marker.class.getName() + " ");
        assertThat(marker).as("marker in %s", classLog).isPositive();
        return log.substring(0, marker);
    }

    /** Prints Netty's TLS defaults after OpenSsl initialised with the probe ({@code probe}) or without ({@code jdk}). */
    public static final class Child {
        public static void main(String[] args) throws Exception {
            if (args[0].equals("jdk")) {
                OpenSsl.isAvailable(); // Netty asks the JDK itself, before TlsProviders can
            }
            SslProvider provider = TlsProviders.preferred();
            System.out.println("probe provider left: " + (Security.getProvider(JdkTlsVersionProbe.PROVIDER_NAME) != null));
            System.out.println("netty provider: " + provider + " (" + OpenSsl.isAvailable() + ")");
            System.out.println("netty openssl cipher suites: " + OpenSsl.availableJavaCipherSuites());
            SslContext openssl = SslContextBuilder.forClient().sslProvider(provider).build();
            System.out.println("netty client cipher suites: " + openssl.cipherSuites());
            SSLEngine engine = openssl.newEngine(ByteBufAllocator.DEFAULT);
            System.out.println("netty client protocols: " + Arrays.toString(engine.getEnabledProtocols()));
            System.out.println("netty client engine cipher suites: " + Arrays.toString(engine.getEnabledCipherSuites()));
            // Netty's JDK contexts take their defaults from the same initialisers (and load the JDK's handshake: the
            // class-load log is read up to here).
            Marker.loaded();
            SslContext jdk = SslContextBuilder.forClient().sslProvider(SslProvider.JDK).build();
            System.out.println("netty jdk cipher suites: " + jdk.cipherSuites());
            System.out.println("netty jdk protocols: "
                    + Arrays.toString(jdk.newEngine(ByteBufAllocator.DEFAULT).getEnabledProtocols()));
        }
    }
}
