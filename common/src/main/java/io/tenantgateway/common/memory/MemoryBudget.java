package io.tenantgateway.common.memory;

import static java.util.Objects.requireNonNull;

import java.lang.management.ManagementFactory;
import java.lang.reflect.Field;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The process-wide memory budget: every buffer whose size a peer decides (bytes queued towards a target, inbound
 * messages requested but not yet delivered, webhook bodies in flight) is reserved from one of its {@link Account}s
 * before it is held, and released when it is gone. An account is a fixed share of the JVM's heap or direct-memory
 * limit, so the agent's input buffers fit inside the bounds the launcher sets whatever any peer sends: past an
 * account's limit a part stops reading (tunnel) or refuses the request (webhook, 429/503) instead of dying.
 *
 * <p>The accounts and their shares are the agent's memory-budget table (agent/REFERENCE.md, "Memory budget"). Thread-safe:
 * reservations are a lock-free compare-and-set on one counter per account.
 */
public final class MemoryBudget {
    /** Which JVM limit an account is a share of. */
    public enum Pool { HEAP, DIRECT }

    private static final MemoryBudget JVM = fromLimits(Runtime.getRuntime().maxMemory(), maxDirectMemory());

    private final long heapLimit;
    private final long directLimit;
    private final Map<String, Account> accounts = new ConcurrentHashMap<>();
    private final List<Account> ordered = new CopyOnWriteArrayList<>();

    private MemoryBudget(long heapLimit, long directLimit) {
        if (heapLimit <= 0) {
            throw new IllegalArgumentException("heapLimit: " + heapLimit + " (expected: > 0)");
        }
        if (directLimit <= 0) {
            throw new IllegalArgumentException("directLimit: " + directLimit + " (expected: > 0)");
        }
        this.heapLimit = heapLimit;
        this.directLimit = directLimit;
    }

    /** The budget of this JVM ({@code -Xmx}, {@code -XX:MaxDirectMemorySize}); one per process. */
    public static MemoryBudget jvm() {
        return JVM;
    }

    /** A budget over the given limits (tests, and tools that size several agents in one JVM). */
    public static MemoryBudget fromLimits(long heapLimit, long directLimit) {
        return new MemoryBudget(heapLimit, directLimit);
    }

    public long heapLimit() {
        return heapLimit;
    }

    public long directLimit() {
        return directLimit;
    }

    /**
     * The account named {@code name}, made on first use as {@code share} of the pool's limit (at least
     * {@code minimum} bytes). A second call with the same name returns the same account (its first share stays).
     */
    public Account account(String name, Pool pool, double share, long minimum) {
        requireNonNull(name, "name");
        requireNonNull(pool, "pool");
        if (!(share > 0 && share <= 1)) {
            throw new IllegalArgumentException("share: " + share + " (expected: in (0, 1])");
        }
        return accounts.computeIfAbsent(name, n -> {
            long base = pool == Pool.HEAP ? heapLimit : directLimit;
            Account account = new Account(n, pool, Math.max(minimum, (long) (base * share)));
            ordered.add(account);
            return account;
        });
    }

    /** The accounts in the order they were made (for metrics and {@code /debug}). */
    public List<Account> accounts() {
        return List.copyOf(ordered);
    }

    /** One bounded share of the budget. */
    public static final class Account {
        private final String name;
        private final Pool pool;
        private final long limit;
        private final AtomicLong used = new AtomicLong();
        private final AtomicLong peak = new AtomicLong();
        private final AtomicLong refusals = new AtomicLong();

        Account(String name, Pool pool, long limit) {
            this.name = name;
            this.pool = pool;
            this.limit = limit;
        }

        public String name() {
            return name;
        }

        public Pool pool() {
            return pool;
        }

        /** Bytes this account may hold. */
        public long limit() {
            return limit;
        }

        /** Bytes held now (may pass {@link #limit()} only through {@link #reserveAnyway}). */
        public long used() {
            return used.get();
        }

        /** The most bytes held at once since the start. */
        public long peak() {
            return peak.get();
        }

        /** How many {@link #tryReserve} calls were refused. */
        public long refusals() {
            return refusals.get();
        }

        /** Reserves {@code bytes} if they fit under the limit; {@code false} (and nothing reserved) otherwise. */
        public boolean tryReserve(long bytes) {
            checkBytes(bytes);
            while (true) {
                long now = used.get();
                long next = now + bytes;
                if (next > limit) {
                    refusals.incrementAndGet();
                    return false;
                }
                if (used.compareAndSet(now, next)) {
                    peak.accumulateAndGet(next, Math::max);
                    return true;
                }
            }
        }

