package io.tenantgateway.archfixtures.tools;

/** Fixture: a developer tool. */
public final class Tool {
    public static String run() {
        return "tool";
    }
}
