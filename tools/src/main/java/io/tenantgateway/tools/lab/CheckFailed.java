package io.tenantgateway.tools.lab;

/** A check's expectation did not hold; the message is the evidence line of the FAIL. */
final class CheckFailed extends Exception {
    private static final long serialVersionUID = 1L;

    CheckFailed(String message) {
        super(message);
    }
}