        /**
         * Counts {@code bytes} that are already held (a message the transport has delivered, say), even past the
         * limit; returns whether the account is now over its limit, so the caller stops asking for more.
         */
        public boolean reserveAnyway(long bytes) {
            checkBytes(bytes);
            long next = used.addAndGet(bytes);
            peak.accumulateAndGet(next, Math::max);
            return next > limit;
        }

        /** Gives back {@code bytes} reserved earlier. */
        public void release(long bytes) {
            checkBytes(bytes);
            long next = used.addAndGet(-bytes);
            if (next < 0) {
                used.addAndGet(bytes);
                throw new IllegalStateException(name + ": released " + bytes + " bytes, only " + (next + bytes)
                        + " were reserved");
            }
        }

        /** Whether the account holds more than {@code fraction} of its limit. */
        public boolean above(double fraction) {
            return used.get() > (long) (limit * fraction);
        }

        private static void checkBytes(long bytes) {
            if (bytes < 0) {
                throw new IllegalArgumentException("bytes: " + bytes + " (expected: >= 0)");
            }
        }

        @Override
        public String toString() {
            return name + "[" + pool + " " + used() + "/" + limit + "]";
        }
    }

    private static final Pattern SIZE = Pattern.compile("(\\d+)([kKmMgG]?)");

    /**
     * The direct-memory limit the JVM enforces ({@code -XX:MaxDirectMemorySize}; when unset, the heap's maximum): the
     * field {@code java.nio.Bits} checks every allocation against, read as Netty reads it. Only where that field cannot
     * be read, the HotSpot diagnostic bean, else the command line: {@code java.lang.management} loads the JMX
     * classes (about 240 on JDK 17), which nothing else on the tunnel path needs (TunnelOnlyClassLoadingIT).
     */
    static long maxDirectMemory() {
        long bits = bitsMaxMemory();
        return bits > 0 ? bits : maxDirectMemoryFromManagement();
    }

    /** {@code java.nio.Bits.MAX_MEMORY} through {@code sun.misc.Unsafe}; -1 where that is not possible. */
    static long bitsMaxMemory() {
        try {
            Class<?> unsafeClass = Class.forName("sun.misc.Unsafe");
            Field theUnsafe = unsafeClass.getDeclaredField("theUnsafe");
            theUnsafe.setAccessible(true);
            Object unsafe = theUnsafe.get(null);
            Field maxMemory = Class.forName("java.nio.Bits").getDeclaredField("MAX_MEMORY");
            Object base = unsafeClass.getMethod("staticFieldBase", Field.class).invoke(unsafe, maxMemory);
            long offset = (Long) unsafeClass.getMethod("staticFieldOffset", Field.class).invoke(unsafe, maxMemory);
            return (Long) unsafeClass.getMethod("getLongVolatile", Object.class, long.class).invoke(unsafe, base,
                    offset);
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            return -1;
        }
    }

    /** The limit as the management beans tell it: the HotSpot diagnostic bean, else the command line. */
    static long maxDirectMemoryFromManagement() {
        long heap = Runtime.getRuntime().maxMemory();
        try {
            Class<?> beanClass = Class.forName("com.sun.management.HotSpotDiagnosticMXBean");
            Object bean = ManagementFactory.getPlatformMXBean(beanClass.asSubclass(
                    java.lang.management.PlatformManagedObject.class));
            Object option = beanClass.getMethod("getVMOption", String.class).invoke(bean, "MaxDirectMemorySize");
            String value = (String) option.getClass().getMethod("getValue").invoke(option);
            long parsed = Long.parseLong(value);
            return parsed > 0 ? parsed : heap;
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            for (String arg : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
                if (arg.startsWith("-XX:MaxDirectMemorySize=")) {
                    Matcher m = SIZE.matcher(arg.substring("-XX:MaxDirectMemorySize=".length()));
                    if (m.matches()) {
                        long n = Long.parseLong(m.group(1));
                        return switch (m.group(2).toLowerCase()) {
                            case "k" -> n << 10;
                            case "m" -> n << 20;
                            case "g" -> n << 30;
                            default -> n;
                        };
                    }
                }
            }
            return heap;
        }
    }
}
