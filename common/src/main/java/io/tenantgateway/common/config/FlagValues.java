package io.tenantgateway.common.config;

import static java.util.Objects.requireNonNull;

import java.util.Arrays;
import java.util.Locale;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * Enum constants as flags spell them: the name in lower case, {@code '-'} for {@code '_'} ({@code DEVICE_PLUGIN}:
 * {@code device-plugin}). The spelling is derived, so a constant and its flag value cannot drift apart; renaming a
 * constant renames its value.
 */
public final class FlagValues {
    private FlagValues() {
    }

    /** {@code constant}'s flag value. */
    public static String of(Enum<?> constant) {
        return constant.name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    /** The constant of {@code type} spelled {@code text} (any case, surrounding white space ignored), if any. */
    public static <E extends Enum<E>> Optional<E> find(Class<E> type, String text) {
        if (text == null) {
            return Optional.empty();
        }
        String wanted = text.strip();
        return Arrays.stream(type.getEnumConstants()).filter(constant -> of(constant).equalsIgnoreCase(wanted))
                .findFirst();
    }

    /** Every flag value of {@code type} in declaration order, joined by {@code separator}: what a message expects. */
    public static String list(Class<? extends Enum<?>> type, String separator) {
        requireNonNull(separator, "separator");
        return Arrays.stream(type.getEnumConstants()).map(FlagValues::of).collect(Collectors.joining(separator));
    }
}
