package io.tenantgateway.agent.testing;

/** Teardown where the order matters (a tunnel before the server whose loop it runs on), skipping what is unset. */
public final class Cleanup {
    private Cleanup() {
    }

    /** Closes each non-null part, in the order given; the first failure is thrown after all were tried. */
    public static void closeInOrder(AutoCloseable... parts) throws Exception {
        Exception first = null;
        for (AutoCloseable part : parts) {
            if (part == null) {
                continue;
            }
            try {
                part.close();
            } catch (Exception e) {
                if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }
}
