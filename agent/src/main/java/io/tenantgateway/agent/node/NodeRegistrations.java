package io.tenantgateway.agent.node;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.hami.Annotations;
import io.tenantgateway.hami.HamiRelease;
import io.tenantgateway.hami.RegisterCodec;
import io.tenantgateway.hami.RegisterVendor;
import io.tenantgateway.hami.RegisteredDevice;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What this node registered with HAMi, every vendor, as a HAMi release's scheduler reads it (the decoding of
 * {@code doctor} and {@code tenant-gateway annotations decode}: {@link RegisterCodec#decodeNode}), for the status page
 * and {@code /debug/devices}. Immutable; no Kubernetes types (a tunnel-only agent's status page loads it).
 *
 * <p>Bounded, since a Node's annotations may hold 256 KiB: at most {@value #MAX_REGISTRATIONS} registrations (the
 * rest counted in {@link #notShown}), at most {@value #MAX_DEVICES} devices kept of each (its {@code deviceCount} is
 * the whole count), and a register value over {@value #MAX_VALUE_CHARS} characters is not decoded here (the
 * registration says so; {@code annotations decode} reads it), nor, anywhere, one larger than the API allows
 * ({@link Annotations#TOTAL_SIZE_LIMIT}: the registration names its size). Decoding keeps one value's devices at a time.
 *
 * @param state where the read stands
 * @param node the node's name, {@code ""} while unknown
 * @param detail why there is nothing to show ({@code OFF}, {@code PENDING}, {@code FAILED}); {@code ""} when read
 * @param readAt when the Node was read ({@code READ}, {@code FAILED}), else {@code null}
 * @param source where the Node came from ("lock controller's node informer", "API get, …"), {@code ""} when none
 * @param registrations every registration: register annotations first (a value too long to decode, then the others
 *     in the Node's order), then the devices derived from capacity
 * @param notShown registrations beyond {@value #MAX_REGISTRATIONS}, not decoded
 * @param release the HAMi release whose scheduler's reading this is
 */
public record NodeRegistrations(State state, String node, String detail, Instant readAt, String source,
        List<Registration> registrations, int notShown, HamiRelease release) {
    static final int MAX_REGISTRATIONS = 32;
    static final int MAX_DEVICES = 64;
    static final int MAX_VALUE_CHARS = 64 * 1024;

    /** Where the read stands. */
    public enum State {
        /** No part of this agent may read its Node. */
        OFF,
        /** The node name is not known yet, or the Node not read yet. */
        PENDING,
        /** The Node could not be read. */
        FAILED,
        /** Read and decoded. */
        READ
    }

    /**
     * One registration.
     *
     * @param key the register annotation key, or the count resource for devices derived from capacity
     * @param vendor the backend ({@link RegisterCodec#vendorOf})
     * @param fromCapacity whether the devices are derived from the Node's capacity (no annotation)
     * @param deviceCount how many devices it lists (0 on error)
     * @param devices the first {@value #MAX_DEVICES} of them
     * @param error HAMi's reader message, {@code null} when it decodes
     */
    public record Registration(String key, String vendor, boolean fromCapacity, int deviceCount,
            List<RegisteredDevice> devices, String error) {
        public Registration {
            requireNonNull(key, "key");
            requireNonNull(vendor, "vendor");
            devices = List.copyOf(devices);
        }

        static Registration of(String key, RegisterCodec.Result result) {
            String vendor = RegisterCodec.vendorOf(key).orElse("");
            boolean fromCapacity = RegisterVendor.forKey(key).isEmpty();
            if (!result.isOk()) {
                return new Registration(key, vendor, fromCapacity, 0, List.of(), result.error());
            }
            List<RegisteredDevice> all = result.devices();
            return new Registration(key, vendor, fromCapacity, all.size(),
                    all.subList(0, Math.min(all.size(), MAX_DEVICES)), null);
        }

        public boolean ok() {
            return error == null;
        }
    }

    public NodeRegistrations {
        requireNonNull(state, "state");
        requireNonNull(node, "node");
        requireNonNull(detail, "detail");
        requireNonNull(source, "source");
        registrations = List.copyOf(registrations);
        requireNonNull(release, "release");
    }

    /** Nothing to read: {@code why}. */
    public static NodeRegistrations off(String why) {
        return new NodeRegistrations(State.OFF, "", why, null, "", List.of(), 0, HamiRelease.V2_10);
    }

    /** Not read yet: {@code why}. */
    public static NodeRegistrations pending(String node, String why) {
        return new NodeRegistrations(State.PENDING, node, why, null, "", List.of(), 0, HamiRelease.V2_10);
    }

    /** The read at {@code at} failed: {@code why}. */
    public static NodeRegistrations failed(String node, String why, Instant at, String source) {
        return new NodeRegistrations(State.FAILED, node, why, at, source, List.of(), 0, HamiRelease.V2_10);
    }

    /** {@link #decode(String, Map, Map, Map, HamiRelease, Instant, String)} of a Node without labels, as v2.10. */
    public static NodeRegistrations decode(String node, Map<String, String> annotations, Map<String, String> capacity,
            Instant readAt, String source) {
        return decode(node, annotations, capacity, Map.of(), HamiRelease.V2_10, readAt, source);
    }

    /**
     * The registrations of the Node {@code node} with these annotations, capacity (quantities as written) and labels,
     * as {@code release}'s scheduler reads them, read at {@code readAt} from {@code source}.
     */
    public static NodeRegistrations decode(String node, Map<String, String> annotations, Map<String, String> capacity,
            Map<String, String> labels, HamiRelease release, Instant readAt, String source) {
        List<Registration> out = new ArrayList<>();
        int[] notShown = {0};
        Map<String, String> decodable = new LinkedHashMap<>();
        annotations.forEach((key, value) -> {
            if (RegisterVendor.forKey(key).isEmpty()) {
                return;
            }
            if (out.size() + decodable.size() >= MAX_REGISTRATIONS) {
                notShown[0]++;
            } else if (Annotations.exceedsSizeLimit(value)) {
                // No API server stores it (a forged answer, a mock): named by its size, never decoded.
                out.add(new Registration(key, RegisterCodec.vendorOf(key).orElse(""), false, 0, List.of(),
                        Annotations.sizeLimitMessage(key, value)));
            } else if (value != null && value.length() > MAX_VALUE_CHARS) {
                out.add(new Registration(key, RegisterCodec.vendorOf(key).orElse(""), false, 0, List.of(),
                        "value of " + value.length() + " characters not decoded here (expected: at most "
                                + MAX_VALUE_CHARS + "; tenant-gateway annotations decode reads it)"));
            } else {
                decodable.put(key, value);
            }
        });
        RegisterCodec.decodeNode(decodable, capacity, labels, release, node, (key, result) -> {
            if (out.size() >= MAX_REGISTRATIONS) {
                notShown[0]++;
            } else {
                out.add(Registration.of(key, result));
            }
        });
        return new NodeRegistrations(State.READ, node, "", readAt, source, out, notShown[0], release);
    }

    /** How many registrations do not decode. */
    public long failing() {
        return registrations.stream().filter(r -> !r.ok()).count();
    }
}
