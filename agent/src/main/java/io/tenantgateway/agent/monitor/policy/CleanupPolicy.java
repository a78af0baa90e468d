package io.tenantgateway.agent.monitor.policy;

import static java.util.Objects.requireNonNull;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Pure decisions about HAMi-core's per-container cache directories ({@code <podUID>_<container>} under the containers
 * directory): which to delete after a scan, as HAMi's device plugin does since it took the cleanup over from the
 * monitor. Nothing here reads the disk, the API or the clock; the caller passes what it observed and keeps the
 * returned state for the next scan.
 *
 * <p>Rules:
 * <ul>
 *   <li>A directory of a live pod (one the API lists, whatever its phase, except {@code Succeeded} and
 *       {@code Failed}) is never deleted, and its grace starts again once the pod is gone.</li>
 *   <li>A directory without a live pod is deleted only once it has been seen without one for at least the grace
 *       (HAMi's default: 5 minutes), measured from this agent's first such sighting.</li>
 *   <li>Only a scan whose pod list the API answered may delete: with the API down (the list failed or is stale)
 *       nothing is deleted, and no grace runs out meanwhile that a later scan would act on without asking.</li>
 *   <li>A name that is no {@code <uid>_<container>} is left alone (it is not HAMi-core's).</li>
 * </ul>
 */
public final class CleanupPolicy {
    /** HAMi's grace before a directory without a live pod is deleted. */
    public static final Duration DEFAULT_GRACE = Duration.ofMinutes(5);

    private final Duration grace;

    public CleanupPolicy(Duration grace) {
        requireNonNull(grace, "grace");
        if (grace.isNegative()) {
            throw new IllegalArgumentException("grace: " + grace + " (expected: >= 0)");
        }
        this.grace = grace;
    }

    public Duration grace() {
        return grace;
    }

    /**
     * What one scan decides.
     *
     * @param delete the directory names to delete now
     * @param orphanSince for the next scan: each directory without a live pod, and when it was first seen so
     * @param waiting directories without a live pod still in their grace (or kept because the API did not answer)
     */
    public record Decision(List<String> delete, Map<String, Instant> orphanSince, List<String> waiting) {
        public Decision {
            delete = List.copyOf(delete);
            orphanSince = Map.copyOf(orphanSince);
            waiting = List.copyOf(waiting);
        }
    }

    /**
     * Decides one scan.
     *
     * @param directories the directory names found now
     * @param livePodUids the UIDs of live pods, when the API answered this scan's list; empty when it did not
     * @param orphanSince the previous decision's {@link Decision#orphanSince}
     * @param now this scan's time
     */
    public Decision decide(Set<String> directories, Optional<Set<String>> livePodUids,
            Map<String, Instant> orphanSince, Instant now) {
        requireNonNull(directories, "directories");
        requireNonNull(livePodUids, "livePodUids");
        requireNonNull(orphanSince, "orphanSince");
        requireNonNull(now, "now");
        List<String> delete = new ArrayList<>();
        List<String> waiting = new ArrayList<>();
        Map<String, Instant> next = new HashMap<>();
        for (String directory : directories) {
            Optional<String> uid = podUid(directory);
            if (uid.isEmpty()) {
                continue;
            }
            if (livePodUids.isEmpty()) {
                // The API did not answer: nothing is known about the pod, so no grace starts or runs out.
                Instant since = orphanSince.get(directory);
                if (since != null) {
                    next.put(directory, since);
                    waiting.add(directory);
                }
                continue;
            }
            if (livePodUids.get().contains(uid.get())) {
                continue;
            }
            Instant since = orphanSince.getOrDefault(directory, now);
            if (!now.isBefore(since.plus(grace))) {
                delete.add(directory);
            } else {
                next.put(directory, since);
                waiting.add(directory);
            }
        }
        delete.sort(null);
        waiting.sort(null);
        return new Decision(delete, next, waiting);
    }

    /**
     * The pod UID of a cache directory name {@code <podUID>_<container>}: a UID is 36 characters (8-4-4-4-12 hex
     * digits and dashes); a container name is a DNS label, so the first {@code _} ends the UID.
     */
    public static Optional<String> podUid(String directory) {
        int underscore = directory.indexOf('_');
        if (underscore != 36 || directory.length() == underscore + 1) {
            return Optional.empty();
        }
        String uid = directory.substring(0, underscore);
        for (int i = 0; i < uid.length(); i++) {
            char c = uid.charAt(i);
            boolean dash = i == 8 || i == 13 || i == 18 || i == 23;
            if (dash ? c != '-' : Character.digit(c, 16) < 0) {
                return Optional.empty();
            }
        }
        return Optional.of(uid);
    }

    /** The container name of a cache directory name, when {@link #podUid} reads one. */
    public static Optional<String> containerName(String directory) {
        return podUid(directory).map(uid -> directory.substring(uid.length() + 1));
    }
}
