package qual.clink.flink.agent;

import java.time.Duration;
import org.apache.flink.api.common.RuntimeExecutionMode;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.serialization.SimpleStringEncoder;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.connector.file.sink.FileSink;
import org.apache.flink.core.fs.Path;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.filesystem.rollingpolicies.OnCheckpointRollingPolicy;

/**
 * A small Flink job for the agent's integration test, run in a child JVM with the agent
 * attached: a rate-limited generator -> FileSink (row format, rolled and committed on every
 * checkpoint) to a local directory, exactly-once checkpoints every 500 ms, no restarts, in a
 * local MiniCluster (the JobManager's CheckpointCoordinator and the sink's writer and
 * committer all run in this one JVM). It runs until the JVM is halted or killed.
 *
 * With a second argument N (ms), a map before the sink throws once, N ms after it first
 * runs and once two checkpoints have completed, and the job restarts (fixed delay): the
 * restored subtask's CommitterOperator re-commits the committables of the checkpoint it was
 * restored from (the recovery points).
 */
public final class MiniClusterJob {
  /**
   * Throws once per JVM, failAfterMs after its first record and once at least two
   * checkpoints have completed (so the restored checkpoint holds committables, however slow
   * the machine); never when failAfterMs is negative.
   */
  static final class FailOnce implements org.apache.flink.api.common.functions.MapFunction<String, String>, org.apache.flink.api.common.state.CheckpointListener {
    static final java.util.concurrent.atomic.AtomicLong FIRST = new java.util.concurrent.atomic.AtomicLong(-1);
    static final java.util.concurrent.atomic.AtomicBoolean THROWN = new java.util.concurrent.atomic.AtomicBoolean(false);
    static final java.util.concurrent.atomic.AtomicInteger COMPLETED = new java.util.concurrent.atomic.AtomicInteger();
    final long failAfterMs;

    FailOnce(long failAfterMs) {
      this.failAfterMs = failAfterMs;
    }

    @Override
    public String map(String v) {
      if (failAfterMs < 0) return v;
      long now = System.currentTimeMillis();
      FIRST.compareAndSet(-1, now);
      if (now - FIRST.get() >= failAfterMs && COMPLETED.get() >= 2 && THROWN.compareAndSet(false, true)) throw new IllegalStateException("clink-qual test: the planned task failure");
      return v;
    }

    @Override
    public void notifyCheckpointComplete(long checkpointId) {
      COMPLETED.incrementAndGet();
    }
  }

  public static void main(String[] args) throws Exception {
    String out = args[0];
    long failAfterMs = args.length > 1 ? Long.parseLong(args[1]) : -1;
    Configuration conf = new Configuration();
    if (failAfterMs < 0) {
      conf.set(RestartStrategyOptions.RESTART_STRATEGY, "none");
    } else {
      conf.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
      conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, 10);
      conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY, Duration.ofMillis(200));
    }
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
    env.setRuntimeMode(RuntimeExecutionMode.STREAMING);
    env.setParallelism(1);
    env.enableCheckpointing(500);
    DataGeneratorSource<String> source = new DataGeneratorSource<>(n -> "{\"seq\":" + n + "}", Long.MAX_VALUE, RateLimiterStrategy.perSecond(200), Types.STRING);
    FileSink<String> sink = FileSink.forRowFormat(new Path(out), new SimpleStringEncoder<String>("UTF-8"))
        .withRollingPolicy(OnCheckpointRollingPolicy.build())
        .withBucketCheckInterval(Duration.ofMillis(200).toMillis())
        .build();
    env.fromSource(source, WatermarkStrategy.noWatermarks(), "generator").map(new FailOnce(failAfterMs)).name("fail-once").sinkTo(sink).name("file-sink");
    env.execute("clink-qual agent test");
  }
}
