package io.tenantgateway.agent.cli;

import io.tenantgateway.common.config.ConfigException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import picocli.CommandLine;
import picocli.CommandLine.IDefaultValueProvider;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * {@code --config FILE}: a YAML map whose keys are flag names without the leading dashes
 * ({@code proxy-server-host: konnectivity.example.com}, {@code dial-allow: [10.96.0.0/12, "*.svc"]}). Values become
 * the flags' defaults, so a flag given on the command line still wins. Unknown keys are an error that names the
 * nearest valid one: a typo in a config file should not be silently ignored.
 */
public final class ConfigFileDefaults implements IDefaultValueProvider {
    private final Path file;
    private final Map<String, String> values;

    private ConfigFileDefaults(Path file, Map<String, String> values) {
        this.file = file;
        this.values = values;
    }

    /**
     * Installs the file named by {@code --config} in {@code args} (if any) as {@code command}'s defaults.
     *
     * @throws ConfigException when the file is missing, not YAML, or has a key that is not a flag
     */
    public static void install(CommandLine command, String... args) {
        Path file = configArgument(args);
        if (file == null) {
            return;
        }
        ConfigFileDefaults defaults = load(file);
        Set<String> known = command.getCommandSpec().options().stream()
                .flatMap(option -> java.util.Arrays.stream(option.names()))
                .filter(name -> name.startsWith("--")).map(name -> name.substring(2))
                .collect(Collectors.toCollection(TreeSet::new));
        for (String key : defaults.values.keySet()) {
            if (!known.contains(key) || key.equals("config")) {
                known.remove("config");
                throw ConfigException.of("--config", file + ": unknown key '" + key + "' ("
                        + GoFlags.nearest(key, known).map(name -> "did you mean " + name + "?")
                                .orElse("expected one of the flag names without dashes, e.g. proxy-server-host;"
                                        + " see --help") + ")");
            }
        }
        command.setDefaultValueProvider(defaults);
    }

    private static Path configArgument(String... args) {
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--config") && i + 1 < args.length) {
                return Path.of(args[i + 1]);
            }
            if (args[i].startsWith("--config=")) {
                return Path.of(args[i].substring("--config=".length()));
            }
        }
        return null;
    }

    static ConfigFileDefaults load(Path file) {
        if (!Files.isRegularFile(file)) {
            throw ConfigException.of("--config", file + ": file not found");
        }
        Object parsed = Yaml.parse(file);
        if (parsed == null) {
            return new ConfigFileDefaults(file, Map.of());
        }
        if (!(parsed instanceof Map<?, ?> raw)) {
            throw new ConfigException("--config", file + ": top level is a " + parsed.getClass().getSimpleName(),
                    "a map of flag names to values");
        }
        Map<String, String> values = new java.util.LinkedHashMap<>();
        raw.forEach((key, value) -> values.put(String.valueOf(key), value instanceof List<?> list
                ? list.stream().map(String::valueOf).collect(Collectors.joining(","))
                : String.valueOf(value)));
        return new ConfigFileDefaults(file, values);
    }

    /**
     * The YAML parser, in a class of its own so that Jackson is loaded only when {@code --config} is given: the
     * agent's footprint (a pure tunnel loads no Jackson; agent/REFERENCE.md, "Memory budget").
     */
    private static final class Yaml {
        static Object parse(Path file) {
            try {
                return tools.jackson.dataformat.yaml.YAMLMapper.builder().build()
                        .readValue(Files.readString(file), Object.class);
            } catch (IOException | tools.jackson.core.JacksonException e) {
                throw ConfigException.of("--config", file + ": not valid YAML: "
                        + String.valueOf(e.getMessage()).lines().findFirst().orElse(""), e);
            }
        }
    }

    @Override
    public String defaultValue(ArgSpec argSpec) {
        if (argSpec instanceof OptionSpec option) {
            for (String name : option.names()) {
                if (name.startsWith("--") && values.containsKey(name.substring(2))) {
                    return values.get(name.substring(2));
                }
            }
        }
        return null;
    }

    @Override
    public String toString() {
        return "config file " + file;
    }
}
