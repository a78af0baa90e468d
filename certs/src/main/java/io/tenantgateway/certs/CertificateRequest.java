package io.tenantgateway.certs;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.common.config.ConfigException;
import org.bouncycastle.util.IPAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * What a leaf certificate should say. Built with {@link #server(String)} or {@link #client(String)}. A blank common
 * name or a DNS name or IP address that is not one is a {@link ConfigException}: they come from flags
 * ({@code certs init --server-ip}); the other checks guard the callers' own values.
 *
 * @param commonName subject CN
 * @param organizations subject O values (Kubernetes reads them as groups, e.g. {@code system:masters})
 * @param dnsNames DNS subject alternative names
 * @param ipAddresses IP subject alternative names, as literals ({@code 127.0.0.1}, {@code ::1})
 * @param usage server (serverAuth) or client (clientAuth) certificate
 * @param validity how long the certificate is valid from now
 * @param backdate how far notBefore lies in the past, so peers with a slow clock accept it at once
 * @param keyAlgorithm the new key's type
 */
public record CertificateRequest(
        String commonName,
        List<String> organizations,
        List<String> dnsNames,
        List<String> ipAddresses,
        Usage usage,
        Duration validity,
        Duration backdate,
        KeyAlgorithm keyAlgorithm) {

    public static final Duration DEFAULT_VALIDITY = Duration.ofDays(365);
    public static final Duration DEFAULT_BACKDATE = Duration.ofMinutes(5);

    /** Extended key usage of a leaf. */
    public enum Usage { SERVER, CLIENT, SERVER_AND_CLIENT }

    public CertificateRequest {
        requireNonNull(commonName, "commonName");
        requireNonNull(usage, "usage");
        requireNonNull(validity, "validity");
        requireNonNull(backdate, "backdate");
        requireNonNull(keyAlgorithm, "keyAlgorithm");
        if (commonName.isBlank()) {
            throw ConfigException.of("commonName", "blank (expected: a non-empty name)");
        }
        organizations = List.copyOf(organizations);
        dnsNames = List.copyOf(dnsNames);
        ipAddresses = List.copyOf(ipAddresses);
        if (validity.isNegative() || validity.isZero()) {
            throw new IllegalArgumentException("validity: " + validity + " (expected: > 0)");
        }
        if (backdate.isNegative()) {
            throw new IllegalArgumentException("backdate: " + backdate + " (expected: >= 0)");
        }
        for (String dns : dnsNames) {
            if (dns.isBlank() || dns.contains(" ") || dns.contains(",")) {
                throw new ConfigException("DNS name", "'" + dns + "'", "a host name such as svc.ns.svc");
            }
        }
        for (String ip : ipAddresses) {
            if (!IPAddress.isValid(ip)) {
                throw new ConfigException("IP address", "'" + ip + "'", "an IPv4 or IPv6 literal");
            }
        }
        if (usage != Usage.CLIENT && dnsNames.isEmpty() && ipAddresses.isEmpty()) {
            throw new IllegalArgumentException("server certificate " + commonName
                    + ": no DNS or IP names (expected: at least one subject alternative name)");
        }
    }

    public static Builder server(String commonName) {
        return new Builder(commonName, Usage.SERVER);
    }

    public static Builder client(String commonName) {
        return new Builder(commonName, Usage.CLIENT);
    }

    /** Mutable builder; {@link #build()} validates. */
    public static final class Builder {
        private final String commonName;
        private Usage usage;
        private final List<String> organizations = new ArrayList<>();
        private final List<String> dnsNames = new ArrayList<>();
        private final List<String> ipAddresses = new ArrayList<>();
        private Duration validity = DEFAULT_VALIDITY;
        private Duration backdate = DEFAULT_BACKDATE;
        private KeyAlgorithm keyAlgorithm = KeyAlgorithm.EC_P256;

        private Builder(String commonName, Usage usage) {
            this.commonName = commonName;
            this.usage = usage;
        }

        public Builder organizations(String... values) {
            organizations.addAll(List.of(values));
            return this;
        }

        public Builder dnsNames(String... values) {
            return dnsNames(List.of(values));
        }

        public Builder dnsNames(List<String> values) {
            dnsNames.addAll(values);
            return this;
        }

        public Builder ipAddresses(String... values) {
            return ipAddresses(List.of(values));
        }

        public Builder ipAddresses(List<String> values) {
            ipAddresses.addAll(values);
            return this;
        }

        /** Adds clientAuth to a server certificate or serverAuth to a client certificate. */
        public Builder alsoOtherUsage() {
            usage = Usage.SERVER_AND_CLIENT;
            return this;
        }

        public Builder validity(Duration value) {
            validity = value;
            return this;
        }

        public Builder backdate(Duration value) {
            backdate = value;
            return this;
        }

        public Builder keyAlgorithm(KeyAlgorithm value) {
            keyAlgorithm = value;
            return this;
        }

        public CertificateRequest build() {
            return new CertificateRequest(commonName, organizations, dnsNames, ipAddresses, usage, validity,
                    backdate, keyAlgorithm);
        }
    }
}
