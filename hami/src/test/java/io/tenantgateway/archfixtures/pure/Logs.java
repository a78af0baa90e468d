package io.tenantgateway.archfixtures.pure;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Violating fixture: a class in a pure package that logs. */
public final class Logs {
    private static final Logger log = LoggerFactory.getLogger(Logs.class);

    public void decide() {
        log.info("decided");
    }
}
