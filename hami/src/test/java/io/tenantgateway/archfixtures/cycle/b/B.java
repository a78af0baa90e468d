package io.tenantgateway.archfixtures.cycle.b;

import io.tenantgateway.archfixtures.cycle.a.A;

/** Violating fixture: closes the cycle {@code a → b → a}. */
public final class B {
    public A partner() {
        return new A();
    }
}
