package io.tenantgateway.webhook.policy;

import static org.assertj.core.api.Assertions.assertThat;

import io.tenantgateway.hami.HamiRelease;
import io.tenantgateway.webhook.quota.InMemoryQuotaLookup;
import io.tenantgateway.webhook.quota.QuotaLookup;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * Issue 31: the per-chip backends (Ascend, Iluvatar) are looked up by resource name, so an admission asks the same
 * few chips whether 7 or 3,000 are configured, and decides exactly as asking every chip in file order would.
 */
class ChipVendorsTest {
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final PolicyConfig BOTH = PolicyConfig.defaults().withEnableAscend(true).withEnableIluvatar(true);

    private static JsonNode pod(String json) {
        return JSON.readTree(json.replace('\'', '"'));
    }

    /** {@code n} Ascend chips {@code huawei.com/Chip<i>}, with {@code -memory} names and one template each. */
    private static String chips(int n, boolean overwriteEnv) {
        StringBuilder yaml = new StringBuilder("vnpus:\n");
        for (int i = 0; i < n; i++) {
            yaml.append("- commonWord: Chip").append(i).append("\n  resourceName: huawei.com/Chip").append(i)
                    .append("\n  resourceMemoryName: huawei.com/Chip").append(i).append("-memory")
                    .append("\n  memoryAllocatable: 32768\n  memoryCapacity: 32768\n  overwriteEnv: ")
                    .append(overwriteEnv).append("\n  templates:\n  - {name: vir02, memory: 2184}\n");
        }
        return yaml.toString();
    }

    /** A backend that counts how often the webhook asks it, around a real chip backend. */
    private record Counting(ChipVendors.Chip chip, AtomicInteger asked) implements ChipVendors.Chip {
        @Override
        public String name() {
            return chip.name();
        }

        @Override
        public boolean mutate(ContainerNode container, PodNode pod) {
            asked.incrementAndGet();
            return chip.mutate(container, pod);
        }

        @Override
        public QuotaNames quotaNames() {
            asked.incrementAndGet();
            return chip.quotaNames();
        }

        @Override
        public String countName() {
            return chip.countName();
        }

        @Override
        public List<String> writtenNames() {
            return chip.writtenNames();
        }

        @Override
        public boolean actsOnEveryContainer() {
            return chip.actsOnEveryContainer();
        }

        @Override
        public void mutateUnasked(ContainerNode container) {
            chip.mutateUnasked(container);
        }
    }

    /** The policy's vendors with each chip group's chips counted; {@code asked} sums every chip's count. */
    private static List<Vendor> counted(DeviceConfig devices, AtomicInteger asked) {
        List<Vendor> vendors = new ArrayList<>();
        for (Vendor vendor : devices.vendors(BOTH)) {
            vendors.add(vendor instanceof ChipVendors group ? new ChipVendors(group.name(), group.chips().stream()
                    .map(chip -> new Counting(chip, asked)).toList()) : vendor);
        }
        return vendors;
    }

    /** The same vendors with every chip a backend of its own, as HAMi runs them: each asked for every container. */
    private static List<Vendor> unindexed(DeviceConfig devices, PolicyConfig config) {
        List<Vendor> vendors = new ArrayList<>();
        for (Vendor vendor : devices.vendors(config)) {
            if (vendor instanceof ChipVendors group) {
                vendors.addAll(group.chips());
            } else {
                vendors.add(vendor);
            }
        }
        return vendors;
    }

    @Test
    void theVendorListAndTheChipsAskedDoNotGrowWithTheChipsConfigured() {
        String oneChip = "{'spec':{'containers':[{'name':'c','resources':{'limits':{'huawei.com/Chip1234':'1',"
                + "'huawei.com/Chip1234-memory':'2000'}}}]}}";
        String nvidiaOnly = "{'spec':{'containers':[{'name':'c','resources':{'limits':{'nvidia.com/gpu':'1'}}}]}}";
        InMemoryQuotaLookup quota = new InMemoryQuotaLookup().put("ns", "huawei.com/Chip1234-memory", 100000, 0);
        List<Integer> askedPerAdmission = new ArrayList<>();
        for (int configured : new int[] {1300, 3000}) {
            DeviceConfig devices = DeviceConfig.parse(chips(configured, false), "dc.yaml");
            assertThat(devices.vendors(BOTH)).as("one entry per vendor, not per chip").hasSizeLessThanOrEqualTo(16);
            AtomicInteger asked = new AtomicInteger();
            AdmissionPolicy policy = new AdmissionPolicy(BOTH, counted(devices, asked), quota);

            Decision decision = policy.admit(pod(oneChip), "ns");
            assertThat(decision.allowed()).as(decision.message()).isTrue();
            assertThat(decision.mutated().at("/spec/containers/0/resources/limits/huawei.com~1Chip1234-memory")
                    .asString()).as("the chip's template").isEqualTo("2184");
            askedPerAdmission.add(asked.getAndSet(0));

            assertThat(policy.admit(pod(nvidiaOnly), "ns").allowed()).isTrue();
            assertThat(asked.get()).as("no chip asked about an NVIDIA pod").isZero();
        }
        // The one chip asked: to mutate, then for its quota resources and its request. The same with 1,300 or 3,000
        // configured (asking every chip would be 1,300 and 3,000 times at least).
        assertThat(askedPerAdmission).containsExactly(3, 3);
    }

