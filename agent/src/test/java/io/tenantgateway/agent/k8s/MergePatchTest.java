package io.tenantgateway.agent.k8s;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class MergePatchTest {
    @Test
    void compareAndSwapReleaseIsWhatHamiSends() {
        assertThat(MergePatch.annotations("4711", Collections.singletonMap("hami.io/mutex.lock", null)))
                .isEqualTo("{\"metadata\":{\"annotations\":{\"hami.io/mutex.lock\":null},\"resourceVersion\":\"4711\"}}");
    }

    @Test
    void annotationsAndLabelsWithoutResourceVersion() {
        Map<String, String> annotations = new LinkedHashMap<>();
        annotations.put("hami.io/vgpu-node", "node-a");
        annotations.put("hami.io/vgpu-devices-to-allocate", "GPU-a,NVIDIA,1,2:;");
        assertThat(MergePatch.metadata(null, annotations, Map.of("hami.io/vgpu-node", "node-a")))
                .isEqualTo("{\"metadata\":{\"annotations\":{\"hami.io/vgpu-node\":\"node-a\","
                        + "\"hami.io/vgpu-devices-to-allocate\":\"GPU-a,NVIDIA,1,2:;\"},"
                        + "\"labels\":{\"hami.io/vgpu-node\":\"node-a\"}}}");
    }

    @Test
    void escapesJsonStrings() {
        assertThat(MergePatch.quote("a\"b\\c\nd\u0001")).isEqualTo("\"a\\\"b\\\\c\\nd\\u0001\"");
    }
}
