package io.tenantgateway.webhook.policy;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.RoundingMode;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Kubernetes resource quantities ({@code 1}, {@code 3000}, {@code 2Gi}, {@code 500m}, {@code 1e3}) as exact
 * decimals, with the two integer views HAMi uses: {@link #value()} rounds up like Go's {@code Quantity.Value()},
 * {@link #exactLong()} succeeds only for whole numbers like {@code Quantity.AsInt64()}.
 */
public final class Quantity {
    /** The format the API server accepts (k8s.io/apimachinery resource.ErrFormatWrong). */
    public static final String FORMAT = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$";
    private static final Pattern NUMBER_AND_SUFFIX = Pattern.compile("^([+-]?(?:[0-9]+(?:\\.[0-9]*)?|\\.[0-9]+))(.*)$");
    private static final Pattern EXPONENT = Pattern.compile("^[eE]([-+]?[0-9]+)$");
    private static final Map<String, BigDecimal> SUFFIXES = Map.ofEntries(
            Map.entry("", BigDecimal.ONE),
            Map.entry("n", new BigDecimal("1e-9")), Map.entry("u", new BigDecimal("1e-6")),
            Map.entry("m", new BigDecimal("1e-3")), Map.entry("k", new BigDecimal("1e3")),
            Map.entry("M", new BigDecimal("1e6")), Map.entry("G", new BigDecimal("1e9")),
            Map.entry("T", new BigDecimal("1e12")), Map.entry("P", new BigDecimal("1e15")),
            Map.entry("E", new BigDecimal("1e18")),
            Map.entry("Ki", new BigDecimal(BigInteger.TWO.pow(10))), Map.entry("Mi", new BigDecimal(BigInteger.TWO.pow(20))),
            Map.entry("Gi", new BigDecimal(BigInteger.TWO.pow(30))), Map.entry("Ti", new BigDecimal(BigInteger.TWO.pow(40))),
            Map.entry("Pi", new BigDecimal(BigInteger.TWO.pow(50))), Map.entry("Ei", new BigDecimal(BigInteger.TWO.pow(60))));

    private final String text;
    private final BigDecimal amount;

    private Quantity(String text, BigDecimal amount) {
        this.text = text;
        this.amount = amount;
    }

    /** Parses a quantity; empty when the text is not one (the caller names the field in its error). */
    public static Optional<Quantity> parse(String text) {
        if (text == null) {
            return Optional.empty();
        }
        String trimmed = text.trim();
        Matcher matcher = NUMBER_AND_SUFFIX.matcher(trimmed);
        if (!matcher.matches()) {
            return Optional.empty();
        }
        BigDecimal number = new BigDecimal(matcher.group(1));
        String suffix = matcher.group(2);
        BigDecimal multiplier = SUFFIXES.get(suffix);
        if (multiplier == null) {
            Matcher exponent = EXPONENT.matcher(suffix);
            if (!exponent.matches()) {
                return Optional.empty();
            }
            int power = Integer.parseInt(exponent.group(1));
            if (Math.abs(power) > 30) {
                return Optional.empty();
            }
            multiplier = BigDecimal.ONE.scaleByPowerOfTen(power);
        }
        return Optional.of(new Quantity(trimmed, number.multiply(multiplier)));
    }

    /** A whole number of units, as HAMi writes them ({@code resource.NewQuantity(n, ...)} prints {@code "n"}). */
    public static String format(long units) {
        return Long.toString(units);
    }

    public BigDecimal amount() {
        return amount;
    }

    /** Rounded up to a whole number (Go {@code Quantity.Value()}), saturating at the long range. */
    public long value() {
        BigDecimal rounded = amount.setScale(0, RoundingMode.CEILING);
        if (rounded.compareTo(BigDecimal.valueOf(Long.MAX_VALUE)) > 0) {
            return Long.MAX_VALUE;
        }
        if (rounded.compareTo(BigDecimal.valueOf(Long.MIN_VALUE)) < 0) {
            return Long.MIN_VALUE;
        }
        return rounded.longValueExact();
    }

    /** The value when it is a whole number within the long range (Go {@code Quantity.AsInt64()}), else empty. */
    public Optional<Long> exactLong() {
        try {
            return Optional.of(amount.stripTrailingZeros().longValueExact());
        } catch (ArithmeticException e) {
            return Optional.empty();
        }
    }

    @Override
    public String toString() {
        return text;
    }
}
