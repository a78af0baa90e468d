package io.tenantgateway.agent.ops;

import io.tenantgateway.agent.cli.GoFlags;
import io.tenantgateway.common.config.ConfigException;
import io.tenantgateway.common.text.PeerText;
import io.tenantgateway.hami.CapacityVendor;
import io.tenantgateway.hami.HamiRelease;
import io.tenantgateway.hami.NodeVendor;
import io.tenantgateway.hami.RegisterCodec;
import io.tenantgateway.hami.RegisterFormat;
import io.tenantgateway.hami.RegisterVendor;
import io.tenantgateway.hami.HamiRelease;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.IModelTransformer;
import picocli.CommandLine.Model.CommandSpec;

/**
 * The keys {@code tenant-gateway annotations} reads, straight from the {@code hami} module's tables: the register
 * annotations ({@link RegisterVendor#TABLE}) and the node capacity HAMi's scheduler derives devices from
 * ({@link CapacityVendor#TABLE}). Its help lists them ({@link DecodeKeysHelp}, {@link EncodeKeysHelp}), a key
 * that is neither is refused naming the nearest one or all of them, and capacity given as {@code KEY=VALUE} pairs is
 * checked and decoded as {@link RegisterCodec#decodeNode} decodes a Node's {@code status.capacity}. A vendor added to
 * a table shows up here with no change.
 */
final class AnnotationKeys {
    private AnnotationKeys() {
    }

    /** The key of {@code vendor} as people write it: the fixed key, or the pattern with {@code CHIP} (an upper-case placeholder, as every help text writes one). */
    static String pattern(RegisterVendor vendor) {
        return vendor.isFixedKey() ? vendor.keyPrefix() : vendor.keyPrefix() + "CHIP" + vendor.keySuffix();
    }

    /** The capacity vendor whose count or memory resource {@code key} is. */
    static Optional<CapacityVendor> capacityVendor(String key) {
        return CapacityVendor.TABLE.stream().filter(v -> v.reads(key)).findFirst();
    }

    /**
     * The devices {@code release}'s scheduler derives from {@code capacity} (resource → value, as given on the
     * command line), keyed by count resource. Refused, as bad input: a memory or core resource without its vendor's
     * count resource (the scheduler derives nothing from it alone) and a resource {@code release} does not read.
     */
    static Map<String, RegisterCodec.Result> decodeCapacity(Map<String, String> capacity, HamiRelease release,
                                                           String node) {
        for (String key : capacity.keySet()) {
            CapacityVendor vendor = capacityVendor(key).orElseThrow();
            if (!vendor.releases().contains(release)) {
                throw new ConfigException("KEY", key, "a key HAMi " + release(release) + " reads: only "
                        + vendor.releases().stream().map(AnnotationKeys::release).sorted()
                                .collect(Collectors.joining(", "))
                        + " derives " + vendor.vendor() + " devices from " + key + " (--hami-compat)");
            }
            if (!capacity.containsKey(vendor.countResource())) {
                throw new ConfigException("KEY", key, "given with " + vendor.countResource() + "=N: HAMi derives "
                        + vendor.vendor() + " devices from the count and reads " + key + " only with it");
            }
        }
        return capacity.isEmpty() ? Map.of() : RegisterCodec.fromCapacity(capacity, release, node);
    }

    /**
     * The refusal of {@code key}, which is no key the command reads: names the nearest known key when one is close
     * (a typo), else every key.
     *
     * @param withCapacity whether capacity resources are accepted too ({@code decode}; {@code encode} writes
     *                     annotations only)
     */
    static ConfigException unknown(String key, boolean withCapacity) {
        String what = withCapacity ? "a HAMi node register key or a capacity resource HAMi reads"
                : "a HAMi node register key";
        if (!withCapacity && capacityVendor(key).isPresent()) {
            return new ConfigException("KEY", key, what + "; " + key + " is node capacity, not an annotation: "
                    + "nothing to encode");
        }
        List<String> known = new ArrayList<>();
        RegisterVendor.TABLE.stream().filter(RegisterVendor::isFixedKey).forEach(v -> known.add(v.keyPrefix()));
        if (withCapacity) {
            CapacityVendor.TABLE.forEach(v -> {
                known.add(v.countResource());
                known.addAll(v.otherResources());
            });
        }
        String bounded = PeerText.bound(key, PeerText.VALUE_LIMIT);
        Optional<String> nearest = GoFlags.nearest(key, known);
        if (nearest.isPresent()) {
            return new ConfigException("KEY", bounded, what + "; did you mean " + nearest.get() + "?");
        }
        List<String> all = new ArrayList<>(RegisterVendor.TABLE.stream().map(AnnotationKeys::pattern).toList());
        if (withCapacity) {
            CapacityVendor.TABLE.forEach(v -> all.add(v.countResource()));
        }
        return new ConfigException("KEY", bounded, what + ": " + String.join(", ", all)
                + (withCapacity ? " (each capacity count with its memory or core resource, where it has one)" : ""));
    }

