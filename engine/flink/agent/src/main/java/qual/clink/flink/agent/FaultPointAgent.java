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
 * Arguments: {@code -javaagent:agent.jar=dir=<faults dir>,host=<rig host>,role=<worker|coordinator>}.
 */
public final class FaultPointAgent {
  private FaultPointAgent() {}

  public static final String WRITER = "org.apache.flink.connector.file.sink.writer.FileWriter";
  public static final String COMMITTER = "org.apache.flink.connector.file.sink.committer.FileCommitter";
  public static final String COMMITTER_OPERATOR = "org.apache.flink.streaming.runtime.operators.sink.CommitterOperator";
  public static final String COORDINATOR = "org.apache.flink.runtime.checkpoint.CheckpointCoordinator";

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
    FaultPoints.install(new FaultPoints(d, host, role));
    System.err.println("clink-qual flink agent: armed file " + d.resolve("armed.json") + " host=" + host + " role=" + role);

    new AgentBuilder.Default()
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
        })
        .type(named(WRITER))
        .transform((b, type, loader, module, pd) -> b.visit(Advice.to(PrepareAdvice.class).on(named("prepareCommit").and(takesArguments(0)))))
        .type(named(COMMITTER))
        .transform((b, type, loader, module, pd) -> b.visit(Advice.to(CommitAdvice.class).on(named("commit").and(takesArguments(1)))))
        .type(named(COMMITTER_OPERATOR))
        .transform((b, type, loader, module, pd) -> b.visit(Advice.to(RecoveryAdvice.class).on(named("initializeState").and(takesArguments(1)))))
        .type(named(COORDINATOR))
        .transform((b, type, loader, module, pd) -> b.visit(Advice.to(CompleteRecordAdvice.class).on(named("addCompletedCheckpointToStoreAndSubsumeOldest").and(takesArguments(3)))))
        .installOn(inst);
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
