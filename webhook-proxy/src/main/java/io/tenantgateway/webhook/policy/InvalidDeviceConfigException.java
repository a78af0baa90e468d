package io.tenantgateway.webhook.policy;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.common.config.ConfigException;
import tools.jackson.core.JacksonException;

/**
 * A {@code device-config.yaml} that is not used, with what kind of problem it is ({@link #problem()}, for a metric's
 * label); the message names the file or ConfigMap, the key, the value and what was expected.
 */
public final class InvalidDeviceConfigException extends ConfigException {
    private static final long serialVersionUID = 1L;

    /** What is wrong, as a metric label value. */
    public enum Problem {
        /** Larger than {@link DeviceConfig#MAX_BYTES}. */
        TOO_LARGE("too_large"),
        /** Not YAML at all. */
        NOT_YAML("not_yaml"),
        /** A ConfigMap without the {@code device-config.yaml} key. */
        NO_KEY("no_key"),
        /** The key's value is not text (a client stored another JSON type there). */
        NOT_TEXT("not_text"),
        /** YAML, but a key has a wrong type or a value out of range. */
        INVALID_VALUE("invalid_value");

        private final String label;

        Problem(String label) {
            this.label = label;
        }

        public String label() {
            return label;
        }
    }

    private final Problem problem;

    /** {@code source: value (expected: expected)}. */
    public InvalidDeviceConfigException(Problem problem, String source, Object value, String expected) {
        super(source, value, expected);
        this.problem = requireNonNull(problem, "problem");
    }

    private InvalidDeviceConfigException(Problem problem, String source, String detail, Throwable cause) {
        super(source, detail, cause, false);
        this.problem = requireNonNull(problem, "problem");
    }

    /** {@code source: detail}. */
    public static InvalidDeviceConfigException of(Problem problem, String source, String detail, Throwable cause) {
        return new InvalidDeviceConfigException(problem, source, detail, cause);
    }

    /**
     * {@code error} as a problem of {@code source}: its message kept when it already names the source, else
     * prefixed with it; an {@code InvalidDeviceConfigException} is returned as it is.
     */
    static InvalidDeviceConfigException of(Problem problem, String source, RuntimeException error) {
        if (error instanceof InvalidDeviceConfigException invalid) {
            return invalid;
        }
        String message = error instanceof JacksonException jackson ? jackson.getOriginalMessage() : error.getMessage();
        String prefix = source + ": ";
        return new InvalidDeviceConfigException(problem, source,
                message.startsWith(prefix) ? message.substring(prefix.length()) : message, error);
    }

    public Problem problem() {
        return problem;
    }
}
