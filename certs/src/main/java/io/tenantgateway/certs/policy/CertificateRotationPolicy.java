package io.tenantgateway.certs.policy;

import static java.util.Objects.requireNonNull;

import java.security.GeneralSecurityException;
import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * What to do next with a self-managed CA and the serving certificate it signs: nothing, issue both, renew the serving
 * certificate, rotate the CA, or drop expired CAs from the published bundle. Pure: the decision depends only on the
 * certificates, the settings and the injected clock, so every agent looking at the same certificates decides the
 * same thing.
 *
 * <p>The rules, in order:
 * <ol>
 *   <li>no signing CA (or it expired): {@link Action#ISSUE} a new CA and serving certificate;</li>
 *   <li>the signing CA has less than one serving-certificate validity left ({@link #caRenewBefore()}):
 *       {@link Action#ROTATE_CA}: a new CA goes first in the bundle, the old one stays in it (so callers that still
 *       trust only the old one keep working), and the serving certificate stays as it is (renewed by the old CA when
 *       it is due itself: the new CA is not trusted anywhere yet);</li>
 *   <li>the serving certificate is missing, expired, for other names, not signed by a CA of the bundle, or has less
 *       than {@code renewBefore} left: {@link Action#RENEW} it from the signing CA;</li>
 *   <li>the serving certificate is signed by an older CA of the bundle and the signing CA has been published for
 *       {@code caOverlap} (time for every webhook configuration to trust it): {@link Action#RENEW} from it;</li>
 *   <li>a CA other than the signing one expired and signs nothing served: {@link Action#PRUNE} it;</li>
 *   <li>otherwise {@link Action#KEEP}, with the instant the next rule comes due.</li>
 * </ol>
 * A CA counts as published {@code publishDelay} after its {@code notBefore} (certificates are backdated by that much
 * when they are made).
 *
 * @param leafValidity how long a new serving certificate is valid
 * @param renewBefore renew the serving certificate once less than this is left
 * @param caValidity how long a new CA is valid
 * @param caOverlap how long a new CA is published next to the old one before it signs the served certificate
 * @param publishDelay how far {@code notBefore} of a new CA lies before its creation (the backdate)
 * @param dnsNames the names the serving certificate must carry (exactly these)
 * @param clock the time source
 */
public record CertificateRotationPolicy(Duration leafValidity, Duration renewBefore, Duration caValidity,
        Duration caOverlap, Duration publishDelay, List<String> dnsNames, Clock clock) {

    /** What to do. */
    public enum Action {
        /** Nothing is due. */
        KEEP,
        /** Create a new CA and a serving certificate signed by it. */
        ISSUE,
        /** Put a new CA first in the bundle (keeping the old CAs), then continue with the serving certificate. */
        ROTATE_CA,
        /** Issue a new serving certificate (fresh key) from the signing CA. */
        RENEW,
        /** Remove expired CAs that sign nothing served from the bundle. */
        PRUNE
    }

    /**
     * The certificates as stored.
     *
     * @param signingCa the CA whose key is stored, or {@code null} when there is none (or it does not match)
     * @param bundle the published CAs ({@code ca.crt}), the signing CA among them; may be empty
     * @param leaf the serving certificate, or {@code null} when there is none usable
     */
    public record State(X509Certificate signingCa, List<X509Certificate> bundle, X509Certificate leaf) {
        public State {
            bundle = List.copyOf(requireNonNull(bundle, "bundle"));
        }
    }

    /**
     * @param action what to do now
     * @param reason why, for logs and Events ({@code serving certificate needs renewal before 30d: 12d 4h left ...})
     * @param renewLeafFirst with {@link Action#ROTATE_CA}: renew the serving certificate from the old CA in the same
     *     write (it is due, and the new CA is not trusted yet)
     * @param nextCheck with {@link Action#KEEP}: when the next rule comes due
     */
    public record Decision(Action action, String reason, boolean renewLeafFirst, Instant nextCheck) {
        public Decision {
            requireNonNull(action, "action");
            requireNonNull(reason, "reason");
            requireNonNull(nextCheck, "nextCheck");
        }
    }

    public CertificateRotationPolicy {
        requireNonNull(leafValidity, "leafValidity");
        requireNonNull(renewBefore, "renewBefore");
        requireNonNull(caValidity, "caValidity");
        requireNonNull(caOverlap, "caOverlap");
        requireNonNull(publishDelay, "publishDelay");
        requireNonNull(clock, "clock");
        dnsNames = List.copyOf(requireNonNull(dnsNames, "dnsNames"));
        if (leafValidity.isNegative() || leafValidity.isZero()) {
            throw new IllegalArgumentException("leafValidity: " + leafValidity + " (expected: > 0)");
        }
        if (renewBefore.isNegative() || renewBefore.isZero() || renewBefore.compareTo(leafValidity) >= 0) {
            throw new IllegalArgumentException("renewBefore: " + renewBefore + " (expected: > 0 and < the validity "
                    + leafValidity + ")");
        }
        if (caValidity.compareTo(leafValidity.multipliedBy(2)) < 0) {
            throw new IllegalArgumentException("caValidity: " + caValidity + " (expected: at least twice the"
                    + " validity " + leafValidity + ": a CA is replaced once less than one validity is left)");
        }
        if (caOverlap.isNegative() || publishDelay.isNegative()) {
            throw new IllegalArgumentException("caOverlap/publishDelay: " + caOverlap + "/" + publishDelay
                    + " (expected: >= 0)");
        }
        if (dnsNames.isEmpty()) {
            throw new IllegalArgumentException("dnsNames: empty (expected: the webhook Service's names)");
        }
    }

    /** A CA is replaced once it has less than one serving-certificate validity left. */
    public Duration caRenewBefore() {
        return leafValidity;
    }

    public Decision decide(State state) {
        requireNonNull(state, "state");
        Instant now = clock.instant();
        X509Certificate ca = state.signingCa();
        if (ca == null) {
            return act(Action.ISSUE, "no CA with its key stored");
        }
        if (!now.isBefore(ca.getNotAfter().toInstant())) {
            return act(Action.ISSUE, "CA " + subject(ca) + " expired at " + ca.getNotAfter().toInstant());
        }
        String leafProblem = leafProblem(state, now);
        boolean leafDue = leafProblem != null;
        RenewalPolicy.Status caStatus = new RenewalPolicy(caRenewBefore(), clock).evaluate(ca);
        if (caStatus.needsRenewal()) {
            return new Decision(Action.ROTATE_CA, "CA " + subject(ca) + " " + caStatus.describe()
                    + (leafDue ? "; " + leafProblem : ""), leafDue, now);
        }
        if (leafDue) {
            return act(Action.RENEW, leafProblem);
        }
        X509Certificate leaf = state.leaf();
        Instant published = ca.getNotBefore().toInstant().plus(publishDelay).plus(caOverlap);
        if (!signs(ca, leaf) && !now.isBefore(published)) {
            return act(Action.RENEW, "serving certificate moves to the new CA " + subject(ca) + " (published "
                    + RenewalPolicy.format(Duration.between(published.minus(caOverlap), now)) + " ago)");
        }
        List<X509Certificate> expired = new ArrayList<>();
        for (X509Certificate other : state.bundle()) {
            if (!other.equals(ca) && !now.isBefore(other.getNotAfter().toInstant()) && !signs(other, leaf)) {
                expired.add(other);
            }
        }
        if (!expired.isEmpty()) {
            return act(Action.PRUNE, "expired CA " + subject(expired.get(0)) + (expired.size() > 1 ? " and "
                    + (expired.size() - 1) + " more" : "") + " still published");
        }
        // Nothing due: the earliest instant a rule above comes due.
        Instant next = leaf.getNotAfter().toInstant().minus(renewBefore);
        next = earliest(next, ca.getNotAfter().toInstant().minus(caRenewBefore()));
        if (!signs(ca, leaf)) {
            next = earliest(next, published);
        }
        for (X509Certificate other : state.bundle()) {
            if (!other.equals(ca)) {
                next = earliest(next, other.getNotAfter().toInstant());
            }
        }
        return new Decision(Action.KEEP, "serving certificate " + new RenewalPolicy(renewBefore, clock)
                .evaluate(leaf).describe() + ", CA " + caStatus.describe(), false, next.isBefore(now) ? now : next);
    }

    /** Why the serving certificate must be replaced now, or {@code null} when it may stay. */
    private String leafProblem(State state, Instant now) {
        X509Certificate leaf = state.leaf();
        if (leaf == null) {
            return "no serving certificate";
        }
        Set<String> names = dnsNames(leaf);
        if (!names.equals(new TreeSet<>(dnsNames))) {
            return "serving certificate names " + names + " differ from " + new TreeSet<>(dnsNames);
        }
        if (state.bundle().stream().noneMatch(ca -> signs(ca, leaf))) {
            return "serving certificate " + subject(leaf) + " is not signed by a published CA";
        }
        if (now.isBefore(leaf.getNotBefore().toInstant())) {
            return "serving certificate " + subject(leaf) + " is not valid before " + leaf.getNotBefore().toInstant();
        }
        RenewalPolicy.Status status = new RenewalPolicy(renewBefore, clock).evaluate(leaf);
        return status.needsRenewal() ? "serving certificate " + status.describe() : null;
    }

    private Decision act(Action action, String reason) {
        return new Decision(action, reason, false, clock.instant());
    }

    /** Whether {@code ca} issued {@code certificate} (issuer name and signature). */
    public static boolean signs(X509Certificate ca, X509Certificate certificate) {
        if (ca == null || certificate == null
                || !ca.getSubjectX500Principal().equals(certificate.getIssuerX500Principal())) {
            return false;
        }
        try {
            certificate.verify(ca.getPublicKey());
            return true;
        } catch (GeneralSecurityException e) {
            return false;
        }
    }

    private static Set<String> dnsNames(X509Certificate certificate) {
        Set<String> names = new TreeSet<>();
        try {
            Collection<List<?>> entries = certificate.getSubjectAlternativeNames();
            if (entries != null) {
                for (List<?> entry : entries) {
                    if (Integer.valueOf(2).equals(entry.get(0))) {
                        names.add(String.valueOf(entry.get(1)));
                    }
                }
            }
        } catch (CertificateParsingException e) {
            // An unreadable SAN extension means names that differ: the certificate is renewed.
            names.add("<unreadable: " + e.getMessage() + ">");
        }
        return names;
    }

    private static Instant earliest(Instant a, Instant b) {
        return a.isBefore(b) ? a : b;
    }

    private static String subject(X509Certificate certificate) {
        return "'" + certificate.getSubjectX500Principal().getName() + "'";
    }
}
