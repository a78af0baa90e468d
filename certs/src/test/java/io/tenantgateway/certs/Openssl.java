package io.tenantgateway.certs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Runs the machine's openssl binary (tests only): an independent check of what we write and read. */
final class Openssl {
    private Openssl() {
    }

    record Result(int exitCode, String output) {
    }

    static Result run(String... args) throws IOException, InterruptedException {
        ProcessBuilder builder = new ProcessBuilder(prepend(args)).redirectErrorStream(true);
        Process process = builder.start();
        byte[] output = process.getInputStream().readAllBytes();
        assertThat(process.waitFor(30, TimeUnit.SECONDS)).as("openssl finished").isTrue();
        return new Result(process.exitValue(), new String(output, StandardCharsets.UTF_8));
    }

    static String ok(String... args) throws IOException, InterruptedException {
        Result result = run(args);
        assertThat(result.exitCode()).as("openssl %s: %s", List.of(args), result.output()).isZero();
        return result.output();
    }

    private static List<String> prepend(String... args) {
        java.util.ArrayList<String> command = new java.util.ArrayList<>();
        command.add("openssl");
        command.addAll(List.of(args));
        return command;
    }
}
