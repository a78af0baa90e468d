package io.tenantgateway.certs;

import static java.util.Objects.requireNonNull;

import java.math.BigInteger;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x500.X500NameBuilder;
import org.bouncycastle.asn1.x500.style.BCStyle;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.CertIOException;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509ExtensionUtils;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.ContentSigner;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * A certificate authority held in memory: creates itself (self-signed) or is loaded from a CA bundle, and issues
 * server and client leaves. Keys never leave the process unless the caller writes them with {@link Pem}.
 *
 * <p>Uses the JDK's providers for key generation and signing; BouncyCastle only builds and encodes the
 * certificates, so nothing registers a global security provider.
 */
public final class CertificateAuthority {
    public static final Duration DEFAULT_CA_VALIDITY = Duration.ofDays(3650);

    private final CertBundle bundle;
    private final Clock clock;
    private final SecureRandom random;

    private CertificateAuthority(CertBundle bundle, Clock clock, SecureRandom random) {
        this.bundle = bundle;
        this.clock = clock;
        this.random = random;
        X509Certificate cert = bundle.leaf();
        if (cert.getBasicConstraints() < 0) {
            throw new IllegalArgumentException("certificate " + cert.getSubjectX500Principal().getName()
                    + " is not a CA (basicConstraints CA:FALSE); expected a CA certificate");
        }
    }

