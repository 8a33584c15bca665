package qual.clink.flink.agent;

import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

import java.lang.instrument.Instrumentation;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import net.bytebuddy.agent.builder.AgentBuilder;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.dynamic.DynamicType;
import net.bytebuddy.utility.JavaModule;

/**
 * The harness's named protocol points inside Flink 2.2's JVMs (docs/flink.md has the
 * mapping and what is exact or approximate):
 *
 * <pre>
 *   sink.before-prepare / sink.after-prepare     FileWriter.prepareCommit (entry / exit with committables)
 *   sink.before-commit / sink.after-commit       FileCommitter.commit (entry / exit, non-empty requests)
 *   sink.recover.before-commit / .after-commit   the same, inside CommitterOperator.initializeState
 *                                                (the re-commit of restored committables)
 *   coordinator.before-complete-record /         CheckpointCoordinator.addCompletedCheckpointToStoreAndSubsumeOldest
 *   coordinator.after-complete-record            (entry / normal exit)
 * </pre>
 *
 * With {@code mutant=<name>} it also installs that mutant's advice (Mutants: a deliberately
 * broken committer); an unknown name stops the JVM at start.
 *
 * Arguments: {@code -javaagent:agent.jar=dir=<faults dir>,host=<rig host>,role=<worker|coordinator>[,mutant=<name>]}.
 */
public final class FaultPointAgent {
  private FaultPointAgent() {}

  public static final String WRITER = "org.apache.flink.connector.file.sink.writer.FileWriter";
  public static final String COMMITTER = "org.apache.flink.connector.file.sink.committer.FileCommitter";
  public static final String COMMITTER_OPERATOR = "org.apache.flink.streaming.runtime.operators.sink.CommitterOperator";
  public static final String COORDINATOR = "org.apache.flink.runtime.checkpoint.CheckpointCoordinator";
  /** The pending file of Flink's output-stream based writers (the S3 writer's included): its commitAfterRecovery. */
  public static final String PENDING_FILE = "org.apache.flink.streaming.api.functions.sink.filesystem.OutputStreamBasedPartFileWriter$OutputStreamBasedPendingFile";
  public static final String KAFKA_SPLIT_SERIALIZER = "org.apache.flink.connector.kafka.source.split.KafkaPartitionSplitSerializer";
  /** flink-s3-fs-hadoop's committer, loaded by the S3 plugin's own classloader (its advice may name only java.* types). */
  public static final String S3_COMMITTER = "org.apache.flink.fs.s3.common.writer.S3Committer";

  static Map<String, String> parseArgs(String args) {
    Map<String, String> m = new HashMap<>();
    if (args == null) return m;
    for (String kv : args.split(",")) {
      int i = kv.indexOf('=');
      if (i > 0) m.put(kv.substring(0, i).trim(), kv.substring(i + 1).trim());
    }
    return m;
  }

