package io.tenantgateway.webhook.policy;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.zjsonpatch.JsonPatch;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import tools.jackson.core.JsonGenerator;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * The patch is gomodules jsonpatch v2's (what HAMi's controller-runtime answers with): objects key by key, arrays
 * index by index, replace on a changed type or scalar; and applying it gives the mutated tree.
 */
class JsonPatchesTest {
    private static final JsonMapper JSON = JsonMapper.builder().build();

    private static JsonNode json(String text) {
        return JSON.readTree(text.replace('\'', '"'));
    }

    @ParameterizedTest(name = "{0} → {1}")
    @CsvSource(delimiter = '|', value = {
        // objects: add, nested change, remove (after the keys of the mutated object)
        "{'a':1,'b':{'c':'x'},'gone':true} | {'a':1,'b':{'c':'y'},'new':'n'} "
                + "| [{'op':'replace','path':'/b/c','value':'y'},{'op':'add','path':'/new','value':'n'},"
                + "{'op':'remove','path':'/gone'}]",
        // arrays index by index: the original's surplus removed last first, then the additions, then each index
        "{'l':[{'n':'a'},{'n':'b'},{'n':'c'}]} | {'l':[{'n':'a','x':1}]} "
                + "| [{'op':'remove','path':'/l/2'},{'op':'remove','path':'/l/1'},{'op':'add','path':'/l/0/x','value':1}]",
        "{'env':[{'name':'A'}]} | {'env':[{'name':'A'},{'name':'B','value':'1'},{'name':'C'}]} "
                + "| [{'op':'add','path':'/env/1','value':{'name':'B','value':'1'}},"
                + "{'op':'add','path':'/env/2','value':{'name':'C'}}]",
        // an entry inserted in front is index-wise changes, not a shifted insert (no longest common subsequence)
        "{'l':['b','c']} | {'l':['a','b','c']} "
                + "| [{'op':'add','path':'/l/2','value':'c'},{'op':'replace','path':'/l/0','value':'a'},"
                + "{'op':'replace','path':'/l/1','value':'b'}]",
        // a changed type is replaced whole, null included
        "{'a':{'b':1},'n':null,'g':2} | {'a':[1],'n':'x','g':2.5} "
                + "| [{'op':'replace','path':'/a','value':[1]},{'op':'replace','path':'/n','value':'x'},"
                + "{'op':'replace','path':'/g','value':2.5}]",
        // RFC 6901 escapes in keys
        "{'limits':{}} | {'limits':{'nvidia.com/gpu':'1','a~b':'2'}} "
                + "| [{'op':'add','path':'/limits/nvidia.com~1gpu','value':'1'},{'op':'add','path':'/limits/a~0b','value':'2'}]",
        "{'same':[1,{'x':null}]} | {'same':[1,{'x':null}]} | []",
    })
    void operationsAreHamis(String original, String mutated, String expected) {
        JsonNode before = json(original);
        JsonNode after = json(mutated);

        ArrayNode patch = JsonPatches.diff(before, after);

        assertThat(patch).isEqualTo(json(expected));
        assertThat(JsonPatch.apply(patch, before)).isEqualTo(after);
    }

    @Test
    void numbersCompareAsGoFloat64s() {
        assertThat(JsonPatches.diff(json("{'f':1,'big':9007199254740993}"), json("{'f':1.0,'big':9007199254740992}")))
                .isEmpty();
    }

    @Test
    void writtenPatchIsTheTreePatch() {
        JsonNode before = json("{'spec':{'containers':[{'name':'a','resources':{'limits':{'nvidia.com/gpu':'1'}}},"
                + "{'name':'b','env':[{'name':'X'}]}]},'metadata':{'annotations':{'k':'v'}}}");
        ObjectNode after = (ObjectNode) before.deepCopy();
        after.withObjectProperty("spec").put("schedulerName", "hami-scheduler");
        ((ObjectNode) after.path("spec").path("containers").get(0).path("resources").path("limits"))
                .put("nvidia.com/gpucores", "100");
        ((ArrayNode) after.path("spec").path("containers").get(1).path("env")).addObject().put("name", "Y");
        ((ObjectNode) after.path("metadata")).remove("annotations");

        StringWriter written = new StringWriter();
        int operations;
        try (JsonGenerator out = JSON.createGenerator(written)) {
            operations = JsonPatches.write(before, after, out);
        }

        assertThat(json(written.toString())).isEqualTo(JsonPatches.diff(before, after));
        assertThat(operations).isEqualTo(4);
    }

    @Test
    void arraysOfTensOfThousandsOfEntriesAreComparedInOnePass() {
        // A longest-common-subsequence diff holds n × m cells: 40,000 entries each would be 6.4 GB of table.
        ArrayNode before = JSON.createArrayNode();
        ArrayNode after = JSON.createArrayNode();
        for (int i = 0; i < 40_000; i++) {
            before.addObject().put("name", "c" + i);
            after.addObject().put("name", "c" + i).put("gpucores", "100");
        }

        ArrayNode patch = JsonPatches.diff(before, after);

        assertThat(patch).hasSize(40_000);
        assertThat(patch.get(39_999)).isEqualTo(json("{'op':'add','path':'/39999/gpucores','value':'100'}"));
    }
}
