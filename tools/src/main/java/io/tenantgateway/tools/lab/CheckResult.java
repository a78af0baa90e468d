package io.tenantgateway.tools.lab;

import static java.util.Objects.requireNonNull;

import java.time.Duration;

/**
 * One row of the lab's table.
 *
 * @param evidence one line: what was seen when it passed, the reason when it failed
 */
public record CheckResult(int number, String title, boolean passed, Duration duration, String evidence) {
    public CheckResult {
        requireNonNull(title, "title");
        requireNonNull(duration, "duration");
        requireNonNull(evidence, "evidence");
    }
}
