package qual.clink.flink;

import java.net.URI;
import java.util.HashMap;
import java.util.Map;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.serialization.SimpleStringEncoder;
import org.apache.flink.api.common.serialization.SimpleStringSchema;
import org.apache.flink.connector.file.sink.FileSink;
import org.apache.flink.connector.kafka.source.KafkaSource;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.flink.core.execution.CheckpointingMode;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.apache.flink.core.fs.RecoverableWriter;
import org.apache.flink.core.fs.SafetyNetWrapperFileSystem;
import org.apache.flink.streaming.api.environment.CheckpointConfig;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.filesystem.OutputFileConfig;
import org.apache.flink.streaming.api.functions.sink.filesystem.bucketassigners.BasePathBucketAssigner;
import org.apache.flink.streaming.api.functions.sink.filesystem.rollingpolicies.OnCheckpointRollingPolicy;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Kafka topic -> the lines unchanged -> FileSink (row format, one line + '\n' per record)
 * into s3://bucket/prefix through Flink's S3 filesystem, exactly-once checkpoints at the
 * campaign's interval, a part file rolled (and committed) on every checkpoint.
 *
 * Arguments: --bootstrap host:port,... --topic T --output s3://bucket/prefix/
 *            --checkpoint-interval-ms N --parallelism N --family NAME
 */
public final class ExactlyOnceJob {
  private ExactlyOnceJob() {}

  static Map<String, String> parseArgs(String[] args) {
    Map<String, String> m = new HashMap<>();
    for (int i = 0; i + 1 < args.length; i += 2) {
      if (!args[i].startsWith("--")) throw new IllegalArgumentException("expected --name value pairs, got " + args[i]);
      m.put(args[i].substring(2), args[i + 1]);
    }
    for (String k : new String[] {"bootstrap", "topic", "output", "checkpoint-interval-ms", "parallelism", "family"}) {
      if (!m.containsKey(k)) throw new IllegalArgumentException("missing --" + k);
    }
    return m;
  }

  public static void main(String[] args) throws Exception {
    Map<String, String> a = parseArgs(args);
    String output = a.get("output");
    long interval = Long.parseLong(a.get("checkpoint-interval-ms"));
    int parallelism = Integer.parseInt(a.get("parallelism"));

    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    env.setParallelism(parallelism);
    env.enableCheckpointing(interval, CheckpointingMode.EXACTLY_ONCE);
    CheckpointConfig cc = env.getCheckpointConfig();
    cc.setMinPauseBetweenCheckpoints(Math.min(1000, interval / 2));
    cc.setMaxConcurrentCheckpoints(1);
    cc.setTolerableCheckpointFailureNumber(Integer.MAX_VALUE);

    KafkaSource<String> source = KafkaSource.<String>builder()
        .setBootstrapServers(a.get("bootstrap"))
        .setTopics(a.get("topic"))
        .setGroupId("clink-qual-flink-" + a.get("topic"))
        .setStartingOffsets(OffsetsInitializer.earliest())
        .setValueOnlyDeserializer(new SimpleStringSchema())
        .setProperty("partition.discovery.interval.ms", "0")
        .build();

    FileSink<String> sink = FileSink.forRowFormat(new Path(output), new SimpleStringEncoder<String>("UTF-8"))
        .withBucketAssigner(new BasePathBucketAssigner<>())
        .withRollingPolicy(OnCheckpointRollingPolicy.build())
        .withOutputFileConfig(OutputFileConfig.builder().withPartPrefix("part").withPartSuffix(".jsonl").build())
        .build();

    env.fromSource(source, WatermarkStrategy.noWatermarks(), "kafka-source").uid("kafka-source")
        .map(new SinkOpenLog(output, a.get("family"))).uid("sink-open-log").name("sink-open-log")
        .sinkTo(sink).uid("file-sink").name("file-sink-s3");

    env.execute("clink-qual " + a.get("topic") + " -> " + output);
  }

  /**
   * The identity on lines, chained in front of the FileSink's writer. Its open() logs the
   * line that proves which sink this subtask feeds: the filesystem class Flink resolved for
   * the output path and the RecoverableWriter class it will use (S3's multipart writer), so
   * the log shows the S3 plugin, not a local path, backs the sink, and the mutant the agent
   * in this JVM put into Flink ("none" for the correct engine).
   */
  static final class SinkOpenLog extends RichMapFunction<String, String> {
    /** Set by the fault-point agent in this JVM to the mutant it put into Flink (engine/flink/agent, Mutants.PROPERTY); unset: none. */
    static final String MUTANT_PROPERTY = "clink.qual.flink.mutant";
    private static final long serialVersionUID = 1L;
    private static final Logger LOG = LoggerFactory.getLogger(SinkOpenLog.class);
    private final String output;
    private final String family;

    SinkOpenLog(String output, String family) {
      this.output = output;
      this.family = family;
    }

    @Override
    public void open(OpenContext ctx) throws Exception {
      FileSystem fs = FileSystem.get(new URI(output));
      if (fs instanceof SafetyNetWrapperFileSystem) fs = ((SafetyNetWrapperFileSystem) fs).getWrappedDelegate();
      RecoverableWriter w = fs.createRecoverableWriter();
      String line = String.format(
          "clink-qual flink sink open: family=%s output=%s fs=%s writer=%s rolling=OnCheckpointRollingPolicy subtask=%d/%d attempt=%d mutant=%s",
          family, output, fs.getClass().getName(), w.getClass().getName(),
          getRuntimeContext().getTaskInfo().getIndexOfThisSubtask(),
          getRuntimeContext().getTaskInfo().getNumberOfParallelSubtasks(),
          getRuntimeContext().getTaskInfo().getAttemptNumber(),
          System.getProperty(MUTANT_PROPERTY, "none"));
      LOG.info(line);
    }

    @Override
    public String map(String value) {
      return value;
    }
  }
}
