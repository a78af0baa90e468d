package io.tenantgateway.agent.ops;

import io.tenantgateway.agent.main.Main;
import java.io.PrintWriter;
import java.io.StringWriter;

/** The CLI run in-process, as a user would type it, with what it printed. */
record Cli(int exitCode, String out, String err) {
    static Cli run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Main.run(new PrintWriter(out, true), new PrintWriter(err, true), args);
        return new Cli(code, out.toString(), err.toString());
    }

    /** For assertion messages. */
    String both() {
        return "exit " + exitCode + "\n--- stdout\n" + out + "--- stderr\n" + err;
    }
}
