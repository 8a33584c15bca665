package qual.clink.flink.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The agent in a real Flink 2.2 MiniCluster (MiniClusterJob in a child JVM, the shaded agent
 * jar from `mvn verify`'s package phase attached): with one point armed, the JVM halts at
 * that point (exit 137) leaving the evidence line on stderr and one fired record, the armed
 * count is used up, and the sink has or has not committed a part file as the point implies.
 * With nothing armed, the same job runs and commits.
 */
class FaultPointAgentIT {
  /**
   * How long a run may take to reach what it waits for. A MiniCluster job needs 25-60 s to
   * deploy its tasks and complete a first checkpoint on a loaded 2-core machine (measured
   * under a load average of 24), so the runs wait on what they need, not on fixed times.
   */
  static final long DEADLINE_S = 300;

  record Run(int exit, String output, Path out, Path faults) {}

  /** What a run that is not expected to halt waits for before it is stopped. */
  interface StopWhen {
    boolean test(String output, Path out) throws IOException;
  }

  /** A run that ends by itself (a halt, an error) within the deadline. */
  static Run run(Path tmp, String armedJson, long failAfterMs, String mutant) throws Exception {
    return run(tmp, armedJson, failAfterMs, mutant, (o, out) -> false);
  }

  /**
   * Runs MiniClusterJob in a child JVM with the agent until it ends by itself, or until
   * `stopWhen` holds (then it is killed: exit -1), or until the deadline (killed: exit -1).
   */
  static Run run(Path tmp, String armedJson, long failAfterMs, String mutant, StopWhen stopWhen) throws Exception {
    Path out = Files.createDirectories(tmp.resolve("out"));
    Path faults = Files.createDirectories(tmp.resolve("faults"));
    if (armedJson != null) Files.writeString(faults.resolve("armed.json"), armedJson);
    String agent = System.getProperty("agent.jar");
    assertTrue(agent != null && new File(agent).isFile(), "the shaded agent jar exists: " + agent);
    List<String> cmd = new ArrayList<>(List.of(
        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-Xmx512m",
        "-javaagent:" + agent + "=dir=" + faults + ",host=test-host,role=worker" + (mutant == null ? "" : ",mutant=" + mutant),
        "--add-opens=java.base/java.util=ALL-UNNAMED",
        "--add-opens=java.base/java.lang=ALL-UNNAMED",
        "-cp", System.getProperty("java.class.path"),
        MiniClusterJob.class.getName(), out.toString(), String.valueOf(failAfterMs)));
    Path log = tmp.resolve("job.log");
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(DEADLINE_S);
    boolean ended = false;
    while (true) {
      if (p.waitFor(1, TimeUnit.SECONDS)) {
        ended = true;
        break;
      }
      if (System.nanoTime() > deadline || stopWhen.test(Files.readString(log, StandardCharsets.UTF_8), out)) break;
    }
    if (!ended) {
      p.destroyForcibly();
      p.waitFor(30, TimeUnit.SECONDS);
    }
    return new Run(ended ? p.exitValue() : -1, Files.readString(log, StandardCharsets.UTF_8), out, faults);
  }

  /** Stops a run once this many part files are committed. */
  static StopWhen committedAtLeast(long n) {
    return (o, out) -> committed(out) >= n;
  }

  /** Committed part files: the FileSink's finished files are visible; in-progress and pending ones are hidden (a leading dot). */
  static long committed(Path out) throws IOException {
    try (Stream<Path> s = Files.walk(out)) {
      return s.filter(Files::isRegularFile).filter(f -> !f.getFileName().toString().startsWith(".")).count();
    }
  }

  static long hidden(Path out) throws IOException {
    try (Stream<Path> s = Files.walk(out)) {
      return s.filter(Files::isRegularFile).filter(f -> f.getFileName().toString().startsWith(".")).count();
    }
  }

  @ParameterizedTest(name = "{0} halts the JVM there")
  @CsvSource({
      // point, committed part files at the halt
      "sink.before-prepare, none",
      "sink.after-prepare, none",
      "coordinator.before-complete-record, none",
      "coordinator.after-complete-record, none",
      "sink.before-commit, none",
      "sink.after-commit, some",
  })
  void haltsAtThePoint(String point, String committedAtHalt, @TempDir Path tmp) throws Exception {
    Run r = run(tmp, "{\"" + point + "\":1}", -1, null);
    assertEquals(FaultPoints.HALT_STATUS, r.exit(), "exit status of the halted JVM; output tail:\n" + tail(r.output()));
    assertTrue(r.output().contains(FaultPoints.FIRED_LINE + " point=" + point + " host=test-host role=worker"), "evidence line in the output:\n" + tail(r.output()));
    List<String> fired = Files.readAllLines(r.faults().resolve("fired.jsonl"));
    assertEquals(1, fired.size(), "one fired record: " + fired);
    assertTrue(fired.get(0).startsWith("{\"point\":\"" + point + "\",\"host\":\"test-host\",\"role\":\"worker\""), fired.get(0));
    assertEquals("{}", Files.readString(r.faults().resolve("armed.json")), "the arming is used up");
    if (point.startsWith("coordinator.")) assertTrue(fired.get(0).matches(".*\"checkpointId\":[1-9][0-9]*}"), "coordinator points carry the checkpoint id: " + fired.get(0));
    long c = committed(r.out());
    if (committedAtHalt.equals("none")) {
      assertEquals(0, c, point + ": no part file committed yet");
      assertTrue(hidden(r.out()) > 0, point + ": the in-progress/pending part file is there, uncommitted");
    } else {
      assertTrue(c > 0, point + ": the part file was committed before the halt");
    }
  }

  @ParameterizedTest(name = "{0} halts the JVM in the restored committer")
  @CsvSource({"sink.recover.before-commit", "sink.recover.after-commit"})
  void recoveryPointsFireOnlyAfterARestore(String point, @TempDir Path tmp) throws Exception {
    // The task fails once, 3 s in and after two completed checkpoints, the job restarts from
    // the last completed checkpoint, and its committer re-commits.
    Run r = run(tmp, "{\"" + point + "\":1}", 3000, null);
    assertEquals(FaultPoints.HALT_STATUS, r.exit(), "exit status of the halted JVM; output tail:\n" + tail(r.output()));
    assertTrue(r.output().contains(FaultPoints.FIRED_LINE + " point=" + point + " host=test-host role=worker"), "evidence line:\n" + tail(r.output()));
    List<String> fired = Files.readAllLines(r.faults().resolve("fired.jsonl"));
    assertEquals(1, fired.size(), "one fired record: " + fired);
    assertTrue(fired.get(0).startsWith("{\"point\":\"" + point + "\""), fired.get(0));
    assertTrue(committed(r.out()) > 0, "checkpoints before the failure were committed");
    assertTrue(r.output().contains("role=worker mutant=none"), "the agent says no mutant:\n" + tail(r.output()));
    assertFalse(r.output().contains(Mutants.ACTED_LINE), "the correct engine: no mutant acted through the restore");
  }

  @Test
  void recoveryPointsDoNotFireWithoutARestore(@TempDir Path tmp) throws Exception {
    Run r = run(tmp, "{\"sink.recover.before-commit\":1,\"sink.recover.after-commit\":1}", -1, null, committedAtLeast(4));
    assertEquals(-1, r.exit(), "still running when stopped; output tail:\n" + tail(r.output()));
    assertFalse(r.output().contains(FaultPoints.FIRED_LINE), "no recovery point fired in normal commits");
    assertTrue(committed(r.out()) > 0, "part files committed");
  }

  @Test
  void runsAndCommitsWhenNothingIsArmed(@TempDir Path tmp) throws Exception {
    // Armed with a point name the agent never reaches, and a zero count for a real one.
    Run r = run(tmp, "{\"no.such.point\":1,\"sink.before-commit\":0}", -1, null, committedAtLeast(4));
    assertEquals(-1, r.exit(), "still running when stopped; output tail:\n" + tail(r.output()));
    assertFalse(r.output().contains(FaultPoints.FIRED_LINE), "no point fired");
    assertFalse(Files.exists(r.faults().resolve("fired.jsonl")), "no fired record");
    assertTrue(r.output().contains("clink-qual flink agent: instrumented " + FaultPointAgent.WRITER), "FileWriter instrumented");
    assertTrue(r.output().contains("clink-qual flink agent: instrumented " + FaultPointAgent.COMMITTER), "FileCommitter instrumented");
    assertTrue(r.output().contains("clink-qual flink agent: instrumented " + FaultPointAgent.COORDINATOR), "CheckpointCoordinator instrumented");
    assertTrue(committed(r.out()) > 0, "part files committed");
  }

  @Test
  void commitAtPrepareMakesThePartVisibleAtTheBarrier(@TempDir Path tmp) throws Exception {
    // The correct sink has committed nothing at sink.after-prepare (haltsAtThePoint); this mutant has.
    Run r = run(tmp, "{\"sink.after-prepare\":1}", -1, Mutants.COMMIT_AT_PREPARE);
    assertEquals(FaultPoints.HALT_STATUS, r.exit(), "exit status of the halted JVM; output tail:\n" + tail(r.output()));
    assertTrue(r.output().contains("mutant=" + Mutants.COMMIT_AT_PREPARE), "the agent names its mutant:\n" + tail(r.output()));
    assertTrue(r.output().matches("(?s).*" + java.util.regex.Pattern.quote(Mutants.ACTED_LINE + " mutant=commit-at-prepare committed ") + "[1-9][0-9]* pending files at prepare.*"), "the mutant acted:\n" + tail(r.output()));
    assertTrue(committed(r.out()) > 0, "a part file committed before its checkpoint completed");
  }

  @Test
  void dropRestoredCommittablesSkipsTheRecoveryCommitOnly(@TempDir Path tmp) throws Exception {
    // One task failure (3 s in, after two completed checkpoints): the restored committer's
    // re-commit is skipped; later commits are not. Stopped once two more part files are committed after the drop.
    long[] atDrop = {-1};
    Run r = run(tmp, null, 3000, Mutants.DROP_RESTORED_COMMITTABLES, (o, out) -> {
      if (!o.contains(Mutants.ACTED_LINE)) return false;
      if (atDrop[0] < 0) atDrop[0] = committed(out);
      return committed(out) >= atDrop[0] + 2;
    });
    assertEquals(-1, r.exit(), "still running when stopped; output tail:\n" + tail(r.output()));
    assertTrue(r.output().matches("(?s).*" + java.util.regex.Pattern.quote(Mutants.ACTED_LINE + " mutant=drop-restored-committables dropped ") + "[1-9][0-9]* restored committables.*"), "the restored committables were dropped:\n" + tail(r.output()));
    long drops = r.output().lines().filter(l -> l.contains(Mutants.ACTED_LINE)).count();
    assertEquals(1, drops, "only the one restore dropped anything (normal commits go on)");
    assertTrue(committed(r.out()) > 0, "part files committed");
  }

  @Test
  void anUnknownMutantStopsTheJvmAtStart(@TempDir Path tmp) throws Exception {
    Run r = run(tmp, null, -1, "no-such-mutant");
    assertTrue(r.exit() != -1 && r.exit() != 0, "the JVM ended with an error; exit " + r.exit() + ", output tail:\n" + tail(r.output()));
    assertTrue(r.output().contains("unknown mutant 'no-such-mutant'"), "says why:\n" + tail(r.output()));
    assertEquals(0, committed(r.out()), "no job ran");
  }

  static String tail(String s) {
    return s.length() > 4000 ? s.substring(s.length() - 4000) : s;
  }
}
