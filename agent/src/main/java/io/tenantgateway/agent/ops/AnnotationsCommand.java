package io.tenantgateway.agent.ops;

import io.tenantgateway.agent.logging.TerminalSafeJson;
import io.tenantgateway.common.config.ConfigException;
import io.tenantgateway.common.text.PeerText;
import io.tenantgateway.hami.Annotations;
import io.tenantgateway.hami.HamiRelease;
import io.tenantgateway.hami.RegisterCodec;
import io.tenantgateway.hami.RegisterCodec.Result;
import io.tenantgateway.hami.RegisterVendor;
import io.tenantgateway.hami.RegisteredDevice;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.SerializationFeature;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * {@code tenant-gateway annotations}: HAMi's node register annotations, read and written exactly as a given HAMi
 * release's scheduler and device plugins do (codecs in {@link RegisterCodec}, vendors in {@link RegisterVendor}).
 * Bad input (a key that is no register key, unreadable stdin, more than {@value #MAX_STDIN_BYTES} bytes of it, a bad
 * {@code --hami-compat}, a value encode cannot write faithfully) is a {@link ConfigException}: one line, exit 2. What
 * a value holds reaches the terminal escaped: JSON through {@link TerminalSafeJson}, the table through
 * {@link PeerText#escape}.
 */
@Command(name = "annotations", mixinStandardHelpOptions = true,
        description = "Decode or encode HAMi node register annotations as a given HAMi release does.",
        subcommands = {AnnotationsCommand.Decode.class, AnnotationsCommand.Encode.class})
public final class AnnotationsCommand {
    /** The keys section of the help, made from hami's tables. */
    @Mixin
    AnnotationKeys.DecodeKeysHelp keys;

    private static final JsonMapper JSON = JsonMapper.builder(TerminalSafeJson.factory())
            .enable(SerializationFeature.INDENT_OUTPUT).build();
    /**
     * The most stdin read: 4 MiB, more than any Node an API server stores (etcd's default limit is 1.5 MiB an
     * object) and far more than a register value (annotations: 256 KiB an object).
     */
    static final int MAX_STDIN_BYTES = 4 * 1024 * 1024;

    /** {@code --hami-compat} as {@code run} and {@code webhook} read it. */
    static HamiRelease release(String text) {
        return io.tenantgateway.agent.webhook.WebhookFlags.parseHamiCompat(text);
    }

    /** All of {@code in}, when it is at most {@link #MAX_STDIN_BYTES} bytes (no more than that is read). */
    static String stdin(InputStream in) {
        byte[] bytes;
        try {
            bytes = in.readNBytes(MAX_STDIN_BYTES + 1);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        if (bytes.length > MAX_STDIN_BYTES) {
            throw ConfigException.of("stdin", "more than " + MAX_STDIN_BYTES + " bytes (expected: at most "
                    + MAX_STDIN_BYTES + " (4 MiB), more than any Node the API server stores)");
        }
        return new String(bytes, StandardCharsets.UTF_8);
    }

    @Command(name = "decode", mixinStandardHelpOptions = true,
            description = {"Decode HAMi node register annotations as the scheduler reads them.",
                "KEY=VALUE pairs, or '-' to read a Node object (kubectl get node X -o json) from stdin and decode"
                    + " every register annotation it carries and the devices HAMi derives from status.capacity.",
                "Prints one member per register annotation and, for the capacity-derived devices of every vendor,"
                    + " the one member status.capacity."},
            exitCodeListHeading = "%nExit codes:%n",
            exitCodeList = {" 0:every value decoded", " 1:a value has an error (HAMi's reader message is shown)",
                " 2:bad input (unknown key, stdin not a Node or more than 4 MiB, bad flag)"})
    public static final class Decode implements Callable<Integer> {
        /** The output member holding the devices HAMi's scheduler derives from the Node's capacity. */
        static final String CAPACITY_MEMBER = "status.capacity";

        @Spec
        CommandSpec spec;

        /** The keys section of the help, made from hami's tables. */
        @Mixin
        AnnotationKeys.DecodeKeysHelp keys;

        @Option(names = "--hami-compat", defaultValue = "v2.10", paramLabel = "v2.9|v2.10",
                description = "The HAMi release whose scheduler to follow. Default: ${DEFAULT-VALUE}.")
        String hamiCompat;

        @Option(names = "--output", defaultValue = "json", paramLabel = "json|table",
                description = "Output format. Default: ${DEFAULT-VALUE}.")
        String output;

        @Option(names = "--node", paramLabel = "NAME",
                description = "Node name (in the ids of Enflame DRS and capacity-derived devices, and in messages)."
                        + " Default: the Node's metadata.name, "
                        + "else 'node'.")
        String node;

        @Parameters(arity = "1..*", paramLabel = "KEY=VALUE|-", description = "Annotations to decode, or '-'.")
        List<String> inputs = new ArrayList<>();

        @Override
        public Integer call() {
            HamiRelease release = release(hamiCompat);
            if (!output.equals("json") && !output.equals("table")) {
                throw new ConfigException("--output", output, "json or table");
            }
            Map<String, Result> results = new LinkedHashMap<>();
            if (inputs.equals(List.of("-"))) {
                decodeNode(stdin(System.in), release, results);
            } else {
                String nodeName = node == null ? "node" : node;
                // Capacity resources are decoded together, after the annotations, as decodeNode reads status.capacity.
                Map<String, String> capacity = new LinkedHashMap<>();
                for (String input : inputs) {
                    int eq = input.indexOf('=');
                    if (eq <= 0) {
                        throw new ConfigException("KEY=VALUE", input, "KEY=VALUE with a HAMi node register key or "
                                + "capacity resource (see --help), or -");
                    }
                    String key = input.substring(0, eq);
                    if (RegisterVendor.forKey(key).isPresent()) {
                        results.put(key, RegisterCodec.decode(key, input.substring(eq + 1), release, nodeName));
                    } else if (AnnotationKeys.capacityVendor(key).isPresent()) {
                        capacity.put(key, input.substring(eq + 1));
                    } else {
                        throw AnnotationKeys.unknown(key, true);
                    }
                }
                results.putAll(AnnotationKeys.decodeCapacity(capacity, release, nodeName));
            }
            PrintWriter out = spec.commandLine().getOut();
            if (output.equals("json")) {
                out.println(toJson(results));
            } else {
                printTable(results, out);
            }
            out.flush();
            return results.values().stream().allMatch(Result::isOk) ? 0 : 1;
        }

        private void decodeNode(String text, HamiRelease release, Map<String, Result> results) {
            JsonNode root;
            try {
                root = JSON.readTree(text);
            } catch (JacksonException e) {
                throw ConfigException.of("stdin", "not JSON (expected: a Node object, as kubectl get node NAME "
                        + "-o json prints it): " + e.getOriginalMessage().lines().findFirst().orElse(""));
            }
            notANode(root).ifPresent(what -> {
                throw new ConfigException("stdin", what, "one Node object, kind: Node, as kubectl get node NAME -o "
                        + "json prints it");
            });
            String nodeName = node != null ? node : root.path("metadata").path("name").asText("node");
            results.putAll(RegisterCodec.decodeNode(texts(root.path("metadata").path("annotations")),
                    texts(root.path("status").path("capacity")), texts(root.path("metadata").path("labels")),
                    release, nodeName));
        }

        /**
         * What {@code root} is when it is not a Node: {@code kind} other than {@code Node} (a Pod, a NodeList), no
         * object, or an object with neither {@code kind} nor {@code metadata} ({@code {}}). An object without
         * {@code kind} but with a {@code metadata} object passes (a Node cut down by hand or by jq).
         */
        static Optional<String> notANode(JsonNode root) {
            if (root == null || root.isMissingNode()) {
                return Optional.of("no JSON value");
            }
            if (!root.isObject()) {
                return Optional.of("a JSON " + (root.isArray() ? "array" : root.isString() ? "string"
                        : root.isNumber() ? "number" : root.isBoolean() ? "boolean" : "null"));
            }
            JsonNode kind = root.get("kind");
            if (kind == null) {
                return root.path("metadata").isObject() ? Optional.empty()
                        : Optional.of("an object with neither kind nor metadata");
            }
            if (!kind.isString()) {
                return Optional.of("an object whose kind is no string");
            }
            return kind.asString().equals("Node") ? Optional.empty()
                    : Optional.of("kind " + PeerText.bound(kind.asString(), PeerText.VALUE_LIMIT));
        }

        private static Map<String, String> texts(JsonNode object) {
            Map<String, String> texts = new LinkedHashMap<>();
            object.properties().forEach(e -> texts.put(e.getKey(), e.getValue().asText()));
            return texts;
        }

        /**
         * One member per register annotation ({@code {"devices":[…]}} or {@code {"error":"…"}}), then, when any
         * capacity resource was read, the member {@value #CAPACITY_MEMBER} with every capacity-derived device in
         * the order of the vendor table and, when a vendor's capacity does not decode, {@code error}: each such
         * resource and its message, {@code "; "} between them.
         */
        static String toJson(Map<String, Result> results) {
            ObjectNode root = JSON.createObjectNode();
            List<RegisteredDevice> fromCapacity = new ArrayList<>();
            List<String> capacityErrors = new ArrayList<>();
            boolean anyCapacity = false;
            for (Map.Entry<String, Result> entry : results.entrySet()) {
                Result result = entry.getValue();
                if (RegisterVendor.forKey(entry.getKey()).isEmpty()) {
                    anyCapacity = true;
                    if (result.isOk()) {
                        fromCapacity.addAll(result.devices());
                    } else {
                        capacityErrors.add(entry.getKey() + ": " + result.error());
                    }
                    continue;
                }
                ObjectNode member = root.putObject(entry.getKey());
                if (!result.isOk()) {
                    member.put("error", result.error());
                    continue;
                }
                putDevices(member, result.devices());
            }
            if (anyCapacity) {
                ObjectNode member = root.putObject(CAPACITY_MEMBER);
                putDevices(member, fromCapacity);
                if (!capacityErrors.isEmpty()) {
                    member.put("error", String.join("; ", capacityErrors));
                }
            }
            return JSON.writeValueAsString(root);
        }

        private static void putDevices(ObjectNode member, List<RegisteredDevice> list) {
            var devices = member.putArray("devices");
            for (RegisteredDevice d : list) {
                ObjectNode o = devices.addObject();
                putString(o, "id", d.id());
                putNumber(o, "index", d.index());
                putNumber(o, "count", d.count());
                putNumber(o, "devmem", d.devmem());
                putNumber(o, "devcore", d.devcore());
                putString(o, "type", d.type());
                putNumber(o, "numa", d.numa());
                putString(o, "mode", d.mode());
                if (d.health()) {
                    o.put("health", true);
                }
                putString(o, "devicevendor", d.devicevendor());
                if (!d.custominfo().isEmpty()) {
                    o.set("custominfo", JSON.valueToTree(d.custominfo()));
                }
            }
        }

        private static void putString(ObjectNode o, String name, String value) {
            if (!value.isEmpty()) {
                o.put(name, value);
            }
        }

        private static void putNumber(ObjectNode o, String name, long value) {
            if (value != 0) {
                o.put(name, value);
            }
        }

        /** Every text a value supplied escaped ({@link PeerText#escape}): no ESC, OSC 52, CR or BEL reaches the tty. */
        private static void printTable(Map<String, Result> results, PrintWriter out) {
            String row = "  %-40s %5s %5s %7s %7s %-16s %4s %-10s %-9s %s%n";
            boolean capacityHeader = false;
            for (Map.Entry<String, Result> e : results.entrySet()) {
                Optional<RegisterVendor> vendor = RegisterVendor.forKey(e.getKey());
                if (vendor.isPresent()) {
                    out.printf("%s (%s)%n", PeerText.escape(e.getKey()), vendor.get().vendor());
                } else {
                    if (!capacityHeader) {
                        out.printf("%s (devices derived from capacity)%n", CAPACITY_MEMBER);
                        capacityHeader = true;
                    }
                    out.printf(" %s (%s)%n", PeerText.escape(e.getKey()), RegisterCodec.vendorOf(e.getKey())
                            .orElse(""));
                }
                Result result = e.getValue();
                if (!result.isOk()) {
                    out.printf("  error: %s%n", PeerText.escape(result.error()));
                    continue;
                }
                out.printf(row, "ID", "INDEX", "COUNT", "DEVMEM", "DEVCORE", "TYPE", "NUMA", "MODE", "HEALTH",
                        "VENDOR");
                for (RegisteredDevice d : result.devices()) {
                    out.printf(row, PeerText.escape(d.id()), d.index(), d.count(), d.devmem(), d.devcore(),
                            PeerText.escape(d.type()), d.numa(), PeerText.escape(d.mode()),
                            d.health() ? "healthy" : "unhealthy", PeerText.escape(d.devicevendor()));
                }
            }
        }
    }

    @Command(name = "encode", mixinStandardHelpOptions = true,
            description = {"Write a HAMi node register value exactly as that HAMi release's writer does.",
                "The value is followed by a newline. stdin: a JSON device list with the register keys (id, index,"
                    + " count, devmem, devcore, type, numa, mode, health, devicevendor, custominfo); for"
                    + " metax-tech.com/node-gpu-devices a list of Metax device objects; for"
                    + " enflame.com/gcu-drs-capacity the DRS object."},
            exitCodeListHeading = "%nExit codes:%n",
            exitCodeList = {" 0:written", " 2:bad input (unknown key, unreadable stdin or more than 4 MiB of it, more"
                + " than 1024 devices, ',' or ':' in a legacy-format field, a value over 256 KiB, bad flag)"})
    public static final class Encode implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        /** The register keys section of the help, made from hami's tables. */
        @Mixin
        AnnotationKeys.EncodeKeysHelp keys;

        @Option(names = "--hami-compat", defaultValue = "v2.10", paramLabel = "v2.9|v2.10",
                description = "The HAMi release whose writer to follow. Default: ${DEFAULT-VALUE}.")
        String hamiCompat;

        @Parameters(index = "0", paramLabel = "KEY", description = "The node register annotation key.")
        String key;

        @Override
        public Integer call() {
            HamiRelease release = release(hamiCompat);
            if (RegisterVendor.forKey(key).isEmpty()) {
                throw AnnotationKeys.unknown(key, false);
            }
            String value;
            try {
                value = RegisterCodec.encode(key, stdin(System.in), release);
            } catch (ConfigException e) {
                throw e;
            } catch (IllegalArgumentException e) {
                throw ConfigException.of("stdin", PeerText.bound(e.getMessage()), e);
            }
            if (Annotations.exceedsSizeLimit(value)) {
                throw ConfigException.of("stdin", "the value would be " + value.getBytes(StandardCharsets.UTF_8).length
                        + " bytes (expected: at most " + Annotations.TOTAL_SIZE_LIMIT + ", Kubernetes' limit on all"
                        + " annotations of an object)");
            }
            PrintWriter out = spec.commandLine().getOut();
            out.println(value);
            out.flush();
            return 0;
        }
    }
}
