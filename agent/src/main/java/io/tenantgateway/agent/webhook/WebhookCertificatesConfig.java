package io.tenantgateway.agent.webhook;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.certs.CertificateRequest;
import io.tenantgateway.certs.policy.CertificateRotationPolicy;
import io.tenantgateway.common.config.ConfigException;
import io.tenantgateway.common.time.GoDuration;
import java.time.Clock;
import java.time.Duration;
import java.util.List;

/**
 * {@code --webhook-tls-self-managed}: the agent keeps a CA and the webhook's serving certificate in a Secret,
 * creating and rotating them itself. Validated here; every message names the flag (a {@link ConfigException}).
 *
 * @param secretNamespace namespace of {@code --webhook-tls-secret}
 * @param secretName name of {@code --webhook-tls-secret}
 * @param serviceNamespace namespace of {@code --webhook-service}
 * @param serviceName name of {@code --webhook-service}
 * @param validity {@code --webhook-tls-validity}: a new serving certificate's validity
 * @param renewBefore {@code --webhook-tls-renew-before}: renew once less than this is left
 * @param caValidity {@code --webhook-ca-validity}: a new CA's validity; replaced once less than one {@code validity}
 *     is left
 * @param caOverlap {@code --webhook-ca-overlap} (hidden): how long a new CA is published next to the old one before it
 *     signs the served certificate
 */
public record WebhookCertificatesConfig(String secretNamespace, String secretName, String serviceNamespace,
        String serviceName, Duration validity, Duration renewBefore, Duration caValidity, Duration caOverlap) {

    public static final String DEFAULT_SERVICE = "kube-system/tenant-gateway-webhook";
    public static final String DEFAULT_VALIDITY = "8760h";
    public static final String DEFAULT_RENEW_BEFORE = "720h";
    public static final String DEFAULT_CA_VALIDITY = "87600h";
    public static final String DEFAULT_CA_OVERLAP = "1h";
    /** The Service's domain: names end in {@code .svc.cluster.local} too, as kube-dns serves them. */
    static final String CLUSTER_DOMAIN = "cluster.local";

    /** Kubernetes object names (RFC 1123 subdomain) and namespaces (RFC 1123 label). */
    private static final String NAME = "[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?";
    private static final String LABEL = "[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?";

    public WebhookCertificatesConfig {
        checkName("--webhook-tls-secret", secretNamespace, secretName, NAME);
        // The Service's name is a DNS label: it becomes the first label of the certificate's names.
        checkName("--webhook-service", serviceNamespace, serviceName, LABEL);
        positive("--webhook-tls-validity", validity);
        positive("--webhook-tls-renew-before", renewBefore);
        requireNonNull(caValidity, "caValidity");
        requireNonNull(caOverlap, "caOverlap");
        if (renewBefore.compareTo(validity) >= 0) {
            throw new ConfigException("--webhook-tls-renew-before", GoDuration.format(renewBefore),
                    "< --webhook-tls-validity " + GoDuration.format(validity));
        }
        if (caValidity.compareTo(validity.multipliedBy(2)) < 0) {
            throw new ConfigException("--webhook-ca-validity", GoDuration.format(caValidity),
                    ">= 2 x --webhook-tls-validity " + GoDuration.format(validity)
                    + "; the CA is replaced once less than one certificate validity is left");
        }
        if (caOverlap.isNegative()) {
            throw new ConfigException("--webhook-ca-overlap", GoDuration.format(caOverlap), ">= 0");
        }
    }

    /**
     * Parses the flags' text.
     *
     * @param secret {@code NAMESPACE/NAME} of {@code --webhook-tls-secret}
     * @param service {@code NAMESPACE/NAME} of {@code --webhook-service}
     */
    public static WebhookCertificatesConfig parse(String secret, String service, String validity, String renewBefore,
            String caValidity, String caOverlap) {
        String[] secretParts = split("--webhook-tls-secret", secret, "kube-system/tenant-gateway-webhook-tls");
        String[] serviceParts = split("--webhook-service", service, DEFAULT_SERVICE);
        return new WebhookCertificatesConfig(secretParts[0], secretParts[1], serviceParts[0], serviceParts[1],
                GoDuration.parse("--webhook-tls-validity", validity),
                GoDuration.parse("--webhook-tls-renew-before", renewBefore),
                GoDuration.parse("--webhook-ca-validity", caValidity),
                GoDuration.parse("--webhook-ca-overlap", caOverlap));
    }

    /**
     * The names kube-apiserver and in-cluster callers reach the Service by: {@code name}, {@code name.ns},
     * {@code name.ns.svc} (what the apiserver dials for a webhook {@code service} reference) and
     * {@code name.ns.svc.cluster.local}.
     */
    public List<String> dnsNames() {
        String svc = serviceName + "." + serviceNamespace + ".svc";
        return List.of(serviceName, serviceName + "." + serviceNamespace, svc, svc + "." + CLUSTER_DOMAIN);
    }

    /** {@code NAMESPACE/NAME} of the Secret. */
    public String secret() {
        return secretNamespace + "/" + secretName;
    }

    /** {@code NAMESPACE/NAME} of the Service. */
    public String service() {
        return serviceNamespace + "/" + serviceName;
    }

    /** The rotation rules these settings give. */
    public CertificateRotationPolicy policy(Clock clock) {
        return new CertificateRotationPolicy(validity, renewBefore, caValidity, caOverlap,
                CertificateRequest.DEFAULT_BACKDATE, dnsNames(), clock);
    }

    /** One line for the startup log. */
    public String describe() {
        return "secret=" + secret() + " service=" + service() + " validity=" + GoDuration.format(validity)
                + " renew-before=" + GoDuration.format(renewBefore) + " ca-validity=" + GoDuration.format(caValidity)
                + " ca-overlap=" + GoDuration.format(caOverlap);
    }

    private static String[] split(String flag, String value, String example) {
        requireNonNull(value, flag);
        int slash = value.indexOf('/');
        if (slash <= 0 || slash == value.length() - 1 || value.indexOf('/', slash + 1) >= 0) {
            throw new ConfigException(flag, value, "NAMESPACE/NAME, e.g. " + example);
        }
        return new String[] {value.substring(0, slash), value.substring(slash + 1)};
    }

    private static void checkName(String flag, String namespace, String name, String namePattern) {
        requireNonNull(namespace, flag);
        requireNonNull(name, flag);
        if (!namespace.matches(LABEL) || !name.matches(namePattern)) {
            throw new ConfigException(flag, namespace + "/" + name, "NAMESPACE/NAME in lower-case letters, digits"
                    + " and '-'" + (namePattern.equals(NAME) ? " or '.'" : ""));
        }
    }

    private static void positive(String flag, Duration value) {
        requireNonNull(value, flag);
        if (value.isNegative() || value.isZero()) {
            throw new ConfigException(flag, GoDuration.format(value), "> 0");
        }
    }
}
