package io.tenantgateway.tools.bench;

import static java.util.Objects.requireNonNull;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * CPU time per component of the in-process setup, from the JVM's own counters: the sum of the per-thread CPU
 * time ({@code ThreadMXBean.getThreadCpuTime}) of the threads whose name starts with the component's prefix, and
 * the whole process ({@code OperatingSystemMXBean.getProcessCpuTime}, which includes GC and JIT threads).
 *
 * <p>The process clock is coarse: on Linux it counts in 10 ms ticks, so a short run can read 0 although its
 * threads ran. The {@link #PROCESS} figure is therefore never below the sum of every Java thread's own CPU time
 * over the period, which is counted in nanoseconds: {@code max(process ticks, Java threads)}.
 *
 * <p>Every component runs on event loops it names itself, and loops live for the whole run, so a thread's CPU
 * time never disappears between two samples.
 */
final class CpuMeter {
    static final String PROCESS = "process";

    private final Map<String, String> prefixes;
    private final com.sun.management.ThreadMXBean threads;
    private final com.sun.management.OperatingSystemMXBean os;

    /** @param prefixes component name → thread-name prefix */
    CpuMeter(Map<String, String> prefixes) {
        this.prefixes = new LinkedHashMap<>(requireNonNull(prefixes, "prefixes"));
        this.threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        this.os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        if (!threads.isThreadCpuTimeSupported()) {
            throw new IllegalStateException("per-thread CPU time is not supported by this JVM (expected: HotSpot on"
                    + " Linux)");
        }
        threads.setThreadCpuTimeEnabled(true);
    }

    /** CPU nanoseconds so far, per component and for the {@link #PROCESS}. */
    Sample sample() {
        Map<String, Long> nanos = new LinkedHashMap<>();
        prefixes.keySet().forEach(name -> nanos.put(name, 0L));
        Map<Long, Long> perThread = new HashMap<>();
        long[] ids = threads.getAllThreadIds();
        ThreadInfo[] infos = threads.getThreadInfo(ids);
        long[] cpu = threads.getThreadCpuTime(ids);
        for (int i = 0; i < ids.length; i++) {
            if (infos[i] == null || cpu[i] < 0) {
                continue; // the thread ended meanwhile
            }
            perThread.put(ids[i], cpu[i]);
            String threadName = infos[i].getThreadName();
            for (Map.Entry<String, String> entry : prefixes.entrySet()) {
                if (threadName.startsWith(entry.getValue())) {
                    nanos.merge(entry.getKey(), cpu[i], Long::sum);
                    break;
                }
            }
        }
        nanos.put(PROCESS, os.getProcessCpuTime());
        return new Sample(System.nanoTime(), nanos, perThread);
    }

    /**
     * CPU nanoseconds per component at one instant.
     *
     * @param cpuNanos per component, and the process clock (coarse) under {@link #PROCESS}
     * @param threadNanos every live Java thread's CPU time, by thread id (fine)
     */
    record Sample(long wallNanos, Map<String, Long> cpuNanos, Map<Long, Long> threadNanos) {
        /** CPU used since {@code earlier}, per component, and the wall time between them. */
        Usage since(Sample earlier) {
            Map<String, Long> delta = new LinkedHashMap<>();
            cpuNanos.forEach((name, value) -> delta.put(name, value - earlier.cpuNanos.getOrDefault(name, 0L)));
            // Threads started meanwhile count from 0; threads that ended meanwhile lose their last slice.
            long javaThreads = 0;
            for (Map.Entry<Long, Long> thread : threadNanos.entrySet()) {
                javaThreads += Math.max(0, thread.getValue() - earlier.threadNanos.getOrDefault(thread.getKey(), 0L));
            }
            delta.merge(PROCESS, javaThreads, Math::max);
            return new Usage(wallNanos - earlier.wallNanos, delta);
        }
    }

    /** CPU used over a period. */
    record Usage(long wallNanos, Map<String, Long> cpuNanos) {
        long cpu(String component) {
            return cpuNanos.getOrDefault(component, 0L);
        }

        /** The component's share of {@code cores} over the period (1.0 = every core busy all the time). */
        double share(String component, int cores) {
            return wallNanos <= 0 ? 0 : (double) cpu(component) / ((double) wallNanos * cores);
        }
    }
}
