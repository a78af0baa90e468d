package io.tenantgateway.common.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LifecycleTest {
    private static class Recorder extends Lifecycle {
        final List<String> calls = new ArrayList<>();
        RuntimeException startFailure;

        Recorder() {
            super("recorder r1");
        }

        @Override
        protected void doStart() {
            calls.add("start");
            if (startFailure != null) {
                throw startFailure;
            }
        }

        @Override
        protected void doClose() {
            calls.add("close");
        }
    }

    @Test
    void startAndCloseAreIdempotent() {
        Recorder r = new Recorder();
        assertThat(r.state()).isEqualTo(Lifecycle.State.NEW);
        r.start();
        r.start();
        assertThat(r.isRunning()).isTrue();
        r.close();
        r.close();
        assertThat(r.calls).containsExactly("start", "close");
        assertThat(r.state()).isEqualTo(Lifecycle.State.CLOSED);
    }

    @Test
    void aFailedStartLeavesItClosedAndSaysSo() {
        Recorder r = new Recorder();
        r.startFailure = new IllegalArgumentException("port 80 in use");
        assertThatThrownBy(r::start).isInstanceOf(IllegalStateException.class)
                .hasMessage("recorder r1 failed to start: port 80 in use (closed after the failed start)")
                .hasCauseInstanceOf(IllegalArgumentException.class);
        assertThat(r.isClosed()).isTrue();
        assertThat(r.calls).containsExactly("start", "close");
        assertThatThrownBy(r::start).isInstanceOf(IllegalStateException.class).hasMessage("recorder r1 is closed");
        r.close();
        assertThat(r.calls).containsExactly("start", "close");
    }

    @Test
    void aMessageThatNamesTheComponentIsKept() {
        Recorder r = new Recorder();
        r.startFailure = new IllegalStateException("recorder r1: informers did not start within PT5S");
        assertThatThrownBy(r::start)
                .hasMessage("recorder r1: informers did not start within PT5S (closed after the failed start)");
    }

    @Test
    void startAfterCloseThrows() {
        Recorder r = new Recorder();
        r.start();
        r.close();
        assertThatThrownBy(r::start).isInstanceOf(IllegalStateException.class).hasMessage("recorder r1 is closed");
    }

    @Test
    void closingANeverStartedComponentStillReleasesWhatItOwns() {
        Recorder r = new Recorder();
        r.close();
        r.close();
        assertThat(r.calls).containsExactly("close");
        assertThatThrownBy(r::start).hasMessage("recorder r1 is closed");
    }

    @Test
    void aFailureWhileUndoingIsKeptAsSuppressed() {
        Recorder r = new Recorder() {
            @Override
            protected void doClose() {
                throw new IllegalStateException("undo failed");
            }
        };
        r.startFailure = new IllegalStateException("boom");
        assertThatThrownBy(r::start).cause().hasMessage("boom")
                .satisfies(cause -> assertThat(cause.getSuppressed()).extracting(Throwable::getMessage)
                        .containsExactly("undo failed"));
    }
}
