package io.tenantgateway.common.config;

import static java.util.Objects.requireNonNull;

/**
 * A configuration value that is wrong: a flag, a {@code --config} key, a file a flag names, or a port a flag chose
 * that is taken. The message is one line in the project's form, {@code --flag: value (expected: …)}, and the CLI
 * prints only it and exits 2, wherever it is found: while the flags are read, or later in a part that starts in the
 * background. Any other exception is a bug (exit 70, with its stack trace).
 *
 * <p>It is an {@link IllegalArgumentException}, so code that validates arguments keeps its contract; only this type
 * (not every {@code IllegalArgumentException}) means "the user's input was wrong".
 */
public class ConfigException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    private final String flag;

    /**
     * {@code flag: value (expected: expected)}.
     *
     * @param flag the flag (with its dashes) or key the value came from
     * @param value the value as given
     * @param expected what would have been accepted
     */
    public ConfigException(String flag, Object value, String expected) {
        this(flag, value, expected, null);
    }

    public ConfigException(String flag, Object value, String expected, Throwable cause) {
        super(requireNonNull(flag, "flag") + ": " + value + " (expected: " + requireNonNull(expected, "expected")
                + ")", cause);
        this.flag = flag;
    }

    /** {@code flag: detail}, for a message that is not a value and what was expected ("file not found"). */
    protected ConfigException(String flag, String detail, Throwable cause, boolean unused) {
        super(requireNonNull(flag, "flag") + ": " + requireNonNull(detail, "detail"), cause);
        this.flag = flag;
    }

    /** {@code flag: detail}: the flag and what is wrong with its value, e.g. {@code --ca-cert: /x: file not found}. */
    public static ConfigException of(String flag, String detail) {
        return new ConfigException(flag, detail, null, false);
    }

    /** {@link #of(String, String)} with the exception that revealed it. */
    public static ConfigException of(String flag, String detail, Throwable cause) {
        return new ConfigException(flag, detail, cause, false);
    }

    /** The flag or key that held the wrong value. */
    public String flag() {
        return flag;
    }

    /** The first {@code ConfigException} in {@code error}'s causes (itself included), or {@code null}. */
    public static ConfigException in(Throwable error) {
        for (Throwable t = error; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof ConfigException config) {
                return config;
            }
        }
        return null;
    }
}