    /** The help section: every key, per vendor, with its format; capacity resources when {@code withCapacity}. */
    static List<String> helpLines(boolean withCapacity) {
        List<String> lines = new ArrayList<>();
        lines.add(withCapacity ? "Node register annotations (KEY=VALUE, or read from a Node's metadata.annotations):"
                : "Node register annotations (KEY):");
        String ascendExample = NodeVendor.ascend("Ascend910B4").registerKey();
        int width = RegisterVendor.TABLE.stream().map(AnnotationKeys::pattern).mapToInt(String::length).max()
                .orElse(0);
        if (withCapacity) {
            width = Math.max(width, CapacityVendor.TABLE.stream().flatMap(v -> java.util.stream.Stream.concat(
                    java.util.stream.Stream.of(v.countResource()), v.otherResources().stream()))
                    .mapToInt(String::length).max().orElse(0));
        }
        int vendorWidth = Math.max(RegisterVendor.TABLE.stream().mapToInt(v -> v.vendor().length()).max().orElse(0),
                withCapacity ? CapacityVendor.TABLE.stream().mapToInt(v -> v.vendor().length()).max().orElse(0) : 0);
        String row = "  %-" + width + "s  %-" + vendorWidth + "s %s";
        for (RegisterVendor vendor : RegisterVendor.TABLE) {
            String format = format(vendor.format());
            if (!vendor.isFixedKey()) {
                format += ", one key per chip";
                if (RegisterVendor.forKey(ascendExample).orElseThrow() == vendor) {
                    format += " (" + ascendExample + ")";
                }
            }
            lines.add(String.format(Locale.ROOT, row, pattern(vendor), vendor.vendor(), format));
        }
        if (withCapacity) {
            lines.add("Node capacity (KEY=VALUE, or read from a Node's status.capacity; the devices HAMi's scheduler"
                    + " derives):");
            for (CapacityVendor vendor : CapacityVendor.TABLE) {
                StringBuilder what = new StringBuilder("type ").append(vendor.type()).append(", ")
                        .append(vendor.unitsPerDevice() == 1 ? "one device a unit"
                                : "one device per " + vendor.unitsPerDevice() + " units");
                if (vendor.releases().size() < HamiRelease.values().length) {
                    what.append("; HAMi ").append(vendor.releases().stream().map(AnnotationKeys::release).sorted()
                            .collect(Collectors.joining(", "))).append(" only");
                }
                lines.add(String.format(Locale.ROOT, row, vendor.countResource(), vendor.vendor(), what));
                if (!vendor.memoryResource().isEmpty()) {
                    lines.add(String.format(Locale.ROOT, row, vendor.memoryResource(), vendor.vendor(),
                            "memory, " + vendor.memoryFactorMiB() + " MiB a unit"));
                }
                if (!vendor.coreResource().isEmpty()) {
                    lines.add(String.format(Locale.ROOT, row, vendor.coreResource(), vendor.vendor(),
                            "cores; count of each device = cores / devices"));
                }
            }
        }
        return lines;
    }

    private static String format(RegisterFormat format) {
        return switch (format) {
            case JSON -> "JSON";
            case LEGACY_TEXT -> "legacy text";
            case METAX_SGPU -> "Metax sGPU JSON";
            case ENFLAME_DRS -> "Enflame DRS JSON";
        };
    }

    /** {@code v2.9}, {@code v2.10}: as {@code --hami-compat} spells it. */
    private static String release(HamiRelease release) {
        return release.label();
    }

    /**
     * A mixin adding the keys section to the help of {@code annotations} and {@code annotations decode} (its footer,
     * which picocli copies to the command; made when the model is built, by this class as the mixin's transformer).
     */
    @Command(modelTransformer = DecodeKeysHelp.class)
    public static final class DecodeKeysHelp implements IModelTransformer {
        @Override
        public CommandSpec transform(CommandSpec spec) {
            return withKeys(spec, true);
        }
    }

    /** The same for {@code annotations encode}: the register keys only (capacity is no annotation to encode). */
    @Command(modelTransformer = EncodeKeysHelp.class)
    public static final class EncodeKeysHelp implements IModelTransformer {
        @Override
        public CommandSpec transform(CommandSpec spec) {
            return withKeys(spec, false);
        }
    }

    private static CommandSpec withKeys(CommandSpec spec, boolean withCapacity) {
        List<String> footer = new ArrayList<>(List.of(spec.usageMessage().footer()));
        // picocli formats help text with String.format: no key holds a '%', but escape any that might.
        helpLines(withCapacity).forEach(line -> footer.add(line.replace("%", "%%")));
        spec.usageMessage().footerHeading("%nKeys:%n").footer(footer.toArray(String[]::new));
        return spec;
    }
}
