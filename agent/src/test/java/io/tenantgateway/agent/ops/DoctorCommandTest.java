package io.tenantgateway.agent.ops;

import static org.assertj.core.api.Assertions.assertThat;

import io.tenantgateway.agent.testing.CliRun;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code tenant-gateway doctor}'s command line in-process: an unknown flag is one line naming the nearest known flag,
 * {@code run}'s or doctor's own, as {@code run} names its own (nothing is checked before the flags parse).
 */
@Timeout(60)
class DoctorCommandTest {

    @Test
    void aTypoOfDoctorsOwnFlagNamesIt() {
        CliRun run = CliRun.of("doctor", "--check-timout=5s");

        assertThat(run.exitCode()).as(run.both()).isEqualTo(2);
        assertThat(run.err().strip()).isEqualTo("error: unknown flag: --check-timout (did you mean --check-timeout?)");
        assertThat(run.out()).isEmpty();
    }

    @Test
    void aTypoOfRunsFlagNamesItAsRunDoes() {
        CliRun doctor = CliRun.of("doctor", "--proxy-server-prot=8132");
        CliRun run = CliRun.of("run", "--proxy-server-prot=8132");

        assertThat(doctor.exitCode()).as(doctor.both()).isEqualTo(2);
        assertThat(doctor.err().strip())
                .isEqualTo("error: unknown flag: --proxy-server-prot (did you mean --proxy-server-port?)")
                .isEqualTo(run.err().strip());
    }

    @Test
    void aFlagNoCommandHasIsNamedAloneInOneLine() {
        // Once documented for device registration, never a flag: nothing is near enough to suggest.
        CliRun run = CliRun.of("doctor", "--nvidia-smi-timeout=5s");

        assertThat(run.exitCode()).as(run.both()).isEqualTo(2);
        assertThat(run.err().strip()).isEqualTo("error: unknown flag: --nvidia-smi-timeout");
    }
}
