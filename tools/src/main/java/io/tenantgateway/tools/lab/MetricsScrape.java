package io.tenantgateway.tools.lab;

import static java.util.Objects.requireNonNull;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One Prometheus text exposition as the lab reads it from a {@code /metrics} page, the way Prometheus would: each
 * sample's name, labels (unescaped) and value; comments and blank lines skipped.
 *
 * @param samples in the order of the page
 */
record MetricsScrape(List<Sample> samples) {
    /** {@code name{labels} value [timestamp]}. */
    private static final Pattern SAMPLE = Pattern.compile(
            "^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\\{(.*)})?\\s+(\\S+)(?:\\s+\\S+)?$");
    /** {@code name="value"} with {@code \\}, {@code \"} and {@code \n} escaped, then a comma or the end. */
    private static final Pattern LABEL = Pattern.compile(
            "\\s*([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\"\\s*,?");

    /** One sample: {@code name{labels} value}. */
    record Sample(String name, Map<String, String> labels, double value) {
        Sample {
            requireNonNull(name, "name");
            labels = Map.copyOf(labels);
        }
    }

    MetricsScrape {
        samples = List.copyOf(samples);
    }

    /**
     * Reads {@code text}.
     *
     * @throws IllegalArgumentException at a line that is neither a comment nor a sample
     */
    static MetricsScrape parse(String text) {
        List<Sample> out = new ArrayList<>();
        List<String> lines = text.lines().toList();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            Matcher sample = SAMPLE.matcher(line);
            if (!sample.matches()) {
                throw new IllegalArgumentException("line " + (i + 1) + ": " + line + " (expected: name{labels} value)");
            }
            Map<String, String> labels = new LinkedHashMap<>();
            if (sample.group(2) != null) {
                Matcher label = LABEL.matcher(sample.group(2));
                int end = 0;
                while (label.find() && label.start() == end) {
                    labels.put(label.group(1), unescape(label.group(2)));
                    end = label.end();
                }
                if (end != sample.group(2).length()) {
                    throw new IllegalArgumentException("line " + (i + 1) + ": labels " + sample.group(2)
                            + " (expected: name=\"value\",…)");
                }
            }
            out.add(new Sample(sample.group(1), labels, parseValue(sample.group(3))));
        }
        return new MetricsScrape(out);
    }

    /** The samples named {@code name} whose labels include every one of {@code labels}. */
    List<Sample> find(String name, Map<String, String> labels) {
        return samples.stream().filter(s -> s.name().equals(name)
                && s.labels().entrySet().containsAll(labels.entrySet())).toList();
    }

    /** The value of the one sample {@link #find} finds, when it finds exactly one. */
    Optional<Double> value(String name, Map<String, String> labels) {
        List<Sample> found = find(name, labels);
        return found.size() == 1 ? Optional.of(found.get(0).value()) : Optional.empty();
    }

    private static double parseValue(String text) {
        return switch (text) {
            case "+Inf" -> Double.POSITIVE_INFINITY;
            case "-Inf" -> Double.NEGATIVE_INFINITY;
            case "NaN" -> Double.NaN;
            default -> Double.parseDouble(text);
        };
    }

    private static String unescape(String value) {
        StringBuilder out = new StringBuilder(value.length());
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c == '\\' && i + 1 < value.length()) {
                char next = value.charAt(++i);
                out.append(next == 'n' ? '\n' : next);
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }
}
