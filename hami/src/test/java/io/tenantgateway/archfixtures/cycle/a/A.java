package io.tenantgateway.archfixtures.cycle.a;

import io.tenantgateway.archfixtures.cycle.b.B;

/** Violating fixture: package {@code a} uses {@code b}, which uses {@code a}. */
public final class A {
    public B partner() {
        return new B();
    }
}