    @Test
    void chipsAreFoundInAMapByResourceName() {
        DeviceConfig devices = DeviceConfig.parse(chips(3000, false) + "  overwriteEnv: true\n", "dc.yaml");
        ChipVendors ascend = (ChipVendors) devices.vendors(BOTH).stream()
                .filter(v -> v instanceof ChipVendors && v.name().equals("Ascend")).findFirst().orElseThrow();
        assertThat(ascend.chips()).hasSize(3000);
        assertThat(ascend.positions("huawei.com/Chip2999")).containsExactly(2999);
        assertThat(ascend.positions("huawei.com/Chip2999-memory")).isEmpty();
        ContainerNode container = new PodNode((ObjectNode) pod("{'spec':{'containers':[{'name':'c','resources':"
                + "{'limits':{'huawei.com/Chip7':'1'}}}]}}")).containers().get(0);
        assertThat(ascend.named(container)).containsExactly(7);
    }

    /** Configurations where the order of chips matters, and pods that ask for one chip, several, or none. */
    @Test
    void decidesAsAskingEveryChipInFileOrderWould() {
        String tricky = """
                vnpus:
                - {commonWord: A, resourceName: x.com/a, resourceMemoryName: x.com/b, memoryAllocatable: 100,
                   memoryCapacity: 100, overwriteEnv: true, runtimeClassName: rc-a,
                   templates: [{name: t1, memory: 10}, {name: t2, memory: 50}]}
                - {commonWord: B, resourceName: x.com/b, resourceMemoryName: x.com/b-memory, memoryAllocatable: 200,
                   memoryCapacity: 200, runtimeClassName: rc-b}
                - {commonWord: C, resourceName: x.com/a, resourceMemoryName: x.com/c-memory, memoryAllocatable: 300,
                   memoryCapacity: 300, overwriteEnv: true}
                - {commonWord: D, resourceName: '', overwriteEnv: true}
                - {commonWord: Ascend910C, resourceName: x.com/910c, resourceMemoryName: x.com/910c-memory,
                   memoryAllocatable: 65536, memoryCapacity: 65536, superPod: true}
                iluvatars:
                - {chipName: I1, commonWord: I1, resourceCountName: x.com/b, resourceCoreName: x.com/i-core}
                - {chipName: I2, commonWord: I2, resourceCountName: x.com/i2, resourceCoreName: x.com/i2-core,
                   resourceMemoryName: x.com/i2-mem}
                """;
        List<String> pods = List.of(
                "{'spec':{'containers':[{'name':'c','resources':{'limits':{'nvidia.com/gpu':'1'}}}]}}",
                "{'spec':{'containers':[{'name':'c','resources':{'limits':{'x.com/a':'1'}}}]}}",
                "{'spec':{'containers':[{'name':'c','resources':{'limits':{'x.com/a':'1','x.com/b':'40'}}}]}}",
                "{'spec':{'containers':[{'name':'c','resources':{'limits':{'x.com/b':'2'}}}]}}",
                "{'spec':{'initContainers':[{'name':'i','resources':{'limits':{'x.com/i2':'3'}}}],"
                        + "'containers':[{'name':'c','resources':{'limits':{'x.com/a':'2','x.com/a-memory':'9'}}},"
                        + "{'name':'d','resources':{'requests':{'x.com/i2':'1','x.com/i2-mem':'1'}}}]}}",
                "{'spec':{'containers':[{'name':'c','resources':{'limits':{'x.com/910c':'1'},'requests':"
                        + "{'x.com/910c':'1'}}}]}}",
                "{'spec':{'containers':[{'name':'c','resources':{'limits':{'x.com/910c':'3'}}}]}}",
                "{'spec':{'containers':[{'name':'c','resources':{'limits':{'x.com/a':'1','x.com/b':'999'}}}]}}");
        InMemoryQuotaLookup quota = new InMemoryQuotaLookup().put("ns", "x.com/b", 30, 0)
                .put("ns", "x.com/c-memory", 1000, 900).put("ns", "x.com/i2-mem", 1, 0);
        for (HamiRelease compat : HamiRelease.values()) {
            PolicyConfig config = BOTH.withCompat(compat);
            for (String yaml : List.of(tricky, chips(5, true), chips(5, false))) {
                DeviceConfig devices = DeviceConfig.parse(yaml, "dc.yaml");
                for (QuotaLookup lookup : List.of(QuotaLookup.NONE, quota)) {
                    AdmissionPolicy indexed = new AdmissionPolicy(config, devices, lookup);
                    AdmissionPolicy everyChip = new AdmissionPolicy(config, unindexed(devices, config), lookup);
                    for (String pod : pods) {
                        assertThat(indexed.admit(pod(pod), "ns")).as("%s %s %s", compat, pod, lookup)
                                .isEqualTo(everyChip.admit(pod(pod), "ns"));
                    }
                }
            }
        }
    }
}
