package io.tenantgateway.agent.cli;

/** A failure caused by the user's input; the CLI prints only its message and exits {@link ExitCodes#USAGE}. */
public final class UserException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public UserException(String message) {
        super(message);
    }

    public UserException(String message, Throwable cause) {
        super(message, cause);
    }
}
