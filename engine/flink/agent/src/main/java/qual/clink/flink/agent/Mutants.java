package qual.clink.flink.agent;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.util.Collection;
import java.util.List;

/**
 * Flink's deliberately broken variants ("mutants", engine/flink/mutants.ts and
 * docs/mutants.md), each a plausible bug in a real committer, put into Flink 2.2.0's own
 * methods by the agent's advice (FaultPointAgent) when the agent is started with
 * {@code mutant=<name>}. Without it (or with {@code mutant=none}) no mutant advice is
 * installed at all. An unknown name stops the JVM at start: a run never goes on with a
 * mutant it did not ask for, or without the one it asked for.
 *
 * <pre>
 *   drop-restored-committables        FileCommitter.commit skipped inside CommitterOperator.initializeState
 *   commit-at-prepare                 FileWriter.prepareCommit completes each pending file at once
 *   swallow-recovery-commit-failure   OutputStreamBasedPendingFile.commitAfterRecovery: a failure is logged and dropped
 *   offsets-off-by-one                KafkaPartitionSplitSerializer.deserialize: a restored position one record back
 *   accept-any-object                 S3Committer.commitAfterRecovery: its refusals of the object at the key dropped
 * </pre>
 *
 * The name is also put in the system property {@link #PROPERTY}, which the job's open-time
 * sink line reports (engine/flink/job: {@code mutant=<name>}).
 */
public final class Mutants {
  private Mutants() {}

  public static final String DROP_RESTORED_COMMITTABLES = "drop-restored-committables";
  public static final String COMMIT_AT_PREPARE = "commit-at-prepare";
  public static final String SWALLOW_RECOVERY_COMMIT_FAILURE = "swallow-recovery-commit-failure";
  public static final String OFFSETS_OFF_BY_ONE = "offsets-off-by-one";
  public static final String ACCEPT_ANY_OBJECT = "accept-any-object";

  /** Every mutant the agent implements (engine/flink/mutants.ts names the same). */
  public static final List<String> NAMES = List.of(DROP_RESTORED_COMMITTABLES, COMMIT_AT_PREPARE, SWALLOW_RECOVERY_COMMIT_FAILURE, OFFSETS_OFF_BY_ONE, ACCEPT_ANY_OBJECT);

  /** The system property that names the mutant in force in this JVM ("none" for the correct engine). */
  public static final String PROPERTY = "clink.qual.flink.mutant";

  /** The evidence line's prefix each time a mutant changes what Flink does. */
  public static final String ACTED_LINE = "clink-qual flink mutant acted:";

  private static volatile String active = "none";

  /** Checks the name (null, empty and "none": no mutant) and records it; throws on an unknown one. */
  static String activate(String name) {
    String n = name == null || name.isEmpty() ? "none" : name;
    if (!n.equals("none") && !NAMES.contains(n)) throw new IllegalArgumentException("clink-qual flink agent: unknown mutant '" + n + "' (known: " + String.join(", ", NAMES) + ")");
    active = n;
    System.setProperty(PROPERTY, n);
    return n;
  }

  public static String active() {
    return active;
  }

  public static boolean is(String name) {
    return active.equals(name);
  }

  static void acted(String what) {
    System.err.println(ACTED_LINE + " mutant=" + active + " " + what);
  }

  /** drop-restored-committables: whether FileCommitter.commit(requests) is skipped (restored requests, inside initializeState). */
  public static boolean dropsRestored(Collection<?> requests) {
    if (!is(DROP_RESTORED_COMMITTABLES) || !FaultPoints.recovering() || requests == null || requests.isEmpty()) return false;
    acted("dropped " + requests.size() + " restored committables without committing them");
    return true;
  }

  /**
   * commit-at-prepare: completes each pending file of the committables FileWriter.prepareCommit
   * returns, at the barrier, through the writer's BucketWriter (recoverPendingFile(..).commit()),
   * before the checkpoint that holds them is complete. A failure is the writer's failure.
   */
  public static void commitAtPrepare(Object bucketWriter, Collection<?> committables) throws Exception {
    if (!is(COMMIT_AT_PREPARE) || committables == null || committables.isEmpty()) return;
    int n = 0;
    for (Object c : committables) {
      if (!(Boolean) call(c, "hasPendingFile")) continue;
      Object recoverable = call(c, "getPendingFile");
      Method recover = findMethod(bucketWriter.getClass(), "recoverPendingFile", 1);
      Object pending = recover.invoke(bucketWriter, recoverable);
      call(pending, "commit");
      n++;
    }
    if (n > 0) acted("committed " + n + " pending files at prepare");
  }

  /** swallow-recovery-commit-failure: drops a failure of commitAfterRecovery (returns null), saying so; any other mutant: the failure stands. */
  public static Throwable swallowRecoveryCommitFailure(Throwable t) {
    if (t == null || !is(SWALLOW_RECOVERY_COMMIT_FAILURE)) return t;
    acted("swallowed a commitAfterRecovery failure: " + t);
    return null;
  }

  /**
   * offsets-off-by-one: a deserialized Kafka split whose starting offset is a real position
   * (at least 1) starts one record earlier. Real positions come only from restored reader
   * state: the enumerator assigns new splits from a negative sentinel (earliest).
   */
  public static void offsetOffByOne(Object split) {
    if (!is(OFFSETS_OFF_BY_ONE) || split == null) return;
    try {
      Field f = split.getClass().getDeclaredField("startingOffset");
      f.setAccessible(true);
      long offset = f.getLong(split);
      if (offset < 1) return;
      f.setLong(split, offset - 1);
      acted("restored split " + split + " starts at " + (offset - 1) + " instead of " + offset);
    } catch (ReflectiveOperationException | RuntimeException e) {
      throw new IllegalStateException("clink-qual flink mutant offsets-off-by-one could not move the split's offset: " + e, e);
    }
  }

  private static Object call(Object target, String name) throws Exception {
    Method m = findMethod(target.getClass(), name, 0);
    return m.invoke(target);
  }

  private static Method findMethod(Class<?> type, String name, int params) throws NoSuchMethodException {
    for (Class<?> c = type; c != null; c = c.getSuperclass()) {
      for (Method m : c.getDeclaredMethods()) {
        if (m.getName().equals(name) && m.getParameterCount() == params) {
          m.setAccessible(true);
          return m;
        }
      }
    }
    throw new NoSuchMethodException(type.getName() + "." + name + " with " + params + " parameters");
  }
}
