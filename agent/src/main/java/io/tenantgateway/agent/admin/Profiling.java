package io.tenantgateway.agent.admin;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.agent.http.HttpLoop;
import io.tenantgateway.agent.http.Request;
import io.tenantgateway.agent.http.Response;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.StandardOpenOption;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.text.ParseException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
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
 * <p>Threading: {@link #handle} runs on the admin port's event loop. Diagnostic commands, JFR and file work block,
 * so they run on the {@link HttpLoop}'s blocking threads, never on the event loop; the recording's N seconds are a
 * timer on the loop, not a sleeping thread; the file goes out with {@code sendfile}. A full blocking executor is
 * answered 503.
 */
final class Profiling {
    private static final Logger log = LoggerFactory.getLogger(Profiling.class);
    static final List<String> PATHS = List.of("/debug/threads", "/debug/heap-histogram", "/debug/jfr");
    static final int MAX_SECONDS = 300;
    static final int DEFAULT_SECONDS = 30;
    static final Duration CONTENTION_THRESHOLD = Duration.ofMillis(1);
    private static final String[] STRING_ARRAY = {String[].class.getName()};

    private final HttpLoop loop;
    private final boolean contention;
    private final AtomicBoolean recording = new AtomicBoolean();

    Profiling(HttpLoop loop, boolean contention) {
        this.loop = requireNonNull(loop, "loop");
        this.contention = contention;
    }

    /** Answers the request when {@code path} is a profiling path; returns whether it did. */
    boolean handle(Request request, Response response, String path) {
        switch (path) {
            case "/debug/threads" -> text(response, "threadPrint", "-l");
            case "/debug/heap-histogram" -> text(response, "gcClassHistogram");
            case "/debug/jfr" -> jfr(request, response);
            default -> {
                return false;
            }
        }
        return true;
    }

    private void text(Response response, String command, String... args) {
        loop.blocking(() -> diagnosticCommand(command, args)).whenComplete((text, failure) -> {
            if (failure == null) {
                response.header("content-type", "text/plain; charset=utf-8").header("cache-control", "no-store")
                        .end(text);
            } else if (failure instanceof RejectedExecutionException) {
                busy(response, failure);
            } else {
                log.warn("diagnostic command {} failed: {}", command, failure.toString());
                response.status(500).header("content-type", "text/plain; charset=utf-8")
                        .end(command + " failed: " + failure.getMessage() + "\n");
            }
        });
    }

    /** The blocking threads are all taken: 503, try again. */
    private static void busy(Response response, Throwable failure) {
        response.status(503).header("retry-after", "5").header("content-type", "text/plain; charset=utf-8")
                .end(failure.getMessage() + "\n");
    }

    /** The {@code com.sun.management:type=DiagnosticCommand} MBean: jcmd's commands, in process. */
    static String diagnosticCommand(String command, String... args) throws JMException {
        return (String) ManagementFactory.getPlatformMBeanServer().invoke(
                new ObjectName("com.sun.management:type=DiagnosticCommand"), command, new Object[] {args},
                STRING_ARRAY);
    }

    private void jfr(Request request, Response response) {
        int seconds = seconds(request.param("seconds"));
        if (!recording.compareAndSet(false, true)) {
            response.status(409).header("content-type", "text/plain; charset=utf-8")
                    .end("a JFR recording is already running; try again when it is done\n");
            return;
        }
        loop.blocking(this::startRecording).whenComplete((jfr, failure) -> {
            if (failure != null) {
                recordingFailed(response, "JFR recording failed to start", failure);
                return;
            }
            log.info("JFR recording started seconds={} contention={}", seconds, contention);
            try {
                loop.schedule(Duration.ofSeconds(seconds), () -> loop.blocking(() -> dump(jfr))
                        .whenComplete((file, dumpFailure) -> {
                            if (dumpFailure != null) {
                                if (dumpFailure instanceof RejectedExecutionException) {
                                    jfr.close(); // dump never ran (every blocking thread busy): release it here
                                }
                                recordingFailed(response, "JFR recording failed", dumpFailure);
                                return;
                            }
                            send(response, file, seconds);
                        }));
            } catch (RuntimeException e) { // the loop is closing: the agent stops
                jfr.close();
                recordingFailed(response, "JFR recording stopped", e);
            }
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

    /** A recording written to a temporary file, opened for sending. */
    private record Dumped(Path path, FileChannel channel, long size) {
    }

    /**
     * Stops the recording, writes it to a temporary file and opens that for sending; the recording is closed either
     * way, the file deleted when this fails.
     */
    private static Dumped dump(Recording jfr) throws IOException {
        try {
            jfr.stop();
            Path file = Files.createTempFile("tenant-gateway-", ".jfr");
            try {
                jfr.dump(file);
                FileChannel channel = FileChannel.open(file, StandardOpenOption.READ);
                return new Dumped(file, channel, channel.size());
            } catch (IOException | RuntimeException e) {
                Files.deleteIfExists(file);
                throw e;
            }
        } finally {
            jfr.close();
        }
    }

    private void send(Response response, Dumped file, int seconds) {
        response.header("content-type", "application/octet-stream")
                .header("content-disposition", "attachment; filename=\"tenant-gateway-" + seconds + "s.jfr\"")
                .header("cache-control", "no-store");
        // Streamed from the file (sendfile), deleted once sent or failed.
        response.sendFile(file.channel(), file.size()).whenComplete((ignored, failure) -> {
            recording.set(false);
            if (failure != null) {
                log.warn("JFR download failed (client gone?): {}", failure.toString());
            }
            loop.blocking(() -> Files.deleteIfExists(file.path())).whenComplete((deleted, e) -> {
                if (e != null) {
                    log.warn("cannot delete JFR file {}: {}", file.path(), e.toString());
                }
            });
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
    private void recordingFailed(Response response, String what, Throwable cause) {
        recording.set(false);
        if (cause instanceof RejectedExecutionException) {
            busy(response, cause);
            return;
        }
        log.warn("{}: {}", what, cause.toString());
        response.status(500).header("content-type", "text/plain; charset=utf-8")
                .end(what + ": " + cause.getMessage() + "\n");
    }
}
