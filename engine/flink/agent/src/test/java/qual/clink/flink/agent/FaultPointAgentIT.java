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
  static final long FIRE_DEADLINE_S = 120;

  record Run(int exit, String output, Path out, Path faults) {}

  static Run run(Path tmp, String armedJson, long waitS) throws Exception {
    return run(tmp, armedJson, waitS, -1);
  }

  static Run run(Path tmp, String armedJson, long waitS, long failAfterMs) throws Exception {
    Path out = Files.createDirectories(tmp.resolve("out"));
    Path faults = Files.createDirectories(tmp.resolve("faults"));
    if (armedJson != null) Files.writeString(faults.resolve("armed.json"), armedJson);
    String agent = System.getProperty("agent.jar");
    assertTrue(agent != null && new File(agent).isFile(), "the shaded agent jar exists: " + agent);
    List<String> cmd = new ArrayList<>(List.of(
        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-Xmx512m",
        "-javaagent:" + agent + "=dir=" + faults + ",host=test-host,role=worker",
        "--add-opens=java.base/java.util=ALL-UNNAMED",
        "--add-opens=java.base/java.lang=ALL-UNNAMED",
        "-cp", System.getProperty("java.class.path"),
        MiniClusterJob.class.getName(), out.toString(), String.valueOf(failAfterMs)));
    Path log = tmp.resolve("job.log");
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    boolean ended = p.waitFor(waitS, TimeUnit.SECONDS);
    if (!ended) {
      p.destroyForcibly();
      p.waitFor(30, TimeUnit.SECONDS);
    }
    return new Run(ended ? p.exitValue() : -1, Files.readString(log, StandardCharsets.UTF_8), out, faults);
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
    Run r = run(tmp, "{\"" + point + "\":1}", FIRE_DEADLINE_S);
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
    // The task fails once 3 s in (several checkpoints completed and committed), the job
    // restarts from the last completed checkpoint, and its committer re-commits.
    Run r = run(tmp, "{\"" + point + "\":1}", FIRE_DEADLINE_S, 3000);
    assertEquals(FaultPoints.HALT_STATUS, r.exit(), "exit status of the halted JVM; output tail:\n" + tail(r.output()));
    assertTrue(r.output().contains(FaultPoints.FIRED_LINE + " point=" + point + " host=test-host role=worker"), "evidence line:\n" + tail(r.output()));
    List<String> fired = Files.readAllLines(r.faults().resolve("fired.jsonl"));
    assertEquals(1, fired.size(), "one fired record: " + fired);
    assertTrue(fired.get(0).startsWith("{\"point\":\"" + point + "\""), fired.get(0));
    assertTrue(committed(r.out()) > 0, "checkpoints before the failure were committed");
  }

  @Test
  void recoveryPointsDoNotFireWithoutARestore(@TempDir Path tmp) throws Exception {
    Run r = run(tmp, "{\"sink.recover.before-commit\":1,\"sink.recover.after-commit\":1}", 20);
    assertEquals(-1, r.exit(), "still running when stopped; output tail:\n" + tail(r.output()));
    assertFalse(r.output().contains(FaultPoints.FIRED_LINE), "no recovery point fired in normal commits");
    assertTrue(committed(r.out()) > 0, "part files committed");
  }

  @Test
  void runsAndCommitsWhenNothingIsArmed(@TempDir Path tmp) throws Exception {
    // Armed with a point name the agent never reaches, and a zero count for a real one.
    Run r = run(tmp, "{\"no.such.point\":1,\"sink.before-commit\":0}", 25);
    assertEquals(-1, r.exit(), "still running when stopped; output tail:\n" + tail(r.output()));
    assertFalse(r.output().contains(FaultPoints.FIRED_LINE), "no point fired");
    assertFalse(Files.exists(r.faults().resolve("fired.jsonl")), "no fired record");
    assertTrue(r.output().contains("clink-qual flink agent: instrumented " + FaultPointAgent.WRITER), "FileWriter instrumented");
    assertTrue(r.output().contains("clink-qual flink agent: instrumented " + FaultPointAgent.COMMITTER), "FileCommitter instrumented");
    assertTrue(r.output().contains("clink-qual flink agent: instrumented " + FaultPointAgent.COORDINATOR), "CheckpointCoordinator instrumented");
    assertTrue(committed(r.out()) > 0, "part files committed");
  }

  static String tail(String s) {
    return s.length() > 4000 ? s.substring(s.length() - 4000) : s;
  }
}
