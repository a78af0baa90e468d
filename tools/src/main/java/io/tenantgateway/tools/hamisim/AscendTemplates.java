package io.tenantgateway.tools.hamisim;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.webhook.policy.AscendChip;
import io.tenantgateway.webhook.policy.DeviceConfig;
import java.util.List;
import java.util.Optional;

/**
 * The scheduler side of an Ascend chip's vNPU templates: HAMi v2.10's {@code trimMemory} (device-plugin/
 * VENDOR-PLUGINS.md §5.3). The chips and their templates are data in one place, the device configuration the webhook
 * reads ({@link DeviceConfig#vnpus()}; with no file, HAMi's chart: 910B4 {@code vir05_1c_8g} 8192 and
 * {@code vir10_3c_16g} 16384 of 32768 MiB, 910B3 {@code vir05_1c_16g} 16384 and {@code vir10_3c_32g} 32768 of 65536,
 * 310P {@code vir01} 3072, {@code vir02} 6144 and {@code vir04} 12288 of 21527 allocatable / 24576 capacity), so the
 * simulated scheduler and the webhook never disagree about a chip.
 *
 * <p>Pure: no I/O, no state; safe from any thread.
 */
public final class AscendTemplates {
    private AscendTemplates() {
    }

    /**
     * What {@code trimMemory} returns.
     *
     * @param memoryMiB the template's memory; the chip's {@code memoryAllocatable} for a whole card; 0 when invalid
     * @param template the template's name; {@code ""} for a whole card or an invalid request (no {@code temp})
     */
    public record Trimmed(long memoryMiB, String template) {
        public Trimmed {
            requireNonNull(template, "template");
        }
    }

    /**
     * HAMi's {@code trimMemory(m)}: the smallest template whose memory is at least {@code memoryMiB} (templates
     * sorted by memory, as {@link AscendChip} keeps them); else, up to the chip's {@code memoryCapacity}, the whole
     * card ({@code memoryAllocatable}, no name); else {@code (0, "")}.
     */
    public static Trimmed trim(AscendChip chip, long memoryMiB) {
        requireNonNull(chip, "chip");
        for (AscendChip.Template template : chip.templates()) {
            if (memoryMiB <= template.memory()) {
                return new Trimmed(template.memory(), template.name());
            }
        }
        if (memoryMiB <= chip.memoryCapacity()) {
            return new Trimmed(chip.memoryAllocatable(), "");
        }
        return new Trimmed(0, "");
    }

    /** The chip whose common word is {@code commonWord} ({@code Ascend910B4}), if {@code chips} configures it. */
    public static Optional<AscendChip> chip(List<AscendChip> chips, String commonWord) {
        requireNonNull(chips, "chips");
        requireNonNull(commonWord, "commonWord");
        return chips.stream().filter(c -> c.commonWord().equals(commonWord)).findFirst();
    }
}
