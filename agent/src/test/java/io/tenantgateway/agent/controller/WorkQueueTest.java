package io.tenantgateway.agent.controller;

import static io.tenantgateway.agent.testing.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.tenantgateway.common.retry.Backoff;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class WorkQueueTest {
    private static final Backoff FAST = Backoff.exponential(Duration.ofMillis(5)).withMaxAttempts(4);

    private final List<String> runs = new CopyOnWriteArrayList<>();
    private WorkQueue<String> queue;

    @AfterEach
    void closeQueue() {
        if (queue != null) {
            queue.close();
        }
    }

    private WorkQueue<String> queue(WorkQueue.Reconciler<String> reconciler, Backoff backoff) {
        queue = new WorkQueue<>("test queue", "test-worker", reconciler, backoff, Duration.ofSeconds(5));
        return queue;
    }

    @Test
    void aKeyEnqueuedWhileQueuedRunsOnce() throws Exception {
        CountDownLatch blocker = new CountDownLatch(1);
        CountDownLatch blocking = new CountDownLatch(1);
        queue((key, attempt) -> {
            if (key.equals("block")) {
                blocking.countDown();
                blocker.await();
            }
            runs.add(key + "#" + attempt);
            return WorkQueue.Result.done();
        }, FAST).start();
        queue.enqueue("block");
        assertThat(blocking.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
        queue.enqueue("a");
        queue.enqueue("a");
        queue.enqueue("a");
        assertThat(queue.isQueued("a")).isTrue();
        blocker.countDown();
        await().atMost(WAIT).untilAsserted(() -> assertThat(runs).containsExactly("block#1", "a#1"));
        queue.enqueue("end");
        await().atMost(WAIT).untilAsserted(() -> assertThat(runs).containsExactly("block#1", "a#1", "end#1"));
    }

    @Test
    void aKeyEnqueuedWhileRunningRunsOnceMoreAfter() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch inFirstRun = new CountDownLatch(1);
        AtomicInteger calls = new AtomicInteger();
        queue((key, attempt) -> {
            if (calls.incrementAndGet() == 1) {
                inFirstRun.countDown();
                release.await();
            }
            runs.add(key);
            return WorkQueue.Result.done();
        }, FAST).start();
        queue.enqueue("a");
        assertThat(inFirstRun.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
        queue.enqueue("a");
        queue.enqueue("a");
        release.countDown();
        await().atMost(WAIT).untilAsserted(() -> assertThat(runs).containsExactly("a", "a"));
        queue.enqueue("b");
        await().atMost(WAIT).untilAsserted(() -> assertThat(runs).containsExactly("a", "a", "b"));
    }

    @Test
    void retryableFailuresAreRetriedWithTheBackoffUntilItIsExhausted() {
        queue(new WorkQueue.Reconciler<>() {
            @Override
            public WorkQueue.Result reconcile(String key, int attempt) {
                runs.add(key + "#" + attempt);
                if (key.equals("end")) {
                    return WorkQueue.Result.done();
                }
                throw new IllegalStateException("conflict");
            }

            @Override
            public boolean isRetryable(Exception e) {
                return true;
            }
        }, FAST).start();
        queue.enqueue("a");
        await().atMost(WAIT).untilAsserted(() -> assertThat(runs).containsExactly("a#1", "a#2", "a#3", "a#4"));
        // A fifth attempt would have come 40 ms after the fourth.
        queue.enqueueAfter("end", Duration.ofMillis(200));
        await().atMost(WAIT).untilAsserted(() -> assertThat(runs).containsExactly("a#1", "a#2", "a#3", "a#4", "end#1"));
    }

    @Test
    void aRetryResultIsRetriedAndASuccessStopsTheChain() {
        queue((key, attempt) -> {
            runs.add(key + "#" + attempt);
            return attempt < 3 ? WorkQueue.Result.retry() : WorkQueue.Result.done();
        }, Backoff.exponential(Duration.ofMillis(5))).start();
        queue.enqueue("a");
        await().atMost(WAIT).untilAsserted(() -> assertThat(runs).containsExactly("a#1", "a#2", "a#3"));
    }

    @Test
    void nonRetryableFailuresAreDropped() {
        queue((key, attempt) -> {
            runs.add(key + "#" + attempt);
            throw new IllegalArgumentException("bug");
        }, FAST).start();
        queue.enqueue("a");
        queue.enqueue("b");
        await().atMost(WAIT).untilAsserted(() -> assertThat(runs).containsExactly("a#1", "b#1"));
    }

    @Test
    void afterRunsTheKeyAgain() {
        queue((key, attempt) -> {
            runs.add(key);
            return runs.size() < 3 ? WorkQueue.Result.after(Duration.ofMillis(5)) : WorkQueue.Result.done();
        }, FAST).start();
        queue.enqueue("round");
        await().atMost(WAIT).untilAsserted(() -> assertThat(runs).containsExactly("round", "round", "round"));
    }

    @Test
    void closeStopsItAndLaterEnqueuesAreIgnored() throws Exception {
        CountDownLatch inRun = new CountDownLatch(1);
        AtomicInteger interrupted = new AtomicInteger();
        queue = new WorkQueue<>("test queue", "test-worker", (key, attempt) -> {
            runs.add(key);
            if (key.equals("slow")) {
                inRun.countDown();
                try {
                    new CountDownLatch(1).await(); // until close interrupts it
                } catch (InterruptedException e) {
                    interrupted.incrementAndGet();
                    throw e;
                }
            }
            return WorkQueue.Result.after(Duration.ofMillis(1));
        }, FAST, Duration.ofMillis(100));
        queue.enqueue("before-start");
        queue.start();
        queue.enqueue("slow");
        assertThat(inRun.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
        queue.close(); // interrupts the running reconcile; does not wait for it to unwind
        await().atMost(WAIT).untilAsserted(() -> assertThat(interrupted).hasValue(1));
        queue.enqueue("after-close");
        assertThat(runs).containsExactly("slow");
        assertThat(queue.isClosed()).isTrue();
        assertThatThrownBy(queue::start).hasMessage("test queue is closed");
    }

    @Test
    void periodicTasksRunOnTheWorker() {
        List<String> threads = new CopyOnWriteArrayList<>();
        queue((key, attempt) -> WorkQueue.Result.done(), FAST).start();
        queue.every(Duration.ofMillis(5), () -> {
            threads.add(Thread.currentThread().getName());
            if (threads.size() == 1) {
                throw new IllegalStateException("the next run still happens");
            }
        });
        await().atMost(WAIT).untilAsserted(() -> assertThat(threads).hasSizeGreaterThanOrEqualTo(3));
        assertThat(threads).allMatch("test-worker"::equals);
    }
}
