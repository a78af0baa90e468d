package io.tenantgateway.archfixtures.jdkonly;

import java.util.List;

/** Clean fixture: JDK only. */
public final class JdkOnly {
    public List<String> values() {
        return List.of("a");
    }
}
