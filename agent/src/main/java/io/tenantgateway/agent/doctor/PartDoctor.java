package io.tenantgateway.agent.doctor;

import java.util.List;

/**
 * A part's lines of {@code doctor}'s checklist, implemented by its entry in the list of parts
 * ({@link io.tenantgateway.agent.part.PartKind}) so that a part that is off can say so (a skipped line). The doctor
 * asks every entry at every stage, in the list's order.
 */
public interface PartDoctor {
    /** The part's checks at {@code stage}, in order; none by default. */
    default List<DoctorCheck> doctor(DoctorStage stage, DoctorContext context) {
        return List.of();
    }
}
