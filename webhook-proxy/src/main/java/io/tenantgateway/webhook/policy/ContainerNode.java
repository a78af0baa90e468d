package io.tenantgateway.webhook.policy;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * One container of the pod being admitted, as a view over the JSON tree: vendors read {@code resources.limits}
 * (and {@code resources.requests} where HAMi does), write {@code resources.limits} and {@code env} through it, so
 * every vendor mutates the same way HAMi's {@code MutateAdmission} does on the decoded Pod.
 *
 * <p>Not thread-safe; lives for one admission.
 */
public final class ContainerNode {
    private final ObjectNode node;
    private final String path;

    ContainerNode(ObjectNode node, String path) {
        this.node = node;
        this.path = path;
    }

    /** The container's name ({@code ""} when the object has none, which the API server rejects later anyway). */
    public String name() {
        JsonNode name = node.get("name");
        return name != null && name.isString() ? name.stringValue() : "";
    }

    /** Where this container sits in the pod, e.g. {@code spec.initContainers[0]}, for error messages. */
    public String path() {
        return path;
    }

    /** {@code securityContext.privileged: true}. */
    public boolean privileged() {
        JsonNode securityContext = node.get("securityContext");
        if (securityContext == null || securityContext.isNull()) {
            return false;
        }
        if (!securityContext.isObject()) {
            throw new UndecodablePodException(path + ".securityContext: expected an object, got "
                    + JsonTypes.describe(securityContext));
        }
        JsonNode privileged = securityContext.get("privileged");
        if (privileged == null || privileged.isNull()) {
            return false;
        }
        if (!privileged.isBoolean()) {
            throw new UndecodablePodException(path + ".securityContext.privileged: expected a boolean, got "
                    + JsonTypes.describe(privileged));
        }
        return privileged.booleanValue();
    }

    /** Whether {@code resources.limits} names the resource. */
    public boolean hasLimit(String resource) {
        return limit(resource).isPresent();
    }

    /** The parsed limit for a resource, if set. */
    public Optional<Quantity> limit(String resource) {
        return quantity(limits(false), "limits", resource);
    }

    /** The parsed request for a resource ({@code resources.requests}), if set. */
    public Optional<Quantity> request(String resource) {
        return quantity(requests(), "requests", resource);
    }

    /**
     * The limit, else the request, for a resource: how HAMi's {@code resourceValue}/{@code resourcePresent} and its
     * quota's {@code getRequest} read a container (a container may declare a GPU under {@code requests} only).
     */
    public Optional<Quantity> limitOrRequest(String resource) {
        Optional<Quantity> limit = limit(resource);
        return limit.isPresent() ? limit : request(resource);
    }

    /** The resource names {@code resources.limits} holds (a per-chip backend is looked up by them). */
    List<String> limitNames() {
        return names(limits(false));
    }

    /** The resource names {@code resources.limits} or {@code resources.requests} holds. */
    List<String> declaredNames() {
        List<String> names = new ArrayList<>(limitNames());
        names.addAll(names(requests()));
        return names;
    }

    private static List<String> names(ObjectNode list) {
        return list == null ? List.of() : List.copyOf(list.propertyNames());
    }

    /** Whether {@code resources.limits} or {@code resources.requests} names the resource. */
    public boolean declares(String resource) {
        return limitOrRequest(resource).isPresent();
    }

    private Optional<Quantity> quantity(ObjectNode list, String listName, String resource) {
        if (resource == null || resource.isEmpty() || list == null) {
            return Optional.empty();
        }
        JsonNode value = list.get(resource);
        if (value == null || value.isNull()) {
            return Optional.empty();
        }
        String text;
        if (value.isString()) {
            text = value.stringValue();
        } else if (value.isNumber()) {
            text = value.numberValue().toString();
        } else {
            throw new UndecodablePodException(path + ".resources." + listName + "[" + resource + "]: expected a"
                    + " quantity, got " + JsonTypes.describe(value));
        }
        return Optional.of(Quantity.parse(text).orElseThrow(() -> new UndecodablePodException(path
                + ".resources." + listName + "[" + resource + "]: '" + text + "' is not a quantity (expected: a value"
                + " matching " + Quantity.FORMAT + ", e.g. 1, 3000, 2Gi)")));
    }

    /** Sets a limit, creating {@code resources} and {@code limits} when absent. */
    public void putLimit(String resource, String quantity) {
        limits(true).put(resource, quantity);
    }

    /** Sets a request, creating {@code resources} and {@code requests} when absent. */
    public void putRequest(String resource, String quantity) {
        ObjectNode resources = JsonTypes.object(node, "resources", path, true);
        JsonTypes.object(resources, "requests", path + ".resources", true).put(resource, quantity);
    }

    /** Whether {@code resources.requests} exists (Go: a non-nil map; writing into a nil one panics in HAMi v2.9). */
    public boolean hasRequestsMap() {
        return requests() != null;
    }

    /** Whether {@code env} has an entry with this name. */
    public boolean hasEnv(String name) {
        JsonNode env = node.get("env");
        if (env == null || !env.isArray()) {
            return false;
        }
        for (JsonNode variable : env) {
            JsonNode n = variable.get("name");
            if (n != null && n.isString() && n.stringValue().equals(name)) {
                return true;
            }
        }
        return false;
    }

    /** Whether {@code lifecycle.postStart} is set. */
    public boolean hasPostStart() {
        ObjectNode lifecycle = JsonTypes.object(node, "lifecycle", path, false);
        return lifecycle != null && JsonTypes.object(lifecycle, "postStart", path + ".lifecycle", false) != null;
    }

    /** Sets {@code lifecycle.postStart.exec.command}, creating {@code lifecycle} when absent. */
    public void setPostStartCommand(String... command) {
        ObjectNode lifecycle = JsonTypes.object(node, "lifecycle", path, true);
        ArrayNode array = lifecycle.putObject("postStart").putObject("exec").putArray("command");
        for (String part : command) {
            array.add(part);
        }
    }

    /** Appends an environment variable (HAMi appends, it does not replace an existing entry of that name). */
    public void appendEnv(String name, String value) {
        JsonNode env = node.get("env");
        ArrayNode array;
        if (env == null || env.isNull()) {
            array = node.putArray("env");
        } else if (env.isArray()) {
            array = (ArrayNode) env;
        } else {
            throw new UndecodablePodException(path + ".env: expected an array, got " + JsonTypes.describe(env));
        }
        ObjectNode variable = array.addObject();
        variable.put("name", name);
        if (value != null && !value.isEmpty()) {
            variable.put("value", value); // Go omits an empty value: {"name":"ASCEND_VISIBLE_DEVICES"}
        }
    }

    private ObjectNode requests() {
        ObjectNode resources = JsonTypes.object(node, "resources", path, false);
        return resources == null ? null : JsonTypes.object(resources, "requests", path + ".resources", false);
    }

    private ObjectNode limits(boolean create) {
        ObjectNode resources = JsonTypes.object(node, "resources", path, create);
        if (resources == null) {
            return null;
        }
        return JsonTypes.object(resources, "limits", path + ".resources", create);
    }
}
