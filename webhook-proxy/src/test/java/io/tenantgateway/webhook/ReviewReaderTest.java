package io.tenantgateway.webhook;

import static io.tenantgateway.webhook.Pods.container;
import static io.tenantgateway.webhook.Pods.pod;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tenantgateway.webhook.policy.AdmissionPolicy;
import io.tenantgateway.webhook.policy.Decision;
import io.tenantgateway.webhook.policy.DeviceConfig;
import io.tenantgateway.hami.HamiRelease;
import io.tenantgateway.webhook.policy.JsonPatches;
import io.tenantgateway.webhook.policy.PolicyConfig;
import io.tenantgateway.webhook.quota.QuotaLookup;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import tools.jackson.core.exc.StreamConstraintsException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/** The streaming read keeps only what the policy reads, and the policy's answer on it is the full tree's answer. */
class ReviewReaderTest {
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private final ReviewReader reader = new ReviewReader(WebhookConfig.DEFAULT_MAX_REQUEST_BYTES);

    private JsonNode read(String json, AtomicLong charged) {
        return reader.read(new ByteArrayInputStream(json.getBytes(StandardCharsets.UTF_8)), charged::addAndGet);
    }

    private JsonNode read(String json) {
        return read(json, new AtomicLong());
    }

    static Stream<ObjectNode> pods() {
        return Stream.of(
                pod("plain").container(container("main")).build(),
                pod("gpu").container(container("cuda").gpu("1").env("A", "1").env("B", "2")).build(),
                pod("mem").container(container("cuda").limit("nvidia.com/gpumem", "3000")).build(),
                pod("exclusive").container(container("cuda").request("nvidia.com/gpu", "2")).build(),
                pod("init").initContainer(container("setup").gpu("1").env("X", "y"))
                        .container(container("main").env("K", "v")).container(container("cuda").gpu("2")).build(),
                pod("priv").container(container("cuda").gpu("1").privileged()).build(),
                pod("node").nodeName("n1").container(container("cuda").gpu("1")).build(),
                pod("other").schedulerName("volcano").container(container("cuda").gpu("1")).build(),
                pod("runtime").runtimeClassName("nvidia").container(container("cuda").gpu("1")).build(),
                pod("bad").container(container("cuda").limit("nvidia.com/gpu", "one")).build());
    }

    @ParameterizedTest
    @MethodSource("pods")
    void thePolicyDecidesOnTheKeptTreeAsOnTheFullOne(ObjectNode pod) {
        // Fields the webhook never reads, around and inside the parts it does.
        ((ObjectNode) pod.get("metadata")).putObject("annotations").put("big", "x".repeat(10_000));
        ((ObjectNode) pod.get("spec")).putArray("volumes").addObject().put("name", "v");
        ((ObjectNode) pod.path("spec").path("containers").get(0)).putArray("args").add("--flag");
        ((ObjectNode) pod.path("spec").path("containers").get(0)).withObjectProperty("resources")
                .putArray("claims").addObject().put("name", "c");
        ObjectNode review = Reviews.podCreate(pod);
        JsonNode kept = read(JSON.writeValueAsString(review)).path("request").path("object");
        JsonNode full = review.path("request").path("object");
        AdmissionPolicy policy = new AdmissionPolicy(PolicyConfig.defaults().withCompat(HamiRelease.V2_10),
                DeviceConfig.defaults(), QuotaLookup.NONE);

        Decision onKept = policy.admit(kept, "team-a");
        Decision onFull = policy.admit(full, "team-a");

        assertThat(onKept.outcome()).isEqualTo(onFull.outcome());
        assertThat(onKept.code()).isEqualTo(onFull.code());
        assertThat(onKept.message()).isEqualTo(onFull.message());
        if (onFull.mutated() != null) {
            assertThat(JsonPatches.diff(kept, onKept.mutated())).isEqualTo(JsonPatches.diff(full, onFull.mutated()));
        }
        assertThat(kept.path("metadata").path("annotations").isEmpty()).as("only the keys vendors use").isTrue();
        assertThat(kept.path("spec").has("volumes")).isFalse();
        assertThat(kept.path("spec").path("containers").get(0).has("image")).isFalse();
        assertThat(kept.path("spec").path("containers").get(0).path("resources").has("claims")).isFalse();
    }