    /** Creates a self-signed CA valid from now (backdated) for {@code validity}. */
    public static CertificateAuthority create(String commonName, KeyAlgorithm algorithm, Duration validity,
            Clock clock) {
        requireNonNull(commonName, "commonName");
        requireNonNull(algorithm, "algorithm");
        requireNonNull(validity, "validity");
        requireNonNull(clock, "clock");
        SecureRandom random = new SecureRandom();
        KeyPair keyPair = algorithm.generate(random);
        X500Name subject = name(commonName, List.of());
        Instant now = clock.instant();
        try {
            X509v3CertificateBuilder builder = new JcaX509v3CertificateBuilder(subject, serial(random),
                    Date.from(now.minus(CertificateRequest.DEFAULT_BACKDATE)), Date.from(now.plus(validity)),
                    subject, keyPair.getPublic());
            JcaX509ExtensionUtils extensions = new JcaX509ExtensionUtils();
            builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(0));
            builder.addExtension(Extension.keyUsage, true,
                    new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign | KeyUsage.digitalSignature));
            builder.addExtension(Extension.subjectKeyIdentifier, false,
                    extensions.createSubjectKeyIdentifier(keyPair.getPublic()));
            builder.addExtension(Extension.authorityKeyIdentifier, false,
                    extensions.createAuthorityKeyIdentifier(keyPair.getPublic()));
            X509Certificate cert = sign(builder, keyPair.getPrivate());
            return new CertificateAuthority(new CertBundle(List.of(cert), keyPair.getPrivate()), clock, random);
        } catch (CertIOException | GeneralSecurityException | OperatorCreationException e) {
            throw new IllegalStateException("cannot create CA '" + commonName + "': " + e.getMessage(), e);
        }
    }

    /** Uses an existing CA certificate and key (for example ones read with {@link Pem}). */
    public static CertificateAuthority of(CertBundle caBundle, Clock clock) {
        return new CertificateAuthority(requireNonNull(caBundle, "caBundle"), requireNonNull(clock, "clock"),
                new SecureRandom());
    }

    /** The CA certificate and key. */
    public CertBundle bundle() {
        return bundle;
    }

    public X509Certificate certificate() {
        return bundle.leaf();
    }

    /** A trust bundle holding just this CA. */
    public TrustBundle trustBundle() {
        return new TrustBundle(List.of(bundle.leaf()));
    }

    /** Issues a leaf with a fresh key. The returned bundle's chain is {@code [leaf]}. */
    public CertBundle issue(CertificateRequest request) {
        requireNonNull(request, "request");
        KeyPair keyPair = request.keyAlgorithm().generate(random);
        return new CertBundle(List.of(sign(request, keyPair.getPublic())), keyPair.getPrivate());
    }

    /** Signs a certificate for a public key generated elsewhere. */
    public X509Certificate sign(CertificateRequest request, PublicKey subjectKey) {
        requireNonNull(request, "request");
        requireNonNull(subjectKey, "subjectKey");
        Instant now = clock.instant();
        Instant notAfter = now.plus(request.validity());
        Instant caNotAfter = bundle.leaf().getNotAfter().toInstant();
        if (notAfter.isAfter(caNotAfter)) {
            // A leaf outliving its CA fails validation once the CA expires; cap it instead of surprising later.
            notAfter = caNotAfter;
        }
        try {
            X509v3CertificateBuilder builder = new JcaX509v3CertificateBuilder(
                    X500Name.getInstance(bundle.leaf().getSubjectX500Principal().getEncoded()), serial(random),
                    Date.from(now.minus(request.backdate())), Date.from(notAfter),
                    name(request.commonName(), request.organizations()), subjectKey);
            JcaX509ExtensionUtils extensions = new JcaX509ExtensionUtils();
            builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
            int keyUsage = KeyUsage.digitalSignature;
            if ("RSA".equals(subjectKey.getAlgorithm())) {
                keyUsage |= KeyUsage.keyEncipherment;
            }
            builder.addExtension(Extension.keyUsage, true, new KeyUsage(keyUsage));
            builder.addExtension(Extension.extendedKeyUsage, false, new ExtendedKeyUsage(purposes(request.usage())));
            builder.addExtension(Extension.subjectKeyIdentifier, false,
                    extensions.createSubjectKeyIdentifier(subjectKey));
            builder.addExtension(Extension.authorityKeyIdentifier, false,
                    extensions.createAuthorityKeyIdentifier(bundle.leaf()));
            List<GeneralName> sans = new ArrayList<>();
            request.dnsNames().forEach(dns -> sans.add(new GeneralName(GeneralName.dNSName, dns)));
            for (String ip : request.ipAddresses()) {
                sans.add(new GeneralName(GeneralName.iPAddress, ip));
            }
            if (!sans.isEmpty()) {
                builder.addExtension(Extension.subjectAlternativeName, false,
                        new GeneralNames(sans.toArray(GeneralName[]::new)));
            }
            return sign(builder, bundle.privateKey());
        } catch (CertIOException | GeneralSecurityException | OperatorCreationException e) {
            throw new IllegalStateException("cannot issue certificate '" + request.commonName() + "': "
                    + e.getMessage(), e);
        }
    }

    private static KeyPurposeId[] purposes(CertificateRequest.Usage usage) {
        return switch (usage) {
            case SERVER -> new KeyPurposeId[] {KeyPurposeId.id_kp_serverAuth};
            case CLIENT -> new KeyPurposeId[] {KeyPurposeId.id_kp_clientAuth};
            case SERVER_AND_CLIENT -> new KeyPurposeId[] {KeyPurposeId.id_kp_serverAuth, KeyPurposeId.id_kp_clientAuth};
        };
    }

    private static X509Certificate sign(X509v3CertificateBuilder builder, PrivateKey signingKey)
            throws OperatorCreationException, GeneralSecurityException {
        ContentSigner signer = new JcaContentSignerBuilder(KeyAlgorithm.signatureAlgorithmFor(signingKey))
                .build(signingKey);
        return new JcaX509CertificateConverter().getCertificate(builder.build(signer));
    }

    private static X500Name name(String commonName, List<String> organizations) {
        X500NameBuilder name = new X500NameBuilder(BCStyle.INSTANCE);
        organizations.forEach(o -> name.addRDN(BCStyle.O, o));
        name.addRDN(BCStyle.CN, commonName);
        return name.build();
    }

    /** A random positive 128-bit serial (RFC 5280: positive, at most 20 octets; CA/B: at least 64 random bits). */
    private static BigInteger serial(SecureRandom random) {
        BigInteger serial;
        do {
            serial = new BigInteger(128, random);
        } while (serial.signum() == 0);
        return serial;
    }
}
