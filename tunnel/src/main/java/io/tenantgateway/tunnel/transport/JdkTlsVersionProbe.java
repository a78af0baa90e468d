package io.tenantgateway.tunnel.transport;

import java.security.KeyManagementException;
import java.security.NoSuchAlgorithmException;
import java.security.NoSuchProviderException;
import java.security.Provider;
import java.security.SecureRandom;
import java.security.Security;
import java.util.function.BooleanSupplier;
import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLContextSpi;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLServerSocketFactory;
import javax.net.ssl.SSLSessionContext;
import javax.net.ssl.SSLSocketFactory;
import javax.net.ssl.TrustManager;

/**
 * Answers, while Netty's {@code OpenSsl} initialises, the one question its initialiser asks the JDK's TLS: does it
 * support and enable TLSv1.3 ({@code SslUtils}, to choose default cipher suites). Netty asks by making a default JDK
 * {@code SSLContext} and its parameters, which loads the JDK's TLS handshake machinery (its {@code SSLSocketImpl}, every
 * handshake message's producer and consumer: about 180 classes in all) that a tunnel on BoringSSL never runs.
 *
 * <p>How: a JCA provider placed first for {@code SSLContext.TLS} for the duration of {@link #answering}, then removed.
 * Its contexts give the JDK's own answer for the parameters (TLSv1.3 and TLSv1.2, JDK 11 and later) and hand
 * everything else (engines, sockets, sessions) to a JDK {@code SunJSSE} context made on first use, so a caller on
 * another thread in that window still gets a working context. Where {@code jdk.tls.client.protocols} or
 * {@code jdk.tls.server.protocols} is set, the JDK's answer could differ: then no provider is added and Netty asks the
 * JDK. {@code JdkTlsVersionProbeTest} checks in two JVMs that Netty's defaults come out the same either way.
 *
 * <p>Measured (BENCHMARKS.md, issue 35): the pure tunnel loads 181 classes fewer, RSS idle −1.1 MiB.
 */
final class JdkTlsVersionProbe {
    static final String PROVIDER_NAME = "TenantGatewayJdkTlsVersionProbe";
    /** What the JDK's {@code SunJSSE} enables by default since JDK 11 (TLSv1 and TLSv1.1 are disabled since 8u291). */
    private static final String[] PROTOCOLS = {"TLSv1.3", "TLSv1.2"};

    private JdkTlsVersionProbe() {
    }

    /** Runs {@code check} with the probe's provider first for {@code SSLContext.TLS} (see the class comment). */
    static boolean answering(BooleanSupplier check) {
        if (System.getProperty("jdk.tls.client.protocols") != null
                || System.getProperty("jdk.tls.server.protocols") != null) {
            return check.getAsBoolean();
        }
        boolean added = Security.insertProviderAt(new ProbeProvider(), 1) != -1;
        try {
            return check.getAsBoolean();
        } finally {
            if (added) {
                Security.removeProvider(PROVIDER_NAME);
            }
        }
    }

    private static final class ProbeProvider extends Provider {
        private static final long serialVersionUID = 1L;

        ProbeProvider() {
            super(PROVIDER_NAME, "1", "Answers Netty's TLSv1.3 question while OpenSsl initialises (tenant-gateway)");
            putService(new Service(this, "SSLContext", "TLS", ProbeContext.class.getName(), null, null) {
                @Override
                public Object newInstance(Object constructorParameter) {
                    return new ProbeContext();
                }
            });
        }
    }

    /** Parameters from {@link #PROTOCOLS}; the rest from a JDK context made on first use with the same managers. */
    private static final class ProbeContext extends SSLContextSpi {
        private KeyManager[] keyManagers;
        private TrustManager[] trustManagers;
        private SecureRandom random;
        private SSLContext jdk;

        @Override
        protected synchronized void engineInit(KeyManager[] km, TrustManager[] tm, SecureRandom sr) {
            keyManagers = km;
            trustManagers = tm;
            random = sr;
            jdk = null;
        }

        private synchronized SSLContext jdk() {
            if (jdk == null) {
                try {
                    SSLContext context = SSLContext.getInstance("TLS", "SunJSSE");
                    context.init(keyManagers, trustManagers, random);
                    jdk = context;
                } catch (NoSuchAlgorithmException | NoSuchProviderException | KeyManagementException e) {
                    throw new IllegalStateException("the JDK's TLS (SunJSSE) could not be initialised", e);
                }
            }
            return jdk;
        }

        @Override
        protected SSLParameters engineGetDefaultSSLParameters() {
            SSLParameters parameters = new SSLParameters();
            parameters.setProtocols(PROTOCOLS.clone());
            return parameters;
        }

        @Override
        protected SSLParameters engineGetSupportedSSLParameters() {
            return engineGetDefaultSSLParameters();
        }

        @Override
        protected SSLSocketFactory engineGetSocketFactory() {
            return jdk().getSocketFactory();
        }

        @Override
        protected SSLServerSocketFactory engineGetServerSocketFactory() {
            return jdk().getServerSocketFactory();
        }

        @Override
        protected SSLEngine engineCreateSSLEngine() {
            return jdk().createSSLEngine();
        }

        @Override
        protected SSLEngine engineCreateSSLEngine(String host, int port) {
            return jdk().createSSLEngine(host, port);
        }

        @Override
        protected SSLSessionContext engineGetServerSessionContext() {
            return jdk().getServerSessionContext();
        }

        @Override
        protected SSLSessionContext engineGetClientSessionContext() {
            return jdk().getClientSessionContext();
        }
    }
}
