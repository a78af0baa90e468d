package io.tenantgateway.webhook;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * A bounded ring of the latest admissions (no pod specs), newest first, for a {@code /debug/admissions} endpoint
 * and for tests. Thread-safe; adding is O(1) and never blocks for long.
 */
public final class RecentAdmissions {
    private static final JsonMapper JSON = JsonMapper.builder().build();

    private final int capacity;
    private final ArrayDeque<AdmissionRecord> records;
    private long total;

    public RecentAdmissions(int capacity) {
        if (capacity < 0) {
            throw new IllegalArgumentException("capacity: " + capacity + " (expected: >= 0)");
        }
        this.capacity = capacity;
        this.records = new ArrayDeque<>(Math.min(capacity, 1024));
    }

    public int capacity() {
        return capacity;
    }

    synchronized void add(AdmissionRecord record) {
        total++;
        if (capacity == 0) {
            return;
        }
        if (records.size() == capacity) {
            records.removeLast();
        }
        records.addFirst(record);
    }

    /** The kept records, newest first. */
    public synchronized List<AdmissionRecord> snapshot() {
        return new ArrayList<>(records);
    }

    /** How many admissions were recorded since start, including those the ring no longer holds. */
    public synchronized long total() {
        return total;
    }

    /** The snapshot as JSON: {@code {"capacity":N,"total":N,"admissions":[{...}, ...]}}, newest first. */
    public String toJson() {
        List<AdmissionRecord> snapshot;
        long seen;
        synchronized (this) {
            snapshot = new ArrayList<>(records);
            seen = total;
        }
        ObjectNode root = JSON.createObjectNode();
        root.put("capacity", capacity);
        root.put("total", seen);
        ArrayNode list = root.putArray("admissions");
        for (Iterator<AdmissionRecord> it = snapshot.iterator(); it.hasNext();) {
            AdmissionRecord r = it.next();
            ObjectNode item = list.addObject();
            for (Map.Entry<String, String> field : List.of(
                    Map.entry("time", r.time().toString()), Map.entry("uid", r.uid()),
                    Map.entry("namespace", r.namespace()), Map.entry("name", r.name()),
                    Map.entry("operation", r.operation()), Map.entry("route", r.route().label()),
                    Map.entry("decision", r.decision()))) {
                item.put(field.getKey(), field.getValue());
            }
            item.put("code", r.code());
            item.put("message", r.message());
            item.put("patchOperations", r.patchOperations());
            item.put("warnings", r.warnings());
            item.put("durationMillis", r.duration().toNanos() / 1_000_000.0);
        }
        return JSON.writeValueAsString(root);
    }
}
