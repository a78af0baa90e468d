package io.tenantgateway.webhook.policy;

/**
 * The admission object is not a Pod the policy can read (a field of the wrong type, a quantity that does not
 * parse). HAMi's decoder fails the same requests; the policy answers them as errored 400 with this message.
 */
public final class UndecodablePodException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public UndecodablePodException(String message) {
        super(message);
    }
}