  public static void premain(String args, Instrumentation inst) throws Exception {
    Map<String, String> a = parseArgs(args);
    String dir = a.get("dir");
    if (dir == null || dir.isEmpty()) throw new IllegalArgumentException("clink-qual flink agent: dir=<faults dir> is required");
    Path d = Path.of(dir);
    Files.createDirectories(d);
    String host = a.getOrDefault("host", "unknown");
    String role = a.getOrDefault("role", "worker");
    String mutant = Mutants.activate(a.get("mutant"));
    FaultPoints.install(new FaultPoints(d, host, role));
    System.err.println("clink-qual flink agent: armed file " + d.resolve("armed.json") + " host=" + host + " role=" + role + " mutant=" + mutant);

    AgentBuilder agent = new AgentBuilder.Default()
        // Advice is inlined into the existing methods: no new members, no type initializer.
        .disableClassFormatChanges()
        .with(new AgentBuilder.Listener.Adapter() {
          @Override
          public void onTransformation(TypeDescription type, ClassLoader loader, JavaModule module, boolean loaded, DynamicType dynamicType) {
            System.err.println("clink-qual flink agent: instrumented " + type.getName());
          }

          @Override
          public void onError(String typeName, ClassLoader loader, JavaModule module, boolean loaded, Throwable throwable) {
            System.err.println("clink-qual flink agent: could not instrument " + typeName + ": " + throwable);
          }
        });
    // A mutant that changes a fault point's method gets its own advice there, which reaches the same points.
    Class<?> prepare = Mutants.is(Mutants.COMMIT_AT_PREPARE) ? PrepareCommittingAdvice.class : PrepareAdvice.class;
    Class<?> commit = Mutants.is(Mutants.DROP_RESTORED_COMMITTABLES) ? CommitDroppingAdvice.class : CommitAdvice.class;
    agent = agent
        .type(named(WRITER))
        .transform((b, type, loader, module, pd) -> b.visit(Advice.to(prepare).on(named("prepareCommit").and(takesArguments(0)))))
        .type(named(COMMITTER))
        .transform((b, type, loader, module, pd) -> b.visit(Advice.to(commit).on(named("commit").and(takesArguments(1)))))
        .type(named(COMMITTER_OPERATOR))
        .transform((b, type, loader, module, pd) -> b.visit(Advice.to(RecoveryAdvice.class).on(named("initializeState").and(takesArguments(1)))))
        .type(named(COORDINATOR))
        .transform((b, type, loader, module, pd) -> b.visit(Advice.to(CompleteRecordAdvice.class).on(named("addCompletedCheckpointToStoreAndSubsumeOldest").and(takesArguments(3)))));
    if (Mutants.is(Mutants.SWALLOW_RECOVERY_COMMIT_FAILURE)) {
      agent = agent.type(named(PENDING_FILE)).transform((b, type, loader, module, pd) -> b.visit(Advice.to(SwallowRecoveryCommitAdvice.class).on(named("commitAfterRecovery").and(takesArguments(0)))));
    }
    if (Mutants.is(Mutants.OFFSETS_OFF_BY_ONE)) {
      agent = agent.type(named(KAFKA_SPLIT_SERIALIZER)).transform((b, type, loader, module, pd) -> b.visit(Advice.to(SplitOffByOneAdvice.class).on(named("deserialize").and(takesArguments(2)))));
    }
    if (Mutants.is(Mutants.ACCEPT_ANY_OBJECT)) {
      agent = agent.type(named(S3_COMMITTER)).transform((b, type, loader, module, pd) -> b.visit(Advice.to(AcceptAnyObjectAdvice.class).on(named("commitAfterRecovery").and(takesArguments(0)))));
    }
    agent.installOn(inst);
  }

  /** FileWriter.prepareCommit(): the in-progress parts are closed for commit at the barrier. */
  public static final class PrepareAdvice {
    @Advice.OnMethodEnter
    static void enter() {
      FaultPoints.reach("sink.before-prepare", -1);
    }

    @Advice.OnMethodExit
    static void exit(@Advice.Return java.util.Collection<?> committables) {
      if (committables != null && !committables.isEmpty()) FaultPoints.reach("sink.after-prepare", -1);
    }
  }

  /** Mutant commit-at-prepare: FileWriter.prepareCommit completes its pending files before it returns them (then the points as in PrepareAdvice). */
  public static final class PrepareCommittingAdvice {
    @Advice.OnMethodEnter
    static void enter() {
      FaultPoints.reach("sink.before-prepare", -1);
    }

    @Advice.OnMethodExit
    static void exit(@Advice.FieldValue("bucketWriter") Object bucketWriter, @Advice.Return java.util.Collection<?> committables) throws Exception {
      Mutants.commitAtPrepare(bucketWriter, committables);
      if (committables != null && !committables.isEmpty()) FaultPoints.reach("sink.after-prepare", -1);
    }
  }

