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
 */
public final class MiniClusterJob {
  public static void main(String[] args) throws Exception {
    String out = args[0];
    Configuration conf = new Configuration();
    conf.set(RestartStrategyOptions.RESTART_STRATEGY, "none");
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
    env.setRuntimeMode(RuntimeExecutionMode.STREAMING);
    env.setParallelism(1);
    env.enableCheckpointing(500);
    DataGeneratorSource<String> source = new DataGeneratorSource<>(n -> "{\"seq\":" + n + "}", Long.MAX_VALUE, RateLimiterStrategy.perSecond(200), Types.STRING);
    FileSink<String> sink = FileSink.forRowFormat(new Path(out), new SimpleStringEncoder<String>("UTF-8"))
        .withRollingPolicy(OnCheckpointRollingPolicy.build())
        .withBucketCheckInterval(Duration.ofMillis(200).toMillis())
        .build();
    env.fromSource(source, WatermarkStrategy.noWatermarks(), "generator").sinkTo(sink).name("file-sink");
    env.execute("clink-qual agent test");
  }
}
