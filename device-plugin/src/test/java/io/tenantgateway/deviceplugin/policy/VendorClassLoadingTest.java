package io.tenantgateway.deviceplugin.policy;

import static org.assertj.core.api.Assertions.assertThat;

import io.tenantgateway.hami.NodeVendor;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A node without Hygon or Ascend devices never loads their classes: the policy and HAMi's data classes in a class
 * loader of their own (this JVM's tests load everything), NVIDIA's Allocate made and run, and only then a vendor's.
 */
class VendorClassLoadingTest {
    static final String POLICY = "io.tenantgateway.deviceplugin.policy.";
    static final List<String> VENDOR_CLASSES = List.of(POLICY + "HygonAllocation", POLICY + "AscendAllocation",
            "io.tenantgateway.hami.AscendRuntimeInfo");

    /** Loads what the two modules hold itself (the JDK from the platform loader), and says what it loaded. */
    static final class Isolated extends URLClassLoader {
        Isolated(URL... urls) {
            super(urls, ClassLoader.getPlatformClassLoader());
        }

        boolean loaded(String name) {
            return findLoadedClass(name) != null;
        }
    }

    @Test
    void nvidiasAllocateLoadsNoOtherVendorsClassUntilThatVendorIsChosen() throws Exception {
        try (Isolated loader = new Isolated(location(AllocatePolicy.class), location(NodeVendor.class))) {
            Class<?> settingsType = loader.loadClass(POLICY + "HamiCoreSettings");
            Object settings = settingsType.getField("DEFAULTS").get(null);
            Class<?> policyType = Class.forName(POLICY + "AllocatePolicy", true, loader);
            assertThat(policyType.getClassLoader()).isSameAs(loader);
            Object policy = policyType.getConstructor(settingsType, String.class).newInstance(settings, "worker-1");
            Object pod = podView(loader, "GPU-1,NVIDIA,4096,25:;");
            Method decide = policyType.getMethod("decide", loader.loadClass(POLICY + "PodView"), List.class,
                    java.util.Set.class, String.class, String.class);
            Object decision = decide.invoke(policy, pod, List.of("GPU-1-0"), java.util.Set.of("GPU-1"), "libvgpu.so",
                    "c");
            assertThat(decision.getClass().getName()).endsWith("AllocateDecision$Allocate");
            assertThat(loader.loaded(POLICY + "NvidiaAllocation")).isTrue();
            assertThat(VENDOR_CLASSES).allSatisfy(name -> assertThat(loader.loaded(name)).as(name).isFalse());

            Class<?> vendorType = loader.loadClass("io.tenantgateway.hami.NodeVendor");
            loader.loadClass(POLICY + "VendorAllocation").getMethod("of", vendorType, settingsType)
                    .invoke(null, vendorType.getField("HYGON").get(null), settings);
            assertThat(loader.loaded(POLICY + "HygonAllocation")).as("the test can fail").isTrue();
            assertThat(loader.loaded(POLICY + "AscendAllocation")).isFalse();
        }
    }

    private static Object podView(ClassLoader loader, String toAllocate) throws Exception {
        Class<?> container = loader.loadClass(POLICY + "ContainerView");
        Object cuda = container.getMethod("of", String.class).invoke(null, "cuda");
        return loader.loadClass(POLICY + "PodView").getConstructors()[0].newInstance("team-a", "p1", "uid", "worker-1",
                "Pending", "1", java.util.Map.of("hami.io/vgpu-devices-to-allocate", toAllocate,
                        "hami.io/bind-phase", "allocating"), List.of(), List.of(cuda));
    }

    private static URL location(Class<?> type) {
        return type.getProtectionDomain().getCodeSource().getLocation();
    }
}
