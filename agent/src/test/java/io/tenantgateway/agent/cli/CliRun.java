package io.tenantgateway.agent.cli;

import io.tenantgateway.agent.main.Main;
import java.io.PrintWriter;
import java.io.StringWriter;

/** Runs the CLI in-process and captures what it prints. */
record CliRun(int exitCode, String out, String err) {
    static CliRun of(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Main.run(new PrintWriter(out, true), new PrintWriter(err, true), args);
        return new CliRun(code, out.toString(), err.toString());
    }
}
