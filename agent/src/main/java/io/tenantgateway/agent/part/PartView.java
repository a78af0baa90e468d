package io.tenantgateway.agent.part;

import static java.util.Objects.requireNonNull;

import java.util.List;
import java.util.Optional;

/**
 * What a running part shows of itself, taken as a snapshot: its section of the status page ({@code /ui}) and its JSON
 * at {@code /debug/<part name>}. The admin server renders every part's view the same way, so a part's view lives in
 * its package and the admin server names no part. Read on the admin server's event loop: {@link Part#view()} must
 * not block.
 *
 * @param notes lines above the table (what is missing and why), plain text
 * @param table the rows, or what to say when there are none
 * @param debug the JSON at {@code /debug/<part name>}: maps with string keys, lists, strings, numbers, booleans and
 *     {@code null}
 */
public record PartView(List<String> notes, Table table, Object debug) {
    public PartView {
        notes = List.copyOf(notes);
        requireNonNull(table, "table");
        requireNonNull(debug, "debug");
    }

    /**
     * A table of plain-text cells.
     *
     * @param columns each column's label (the cells' {@code data-label}, for narrow screens and tests) and heading
     * @param rows one cell per column each
     * @param empty what the section says instead of an empty table
     */
    public record Table(List<Column> columns, List<List<String>> rows, String empty) {
        public Table {
            columns = List.copyOf(columns);
            rows = rows.stream().map(List::copyOf).toList();
            requireNonNull(empty, "empty");
            for (List<String> row : rows) {
                if (row.size() != columns.size()) {
                    throw new IllegalArgumentException("row of " + row.size() + " cells (expected: "
                            + columns.size() + ", one per column)");
                }
            }
        }
    }

    /** A column: {@code label} names its cells, {@code heading} is shown. */
    public record Column(String label, String heading) {
        public Column {
            requireNonNull(label, "label");
            requireNonNull(heading, "heading");
        }
    }

    /**
     * A part's section as the status page lists it: the part's name (its {@code /debug/} path), its heading, and its
     * view now (empty while the part is off or not started).
     */
    public record Section(String name, String title, Optional<PartView> view) {
        public Section {
            requireNonNull(name, "name");
            requireNonNull(title, "title");
            requireNonNull(view, "view");
        }
    }
}
