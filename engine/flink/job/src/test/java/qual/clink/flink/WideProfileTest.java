package qual.clink.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.state.CheckpointListener;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The wide profile's part of the job (ExactlyOnceJob.toFileSink: keyBy on the event's key,
 * the keyed count, the FileSink with DefaultRollingPolicy) in a local MiniCluster with the
 * cluster settings the plug writes for it (engine/flink/profiles.ts): RocksDB keyed state,
 * unaligned checkpoints, region failover, fixed-delay restarts. A bounded generator of
 * generator-shaped lines stands in for Kafka, the output is a local directory, and a map in
 * front of keyBy throws once after two completed checkpoints, so the job restores from a
 * checkpoint whose state holds in-progress parts (persisted by the RecoverableWriter),
 * pending committables and the keyed counts. Every record must then be committed exactly
 * once, and the sink-open line must show the profile as the job resolved it.
 */
class WideProfileTest {
  static final int RECORDS = 6000;
  static final int KEYS = 37;

  /** Throws once per JVM, once two checkpoints have completed and a second has passed since the first record. */
  static final class FailOnce implements MapFunction<String, String>, CheckpointListener {
    private static final long serialVersionUID = 1L;
    static final AtomicBoolean THROWN = new AtomicBoolean(false);
    static final AtomicInteger COMPLETED = new AtomicInteger();
    static volatile long first = -1;

    @Override
    public String map(String v) {
      long now = System.currentTimeMillis();
      if (first < 0) first = now;
      if (now - first >= 1000 && COMPLETED.get() >= 2 && THROWN.compareAndSet(false, true)) {
        throw new IllegalStateException("clink-qual test: the planned task failure");
      }
      return v;
    }

    @Override
    public void notifyCheckpointComplete(long checkpointId) {
      COMPLETED.incrementAndGet();
    }
  }

  /** A line as the harness's generator writes it (oracle/generator.ts), partition 0, sequence n. */
  static String line(long n) {
    return "{\"id\":\"0-" + n + "\",\"p\":0,\"seq\":" + n + ",\"key\":\"k" + (n % KEYS) + "\",\"payload\":\"" + "abcdefghij".repeat(5) + "\"}";
  }

  @Test
  void eventKeyIsTheKeyField() {
    assertEquals("k5", ExactlyOnceJob.eventKey(line(5)));
    assertEquals("no key here", ExactlyOnceJob.eventKey("no key here"), "a line without a key is its own key");
  }

  @Test
  void everyRecordCommittedOnceAfterARestore(@TempDir Path tmp) throws Exception {
    Path out = tmp.resolve("out");
    Map<String, String> cluster = new HashMap<>();
    cluster.put("state.backend.type", "rocksdb");
    cluster.put("execution.checkpointing.unaligned.enabled", "true");
    cluster.put("execution.checkpointing.storage", "filesystem");
    cluster.put("execution.checkpointing.dir", tmp.resolve("checkpoints").toUri().toString());
    cluster.put("execution.checkpointing.data-inline-threshold", "20kb");
    cluster.put("jobmanager.execution.failover-strategy", "region");
    cluster.put("restart-strategy.type", "fixed-delay");
    cluster.put("restart-strategy.fixed-delay.attempts", "10");
    cluster.put("restart-strategy.fixed-delay.delay", "200 ms");
    cluster.put("taskmanager.memory.managed.size", "128m");
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(Configuration.fromMap(cluster));
    env.setParallelism(2);
    env.enableCheckpointing(300);

    // The job's own arguments (parseArgs), scaled down so parts roll by size and by time within seconds.
    Map<String, String> a = ExactlyOnceJob.parseArgs(new String[] {
        "--bootstrap", "unused:9092", "--topic", "unused", "--output", out.toUri().toString(),
        "--checkpoint-interval-ms", "300", "--parallelism", "2", "--family", "flink_filesink_s3",
        "--profile", "wide", "--part-size-bytes", "16384", "--rollover-interval-ms", "2000",
        "--inactivity-interval-ms", "1000", "--bucket-check-interval-ms", "100"});
    DataGeneratorSource<String> source = new DataGeneratorSource<>(WideProfileTest::line, RECORDS, RateLimiterStrategy.perSecond(1000), Types.STRING);
    DataStream<String> lines = env.fromSource(source, WatermarkStrategy.noWatermarks(), "generator").map(new FailOnce()).name("fail-once");
    ExactlyOnceJob.toFileSink(env, lines, a);
    env.execute("clink-qual wide profile test");

    assertTrue(FailOnce.THROWN.get(), "the planned failure happened, so the job restored from a checkpoint");
    String open = ExactlyOnceJob.SinkOpenLog.lastLine;
    assertTrue(open != null && open.startsWith("clink-qual flink sink open: family=flink_filesink_s3 "), "the sink-open line was logged: " + open);
    for (String f : new String[] {" profile=wide ", " rolling=DefaultRollingPolicy ", " partSizeBytes=16384 ", " stateBackend=rocksdb ", " unaligned=true ", " mutant=none"}) {
      assertTrue(open.contains(f), "the sink-open line has '" + f.trim() + "': " + open);
    }
    assertTrue(open.matches(".* keyedState=\\S*RocksDB\\S* .*"), "the keyed state is RocksDB's: " + open);
    assertTrue(!open.contains(" attempt=0 "), "the newest open is a restored attempt's: " + open);

    // Committed part files only (in-progress and pending ones are hidden, '.'-prefixed).
    List<Path> parts = new ArrayList<>();
    try (Stream<Path> s = Files.walk(out)) {
      s.filter(Files::isRegularFile).filter(p -> !p.getFileName().toString().startsWith(".")).forEach(parts::add);
    }
    BitSet seen = new BitSet(RECORDS);
    int lineCount = 0;
    int duplicates = 0;
    for (Path p : parts) {
      assertTrue(p.getFileName().toString().matches("part-.*\\.jsonl"), "a part file: " + p);
      for (String l : Files.readAllLines(p, StandardCharsets.UTF_8)) {
        lineCount++;
        long seq = Long.parseLong(l.replaceAll("^\\{\"id\":\"0-\\d+\",\"p\":0,\"seq\":(\\d+),.*$", "$1"));
        assertEquals(line(seq), l, "each line is emitted unchanged, byte for byte");
        if (seen.get((int) seq)) duplicates++;
        seen.set((int) seq);
      }
    }
    assertEquals(0, duplicates, "no record committed twice");
    assertEquals(RECORDS, seen.cardinality(), "every record committed");
    assertEquals(RECORDS, lineCount, "and nothing else");
    assertTrue(parts.size() >= 4, "parts rolled by size and time (" + parts.size() + " committed)");
    System.out.println("clink-qual wide profile test: " + RECORDS + " records in " + parts.size() + " committed parts after " + FailOnce.COMPLETED.get() + " completed checkpoints; " + open);
  }
}
