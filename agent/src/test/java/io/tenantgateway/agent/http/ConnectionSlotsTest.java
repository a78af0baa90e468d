package io.tenantgateway.agent.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tenantgateway.agent.http.ConnectionSlots.Admission;
import io.tenantgateway.agent.http.ConnectionSlots.Opened;
import io.tenantgateway.agent.http.ConnectionSlots.State;
import org.junit.jupiter.api.Test;

/** Whom a new connection displaces at the caps: the decision that keeps a probe's way in open. */
class ConnectionSlotsTest {
    @Test
    void atTheCapTheSlotIdleTheLongestGoesOfAnyPeer() {
        ConnectionSlots slots = new ConnectionSlots(3, 3);
        Opened a = slots.open("10.0.0.1", "a");
        Opened b = slots.open("10.0.0.2", "b");
        Opened c = slots.open("10.0.0.2", "c");
        // a answers a request and becomes idle again: it is now the youngest idle slot.
        slots.set(a.slot(), State.RECEIVING);
        slots.set(a.slot(), State.RESPONDING);
        slots.set(a.slot(), State.IDLE);
        Opened probe = slots.open("10.0.0.9", "probe");
        assertThat(probe.admission()).isEqualTo(Admission.DISPLACED_OLDEST_IDLE);
        assertThat(probe.displaced().owner).isEqualTo("b");
        assertThat(slots.open()).isEqualTo(3);
        // Closing the displaced connection later frees nothing twice.
        slots.close(b.slot());
        assertThat(slots.open()).isEqualTo(3);
        assertThat(slots.open("10.0.0.9", "next").displaced().owner).isEqualTo("c");
    }

    @Test
    void withNoneIdleTheOldestReceivingSlotOfTheBiggestPeerGoesAndRespondingOnesNever() {
        ConnectionSlots slots = new ConnectionSlots(3, 3);
        Opened small = slots.open("10.0.0.1", "small");
        Opened big1 = slots.open("10.0.0.2", "big1");
        Opened big2 = slots.open("10.0.0.2", "big2");
        slots.set(small.slot(), State.RECEIVING);
        slots.set(big1.slot(), State.RECEIVING);
        slots.set(big2.slot(), State.RECEIVING);
        assertThat(slots.open("10.0.0.9", "probe").displaced().owner).isEqualTo("big1");

        // An answer handed to a client that does not read it: waiting on the client, displaceable too.
        ConnectionSlots stalled = new ConnectionSlots(2, 2);
        Opened reader = stalled.open("10.0.0.1", "reader");
        Opened nonReader = stalled.open("10.0.0.2", "nonReader");
        stalled.set(reader.slot(), State.RESPONDING);
        stalled.set(nonReader.slot(), State.RESPONDING);
        stalled.set(nonReader.slot(), State.SENDING);
        Opened next = stalled.open("10.0.0.9", "next");
        assertThat(next.admission()).isEqualTo(Admission.DISPLACED_OLDEST_WAITING);
        assertThat(next.displaced().owner).isEqualTo("nonReader");

        ConnectionSlots busy = new ConnectionSlots(2, 2);
        Opened x = busy.open("10.0.0.1", "x");
        Opened y = busy.open("10.0.0.2", "y");
        busy.set(x.slot(), State.RESPONDING);
        busy.set(y.slot(), State.RESPONDING);
        Opened refused = busy.open("10.0.0.9", "z");
        assertThat(refused.admission()).isEqualTo(Admission.REFUSED);
        assertThat(refused.slot()).isNull();
        assertThat(busy.open()).isEqualTo(2);
        busy.close(x.slot());
        assertThat(busy.open("10.0.0.9", "z").admission()).isEqualTo(Admission.TAKEN);
    }

    @Test
    void aPeerAtItsCapDisplacesItsOwnOldestIdleThenReceivingAndIsRefusedOnlyWhenAllAreResponding() {
        ConnectionSlots slots = new ConnectionSlots(100, 2);
        Opened other = slots.open("10.0.0.3", "other");
        Opened first = slots.open("10.0.0.1", "first");
        Opened second = slots.open("10.0.0.1", "second");
        Opened third = slots.open("10.0.0.1", "third");
        assertThat(third.admission()).isEqualTo(Admission.DISPLACED_PEER);
        assertThat(third.displaced().owner).isEqualTo("first");
        assertThat(slots.openFrom("10.0.0.1")).isEqualTo(2);
        slots.set(second.slot(), State.RECEIVING);
        assertThat(slots.open("10.0.0.1", "fourth").displaced().owner).as("idle before receiving").isEqualTo("third");
        Opened fifth = slots.open("10.0.0.1", "fifth");
        assertThat(fifth.displaced().owner).isEqualTo("fourth");
        slots.set(fifth.slot(), State.RECEIVING);
        assertThat(slots.open("10.0.0.1", "sixth").displaced().owner).as("the oldest receiving").isEqualTo("second");
        assertThat(other.slot().held).as("another peer's slot is never taken for it").isTrue();
        assertThat(slots.peers()).isEqualTo(2);
    }

    @Test
    void slotsClosedFreeTheirPeer() {
        ConnectionSlots slots = new ConnectionSlots(4, 2);
        Opened a = slots.open("p", "a");
        slots.close(a.slot());
        slots.close(a.slot());
        assertThat(slots.open()).isZero();
        assertThat(slots.peers()).isZero();
        slots.set(a.slot(), State.IDLE); // a closed slot's late state change is ignored
        assertThat(slots.open()).isZero();
        assertThatThrownBy(() -> new ConnectionSlots(4, 5)).hasMessage("max connections per peer: 5"
                + " (expected: 1..4)");
    }
}
