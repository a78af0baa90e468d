package io.tenantgateway.agent.cli;

/**
 * A failure caused by the user's input; the CLI prints only its message and exits {@link ExitCodes#USAGE}.
 *
 * @deprecated use {@link io.tenantgateway.common.config.ConfigException}, the one type that means bad user input
 *     wherever it is found (this one counts only where the CLI sees it, not in a part that starts in the
 *     background); to be deleted once its last users are converted
 */
@Deprecated
public final class UserException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public UserException(String message) {
        super(message);
    }

    public UserException(String message, Throwable cause) {
        super(message, cause);
    }
}
