package io.tenantgateway.agent;

import static org.assertj.core.api.Assertions.assertThat;

import io.tenantgateway.agent.testing.JarProcess;
import java.util.List;
import java.util.jar.JarFile;
import java.util.zip.ZipEntry;
import org.junit.jupiter.api.Test;

/**
 * The runtime jar (what the image ships on every node) holds the runtime only: no mock API server, no mock web
 * server, no vertx-web (only the mock server needed it), no lab, bench or scheduler simulator. Those are in tools/.
 */
class RuntimeJarContentsIT {
    private static final List<String> FORBIDDEN = List.of(
            "io/fabric8/kubernetes/client/server/mock/",
            "io/fabric8/mockwebserver/",
            "okhttp3/mockwebserver/",
            "io/vertx/ext/web/handler/",
            "io/vertx/ext/web/impl/RouterImpl",
            "io/tenantgateway/tools/",
            "io/tenantgateway/agent/lab/",
            "io/tenantgateway/agent/bench/",
            "io/tenantgateway/agent/hamisim/",
            "io/tenantgateway/deviceplugin/testing/");

    @Test
    void holdsNoToolsAndNoMockServer() throws Exception {
        List<String> entries;
        try (JarFile jar = new JarFile(JarProcess.jar().toFile())) {
            entries = jar.stream().map(ZipEntry::getName).toList();
        }
        assertThat(entries).as("the runtime itself").contains("io/tenantgateway/agent/main/Main.class",
                "io/tenantgateway/agent/ops/Probe.class", "io/tenantgateway/deviceplugin/DevicePlugin.class",
                "io/tenantgateway/deviceplugin/v1beta1/DevicePluginGrpc.class");
        assertThat(entries).as("entries under %s", FORBIDDEN)
                .filteredOn(name -> FORBIDDEN.stream().anyMatch(name::startsWith)).isEmpty();
    }

    /** x86_64 and Arm nodes (Grace Hopper, Graviton) alike: native epoll and BoringSSL for both, nothing else. */
    @Test
    void carriesTheLinuxNativesForX8664AndAarch64() throws Exception {
        List<String> natives;
        try (JarFile jar = new JarFile(JarProcess.jar().toFile())) {
            natives = jar.stream().map(ZipEntry::getName).filter(name -> name.startsWith("META-INF/native/")
                    && (name.endsWith(".so") || name.endsWith(".jnilib") || name.endsWith(".dll"))).sorted().toList();
        }
        assertThat(natives).containsExactly(
                "META-INF/native/libnetty_tcnative_linux_aarch_64.so",
                "META-INF/native/libnetty_tcnative_linux_x86_64.so",
                "META-INF/native/libnetty_transport_native_epoll_aarch_64.so",
                "META-INF/native/libnetty_transport_native_epoll_x86_64.so");
    }
}
