package io.tenantgateway.archfixtures.jdkonly;

import org.assertj.core.api.Assertions;

/** Violating fixture: pure (no I/O, no logging), but it depends on a library outside the JDK. */
public final class UsesLibrary {
    public void check(String value) {
        Assertions.assertThat(value).isNotEmpty();
    }
}
