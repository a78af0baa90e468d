package io.tenantgateway.hami;

import static java.util.Objects.requireNonNull;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One device as HAMi's scheduler reads it from any node register annotation (Go's {@code device.DeviceInfo}); field
 * names follow the register JSON keys. Unlike {@link GpuDevice} it carries every vendor's extras and keeps what Go
 * keeps (a negative number read by v2.9's lenient legacy decoder stays as it is).
 *
 * @param id           {@code id}
 * @param index        {@code index} (Go {@code uint}; v2.9's legacy decoder may leave a negative value, shown as is)
 * @param count        {@code count}: how many tasks may share the device
 * @param devmem       {@code devmem}, MiB
 * @param devcore      {@code devcore}, 100 = the whole device
 * @param type         {@code type}
 * @param numa         {@code numa}
 * @param mode         {@code mode}
 * @param health       {@code health}; omitted in JSON means unhealthy
 * @param devicevendor {@code devicevendor}; empty when the value does not carry it
 * @param custominfo   {@code custominfo}: String, Long, Double, Boolean, List, Map or null values; empty for none
 */
public record RegisteredDevice(String id, long index, int count, int devmem, int devcore, String type, int numa,
                               String mode, boolean health, String devicevendor, Map<String, Object> custominfo) {

    public RegisteredDevice {
        requireNonNull(id, "id");
        requireNonNull(type, "type");
        requireNonNull(mode, "mode");
        requireNonNull(devicevendor, "devicevendor");
        custominfo = Collections.unmodifiableMap(new LinkedHashMap<>(requireNonNull(custominfo, "custominfo")));
    }

    /** A device without {@code devicevendor} and {@code custominfo}. */
    public static RegisteredDevice of(String id, long index, int count, int devmem, int devcore, String type,
                                      int numa, String mode, boolean health) {
        return new RegisteredDevice(id, index, count, devmem, devcore, type, numa, mode, health, "", Map.of());
    }

    /** This NVIDIA device in the shape every vendor shares. */
    public static RegisteredDevice of(GpuDevice gpu) {
        return of(gpu.id(), gpu.index(), gpu.count(), gpu.devmemMiB(), gpu.devcore(), gpu.type(), gpu.numa(),
                gpu.mode(), gpu.healthy());
    }
}
