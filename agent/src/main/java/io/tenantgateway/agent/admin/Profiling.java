package io.tenantgateway.agent.admin;

import static java.util.Objects.requireNonNull;

import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.text.ParseException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.management.JMException;
import javax.management.ObjectName;
import jdk.jfr.Configuration;
import jdk.jfr.Recording;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code --enable-profiling}: the JVM's answer to upstream's {@code /debug/pprof} on the admin port. Off by default
 * (the paths are 404 then, as upstream's pprof paths are without the flag).
 *
 * <ul>
 * <li>{@code /debug/threads}: every thread's stack with lock information, what {@code jcmd Thread.print} shows.
 * <li>{@code /debug/heap-histogram}: live objects by class, what {@code jcmd GC.class_histogram} shows; it runs a
 * full GC first, as jcmd does.
 * <li>{@code /debug/jfr?seconds=N}: a Java Flight Recorder recording ({@code profile} settings) of N seconds
 * (1..300, default 30), downloaded as a {@code .jfr} file; one at a time (409 while one runs). With
 * {@code --enable-contention-profiling} it also records every monitor wait and park of 1 ms or more
 * ({@code jdk.JavaMonitorEnter}, {@code jdk.JavaMonitorWait}, {@code jdk.ThreadPark}; upstream: the block profile).
 * </ul>
 *
 * <p>Diagnostic commands and JFR block, so they run on a Vert.x worker thread, never on the event loop; the
 * recording's N seconds are a timer, not a sleeping thread.
 */
final class Profiling {
    private static final Logger log = LoggerFactory.getLogger(Profiling.class);
    static final List<String> PATHS = List.of("/debug/threads", "/debug/heap-histogram", "/debug/jfr");
    static final int MAX_SECONDS = 300;
    static final int DEFAULT_SECONDS = 30;
    static final Duration CONTENTION_THRESHOLD = Duration.ofMillis(1);
    private static final String[] STRING_ARRAY = {String[].class.getName()};

    private final Vertx vertx;
    private final boolean contention;
    private final AtomicBoolean recording = new AtomicBoolean();

    Profiling(Vertx vertx, boolean contention) {
        this.vertx = requireNonNull(vertx, "vertx");
        this.contention = contention;
    }

    /** Answers {@code request} when {@code path} is a profiling path; returns whether it did. */
    boolean handle(HttpServerRequest request, String path) {
        switch (path) {
            case "/debug/threads" -> text(request, "threadPrint", "-l");
            case "/debug/heap-histogram" -> text(request, "gcClassHistogram");
            case "/debug/jfr" -> jfr(request);
            default -> {
                return false;
            }
        }
        return true;
    }

    private void text(HttpServerRequest request, String command, String... args) {
        vertx.<String>executeBlocking(() -> diagnosticCommand(command, args), false).onComplete(result -> {
            HttpServerResponse response = request.response();
            if (result.succeeded()) {
                response.putHeader("content-type", "text/plain; charset=utf-8").putHeader("cache-control", "no-store")
                        .end(result.result());
            } else {
                log.warn("diagnostic command {} failed: {}", command, result.cause().toString());
                response.setStatusCode(500).putHeader("content-type", "text/plain; charset=utf-8")
                        .end(command + " failed: " + result.cause().getMessage() + "\n");
            }
        });
    }

    /** The {@code com.sun.management:type=DiagnosticCommand} MBean: jcmd's commands, in process. */
    static String diagnosticCommand(String command, String... args) throws JMException {
        return (String) ManagementFactory.getPlatformMBeanServer().invoke(
                new ObjectName("com.sun.management:type=DiagnosticCommand"), command, new Object[] {args},
                STRING_ARRAY);
    }

    private void jfr(HttpServerRequest request) {
        int seconds = seconds(request.getParam("seconds"));
        HttpServerResponse response = request.response();
        if (!recording.compareAndSet(false, true)) {
            response.setStatusCode(409).putHeader("content-type", "text/plain; charset=utf-8")
                    .end("a JFR recording is already running; try again when it is done\n");
            return;
        }
        vertx.<Recording>executeBlocking(this::startRecording, false).onComplete(started -> {
            if (started.failed()) {
                recordingFailed(response, "JFR recording failed to start", started.cause());
                return;
            }
            Recording jfr = started.result();
            log.info("JFR recording started seconds={} contention={}", seconds, contention);
            vertx.setTimer(seconds * 1000L, id -> vertx.<Path>executeBlocking(() -> dump(jfr), false)
                    .onComplete(dumped -> {
                        if (dumped.failed()) {
                            recordingFailed(response, "JFR recording failed", dumped.cause());
                            return;
                        }
                        send(response, dumped.result(), seconds);
                    }));
        });
    }

    private Recording startRecording() throws IOException, ParseException {
        Recording jfr = new Recording(Configuration.getConfiguration("profile"));
        jfr.setName("tenant-gateway-admin");
        jfr.setToDisk(true);
        if (contention) {
            for (String event : List.of("jdk.JavaMonitorEnter", "jdk.JavaMonitorWait", "jdk.ThreadPark")) {
                jfr.enable(event).withThreshold(CONTENTION_THRESHOLD).withStackTrace();
            }
        }
        jfr.start();
        return jfr;
    }

    /** Stops the recording and writes it to a temporary file; the recording is closed either way. */
    private static Path dump(Recording jfr) throws IOException {
        try {
            jfr.stop();
            Path file = Files.createTempFile("tenant-gateway-", ".jfr");
            try {
                jfr.dump(file);
            } catch (IOException | RuntimeException e) {
                Files.deleteIfExists(file);
                throw e;
            }
            return file;
        } finally {
            jfr.close();
        }
    }

    private void send(HttpServerResponse response, Path file, int seconds) {
        response.putHeader("content-type", "application/octet-stream")
                .putHeader("content-disposition", "attachment; filename=\"tenant-gateway-" + seconds + "s.jfr\"")
                .putHeader("cache-control", "no-store");
        // Streamed from the file (sendfile where the platform has it), deleted once sent or failed.
        response.sendFile(file.toString()).onComplete(sent -> {
            recording.set(false);
            if (sent.failed()) {
                log.warn("JFR download failed (client gone?): {}", sent.cause().toString());
            }
            vertx.executeBlocking(() -> Files.deleteIfExists(file), false).onFailure(e ->
                    log.warn("cannot delete JFR file {}: {}", file, e.toString()));
        });
    }

    /** {@code ?seconds=N}: 1..{@value #MAX_SECONDS}, default {@value #DEFAULT_SECONDS}. */
    static int seconds(String value) {
        if (value == null) {
            return DEFAULT_SECONDS;
        }
        try {
            int seconds = Integer.parseInt(value);
            if (seconds >= 1 && seconds <= MAX_SECONDS) {
                return seconds;
            }
        } catch (NumberFormatException e) {
            // answered below
        }
        throw new IllegalArgumentException("seconds: '" + value + "' (expected: 1.." + MAX_SECONDS + ")");
    }

    /** The recording could not be made: free the slot, say why in the log and to the caller (500). */
    private void recordingFailed(io.vertx.core.http.HttpServerResponse response, String what, Throwable cause) {
        recording.set(false);
        log.warn("{}: {}", what, cause.toString());
        response.setStatusCode(500).putHeader("content-type", "text/plain; charset=utf-8")
                .end(what + ": " + cause.getMessage() + "\n");
    }
}
