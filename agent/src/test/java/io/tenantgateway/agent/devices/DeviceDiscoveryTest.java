package io.tenantgateway.agent.devices;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tenantgateway.agent.testing.MutableClock;
import io.tenantgateway.hami.GpuDevice;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The registrar's discovery with a scripted source and a clock moved by hand: no API, no threads. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DeviceDiscoveryTest {
    private static final Duration RESCAN = Duration.ofMinutes(5);
    private static final GpuDevice A = gpu("GPU-a", 0);
    private static final GpuDevice B = gpu("GPU-b", 1);

    private final MutableClock clock = new MutableClock(Instant.parse("2026-12-07T20:00:00Z"));
    private final ScriptedSource source = new ScriptedSource();
    private final DeviceDiscovery discovery = new DeviceDiscovery(source, RESCAN, clock);

    private static GpuDevice gpu(String id, int index) {
        return new GpuDevice(id, index, 10, 23034, 100, "NVIDIA L4", 0, "hami-core", true);
    }

    @Test
    void theDevicesAreKeptForTheRescanIntervalThenAskedForAgain() throws Exception {
        source.script.add(List.of(A));
        source.script.add(List.of(A, B));

        assertThat(discovery.devices()).containsExactly(A);
        clock.advance(RESCAN.minusSeconds(1));
        assertThat(discovery.devices()).containsExactly(A);
        assertThat(source.calls).isEqualTo(1);

        clock.advance(Duration.ofSeconds(1));
        assertThat(discovery.devices()).containsExactly(A, B);
        assertThat(source.calls).isEqualTo(2);
    }

    @Test
    void anEmptyAnswerIsNoDevicesAndNothingIsKept() throws Exception {
        source.script.add(List.of());
        source.script.add(List.of(A));

        assertThatThrownBy(discovery::devices).isInstanceOf(DeviceDiscoveryException.class)
                .hasMessage("scripted source returned no devices (expected: at least one GPU)")
                .satisfies(e -> assertThat(((DeviceDiscoveryException) e).reason()).isEqualTo(FailureReason.NO_DEVICES));
        assertThat(discovery.devices()).containsExactly(A); // asked again at once, no interval waited
    }

    @Test
    void aFailedRescanLeavesNoStaleDevices() throws Exception {
        source.script.add(List.of(A));
        source.script.add(new DeviceDiscoveryException(FailureReason.NVIDIA_SMI_FAILED, "nvidia-smi exited 9"));
        source.script.add(List.of(B));
        assertThat(discovery.devices()).containsExactly(A);
        clock.advance(RESCAN);

        assertThatThrownBy(discovery::devices).hasMessage("nvidia-smi exited 9");
        assertThat(discovery.devices()).as("the next call asks again").containsExactly(B);
        assertThat(source.calls).isEqualTo(3);
    }

    /** Answers each call with the next entry of its script: a device list, or a failure to throw. */
    private static final class ScriptedSource implements DeviceSource {
        final Deque<Object> script = new ArrayDeque<>();
        int calls;

        @Override
        public String kind() {
            return "scripted";
        }

        @Override
        @SuppressWarnings("unchecked")
        public List<GpuDevice> discover() throws DeviceDiscoveryException {
            calls++;
            Object next = script.poll();
            if (next instanceof DeviceDiscoveryException e) {
                throw e;
            }
            return (List<GpuDevice>) next;
        }
    }
}
