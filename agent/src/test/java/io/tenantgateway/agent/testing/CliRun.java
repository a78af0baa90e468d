package io.tenantgateway.agent.testing;

import io.tenantgateway.agent.main.Main;
import java.io.PrintWriter;
import java.io.StringWriter;

/** The CLI run in-process, as a user would type it, with its exit code and what it printed. */
public record CliRun(int exitCode, String out, String err) {
    public static CliRun of(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Main.run(new PrintWriter(out, true), new PrintWriter(err, true), args);
        return new CliRun(code, out.toString(), err.toString());
    }

    /** For assertion messages. */
    public String both() {
        return "exit " + exitCode + "\n--- stdout\n" + out + "--- stderr\n" + err;
    }
}