    @Test
    void envEntriesKeepTheCountAndTheirNamesOnly() {
        JsonNode kept = read(JSON.writeValueAsString(Reviews.podCreate(pod("p").container(container("c")
                .env("A", "x".repeat(50_000)).env("B", "b").env("C", "c")).build())));
        JsonNode env = kept.path("request").path("object").path("spec").path("containers").get(0).path("env");
        assertThat(env.size()).isEqualTo(3);
        assertThat(env.get(0)).isEqualTo(JSON.readTree("{\"name\":\"A\"}"));
    }

    @Test
    void vendorAnnotationsAndPostStartAreKept() {
        JsonNode kept = read(("{'request':{'object':{'metadata':{'annotations':{'huawei.com/vnpu-mode':'hami-core',"
                + "'other':'x'}},'spec':{'containers':[{'name':'c','lifecycle':{'preStop':{},'postStart':{'exec':"
                + "{'command':['x']}}}}]}}}}").replace('\'', '"'));
        JsonNode pod = kept.path("request").path("object");
        assertThat(pod.path("metadata").path("annotations")).isEqualTo(JSON.readTree(
                "{\"huawei.com/vnpu-mode\":\"hami-core\"}"));
        assertThat(pod.path("spec").path("containers").get(0).path("lifecycle")).isEqualTo(JSON.readTree(
                "{\"postStart\":{}}"));
    }

    @Test
    void wrongShapesKeepTheirShapeForTheErrorMessage() {
        JsonNode kept = read("{'request':{'object':{'spec':{'containers':{'a':[1,2,3]}},'metadata':['x']}}}"
                .replace('\'', '"'));
        assertThat(kept.path("request").path("object").path("spec").path("containers").isObject()).isTrue();
        assertThat(kept.path("request").path("object").path("spec").path("containers").size()).isZero();
        assertThat(kept.path("request").path("object").path("metadata").isArray()).isTrue();
    }

    @Test
    void emptyBodyIsNullAndTrailingTokensAreRefused() {
        assertThat(read("  \n ")).isNull();
        assertThatThrownBy(() -> read("{} {}")).hasMessageContaining("Trailing token");
    }

    @Test
    void theKeptTreeIsChargedAndSkippedPartsAreNot() {
        AtomicLong small = new AtomicLong();
        ObjectNode plain = pod("p").container(container("c").gpu("1")).build();
        ((ObjectNode) plain.get("metadata")).putObject("annotations"); // the (kept, empty) map itself
        read(JSON.writeValueAsString(Reviews.podCreate(plain)), small);
        AtomicLong padded = new AtomicLong();
        ObjectNode pod = pod("p").container(container("c").gpu("1")).build();
        ((ObjectNode) pod.get("metadata")).putObject("annotations").put("big", "x".repeat(2_000_000));
        read(JSON.writeValueAsString(Reviews.podCreate(pod)), padded);
        assertThat(small.get()).isPositive().isLessThan(64 * 1024);
        assertThat(padded.get()).isEqualTo(small.get());

        StringBuilder containers = new StringBuilder("{\"request\":{\"object\":{\"spec\":{\"containers\":[{}");
        containers.append(",{}".repeat(200_000)).append("]}}}}");
        AtomicLong many = new AtomicLong();
        read(containers.toString(), many);
        assertThat(many.get()).as("200,000 kept containers").isGreaterThan(200_000L * 96);
    }

    @Test
    void readConstraintsRefuseTinyNodesDeepNestingAndLongStringsCheaply() {
        String tiny = "{\"a\":[" + "{},".repeat(1_200_000) + "{}]}"; // 3.6 MB, 2.4 M tokens: past limit / 2
        assertThatThrownBy(() -> new ReviewReader(tiny.length() + 1).read(
                new ByteArrayInputStream(tiny.getBytes(StandardCharsets.US_ASCII)), bytes -> { }))
                .isInstanceOf(StreamConstraintsException.class).hasMessageContaining("Token count");
        String deep = "[".repeat(65) + "]".repeat(65);
        assertThatThrownBy(() -> read(deep)).isInstanceOf(StreamConstraintsException.class)
                .hasMessageContaining("nesting depth");
        String longName = "{\"request\":{\"uid\":\"" + "u".repeat(ReviewReader.MAX_STRING_LENGTH + 1) + "\"}}";
        assertThatThrownBy(() -> read(longName)).isInstanceOf(StreamConstraintsException.class)
                .hasMessageContaining("String value length");
        // The same long string where the webhook does not read it is skipped, never decoded.
        String skipped = "{\"request\":{\"x\":\"" + "u".repeat(ReviewReader.MAX_STRING_LENGTH + 1) + "\"}}";
        assertThat(read(skipped).path("request").size()).isZero();
    }
}
