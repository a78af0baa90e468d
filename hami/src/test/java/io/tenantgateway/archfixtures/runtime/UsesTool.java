package io.tenantgateway.archfixtures.runtime;

import io.tenantgateway.archfixtures.tools.Tool;

/** Violating fixture: runtime code that imports a tool. */
public final class UsesTool {
    public String call() {
        return Tool.run();
    }
}