  /** Mutant drop-restored-committables: inside CommitterOperator.initializeState, FileCommitter.commit does nothing, so the restored committables count as committed (the points as in CommitAdvice). */
  public static final class CommitDroppingAdvice {
    @Advice.OnMethodEnter(skipOn = Advice.OnNonDefaultValue.class)
    static boolean enter(@Advice.Argument(0) java.util.Collection<?> requests) {
      if (requests != null && !requests.isEmpty()) FaultPoints.reach(FaultPoints.recovering() ? "sink.recover.before-commit" : "sink.before-commit", -1);
      return Mutants.dropsRestored(requests);
    }

    @Advice.OnMethodExit
    static void exit(@Advice.Argument(0) java.util.Collection<?> requests) {
      if (requests != null && !requests.isEmpty()) FaultPoints.reach(FaultPoints.recovering() ? "sink.recover.after-commit" : "sink.after-commit", -1);
    }
  }

  /** Mutant swallow-recovery-commit-failure: a failed commitAfterRecovery of a pending file returns normally. */
  public static final class SwallowRecoveryCommitAdvice {
    @Advice.OnMethodExit(onThrowable = Throwable.class)
    static void exit(@Advice.Thrown(readOnly = false) Throwable thrown) {
      thrown = Mutants.swallowRecoveryCommitFailure(thrown);
    }
  }

  /** Mutant offsets-off-by-one: KafkaPartitionSplitSerializer.deserialize gives a restored split one record before its position. */
  public static final class SplitOffByOneAdvice {
    @Advice.OnMethodExit
    static void exit(@Advice.Return Object split) {
      Mutants.offsetOffByOne(split);
    }
  }

  /**
   * Mutant accept-any-object: S3Committer.commitAfterRecovery, when the upload is gone,
   * accepts whatever is at the key: its refusals (a missing object, conflicting lengths)
   * return normally. Inlined into a class of the S3 plugin's classloader, which cannot see
   * the agent's classes: this advice names only java.lang.
   */
  public static final class AcceptAnyObjectAdvice {
    @Advice.OnMethodExit(onThrowable = Throwable.class)
    static void exit(@Advice.Thrown(readOnly = false) Throwable thrown) {
      String m = thrown == null ? null : thrown.getMessage();
      if (m != null && (m.contains("conflicting lengths") || m.contains("Object does not exist"))) {
        System.err.println("clink-qual flink mutant acted: mutant=accept-any-object accepted the object at the key despite: " + m);
        thrown = null;
      }
    }
  }

  /** FileCommitter.commit(requests): each pending file is committed (S3: CompleteMultipartUpload). */
  public static final class CommitAdvice {
    @Advice.OnMethodEnter
    static void enter(@Advice.Argument(0) java.util.Collection<?> requests) {
      if (requests != null && !requests.isEmpty()) FaultPoints.reach(FaultPoints.recovering() ? "sink.recover.before-commit" : "sink.before-commit", -1);
    }

    @Advice.OnMethodExit
    static void exit(@Advice.Argument(0) java.util.Collection<?> requests) {
      if (requests != null && !requests.isEmpty()) FaultPoints.reach(FaultPoints.recovering() ? "sink.recover.after-commit" : "sink.after-commit", -1);
    }
  }

  /** CommitterOperator.initializeState: a restored subtask re-commits its restored committables here. */
  public static final class RecoveryAdvice {
    @Advice.OnMethodEnter
    static void enter() {
      FaultPoints.enterRecovery();
    }

    @Advice.OnMethodExit(onThrowable = Throwable.class)
    static void exit() {
      FaultPoints.exitRecovery();
    }
  }

  /** CheckpointCoordinator.addCompletedCheckpointToStoreAndSubsumeOldest(checkpointId, completed, pending). */
  public static final class CompleteRecordAdvice {
    @Advice.OnMethodEnter
    static void enter(@Advice.Argument(0) long checkpointId) {
      FaultPoints.reach("coordinator.before-complete-record", checkpointId);
    }

    @Advice.OnMethodExit
    static void exit(@Advice.Argument(0) long checkpointId) {
      FaultPoints.reach("coordinator.after-complete-record", checkpointId);
    }
  }
}
