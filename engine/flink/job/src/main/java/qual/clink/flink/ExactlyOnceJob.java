package qual.clink.flink;

import java.net.URI;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.serialization.SimpleStringEncoder;
import org.apache.flink.api.common.serialization.SimpleStringSchema;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.connector.file.sink.FileSink;
import org.apache.flink.connector.kafka.source.KafkaSource;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.flink.core.execution.CheckpointingMode;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.apache.flink.core.fs.RecoverableWriter;
import org.apache.flink.core.fs.SafetyNetWrapperFileSystem;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.CheckpointConfig;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.filesystem.OutputFileConfig;
import org.apache.flink.streaming.api.functions.sink.filesystem.RollingPolicy;
import org.apache.flink.streaming.api.functions.sink.filesystem.bucketassigners.BasePathBucketAssigner;
import org.apache.flink.streaming.api.functions.sink.filesystem.rollingpolicies.DefaultRollingPolicy;
import org.apache.flink.streaming.api.functions.sink.filesystem.rollingpolicies.OnCheckpointRollingPolicy;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Kafka topic -> the lines unchanged -> FileSink (row format, one line + '\n' per record)
 * into s3://bucket/prefix through Flink's S3 filesystem, exactly-once checkpoints at the
 * campaign's interval. Two profiles (engine/flink/profiles.ts has the cluster's side):
 *
 *   simple  source -> an identity map -> FileSink, one chained vertex; a part file rolled
 *           (and committed) on every checkpoint (OnCheckpointRollingPolicy).
 *   wide    source -> keyBy(the event's "key" field) -> a keyed map that counts each key's
 *           records in ValueState (RocksDB on the cluster) and emits every line unchanged ->
 *           FileSink with DefaultRollingPolicy (by size, age and inactivity), so a part spans
 *           checkpoints and the S3 RecoverableWriter persists it at each one.
 *
 * The state backend, unaligned checkpoints, checkpoint storage and failover strategy come
 * from the cluster's config.yaml; the sink-open line logs what this job resolved.
 *
 * Arguments: --bootstrap host:port,... --topic T --output s3://bucket/prefix/
 *            --checkpoint-interval-ms N --parallelism N --family NAME
 *            [--profile simple|wide] and, for wide: --part-size-bytes N
 *            --rollover-interval-ms N --inactivity-interval-ms N --bucket-check-interval-ms N
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
    m.putIfAbsent("profile", "simple");
    String profile = m.get("profile");
    if (profile.equals("wide")) {
      for (String k : new String[] {"part-size-bytes", "rollover-interval-ms", "inactivity-interval-ms", "bucket-check-interval-ms"}) {
        if (!m.containsKey(k)) throw new IllegalArgumentException("missing --" + k + " (the wide profile's rolling policy)");
      }
    } else if (!profile.equals("simple")) {
      throw new IllegalArgumentException("unknown --profile " + profile + " (simple or wide)");
    }
    return m;
  }

  /**
   * The event's key: the value of its "key" field (the generator's canonical line,
   * oracle/generator.ts: {"id":..,"p":..,"seq":..,"key":"..","payload":".."}); a line
   * without one is its own key.
   */
  static String eventKey(String line) {
    int at = line.indexOf("\"key\":\"");
    if (at < 0) return line;
    int from = at + 7;
    int to = line.indexOf('"', from);
    return to < 0 ? line : line.substring(from, to);
  }

  /** The rolling policy of the profile: OnCheckpointRollingPolicy (simple) or DefaultRollingPolicy by size and time (wide). */
  static RollingPolicy<String, String> rollingPolicy(Map<String, String> a) {
    if (!a.get("profile").equals("wide")) return OnCheckpointRollingPolicy.build();
    return DefaultRollingPolicy.builder()
        .withMaxPartSize(new MemorySize(Long.parseLong(a.get("part-size-bytes"))))
        .withRolloverInterval(Duration.ofMillis(Long.parseLong(a.get("rollover-interval-ms"))))
        .withInactivityInterval(Duration.ofMillis(Long.parseLong(a.get("inactivity-interval-ms"))))
        .build();
  }

  /** The rolling policy as the sink-open line names it (the plug checks `rolling=<policy>`). */
  static String rollingWords(Map<String, String> a) {
    if (!a.get("profile").equals("wide")) return "rolling=OnCheckpointRollingPolicy";
    return String.format("rolling=DefaultRollingPolicy partSizeBytes=%s rolloverMs=%s inactivityMs=%s bucketCheckMs=%s",
        a.get("part-size-bytes"), a.get("rollover-interval-ms"), a.get("inactivity-interval-ms"), a.get("bucket-check-interval-ms"));
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

    DataStream<String> lines = env.fromSource(source, WatermarkStrategy.noWatermarks(), "kafka-source").uid("kafka-source");
    toFileSink(env, lines, a);

    env.execute("clink-qual " + a.get("topic") + " -> " + output);
  }

  /**
   * Everything after the source, as the profile in `a` says: the lines (through keyBy and the
   * keyed count for wide, the identity map for simple) into the FileSink at `--output`.
   * The MiniCluster test (src/test) runs this same part of the job behind its own source.
   */
  static void toFileSink(StreamExecutionEnvironment env, DataStream<String> lines, Map<String, String> a) {
    String output = a.get("output");
    boolean wide = a.get("profile").equals("wide");
    FileSink<String> sink = FileSink.forRowFormat(new Path(output), new SimpleStringEncoder<String>("UTF-8"))
        .withBucketAssigner(new BasePathBucketAssigner<>())
        .withRollingPolicy(rollingPolicy(a))
        .withBucketCheckInterval(wide ? Long.parseLong(a.get("bucket-check-interval-ms")) : 60_000L)
        .withOutputFileConfig(OutputFileConfig.builder().withPartPrefix("part").withPartSuffix(".jsonl").build())
        .build();

    // What this job resolved from the cluster's configuration, for the sink-open line.
    String settings = String.format("profile=%s %s stateBackend=%s unaligned=%s",
        a.get("profile"), rollingWords(a), env.getConfiguration().get(StateBackendOptions.STATE_BACKEND), env.getCheckpointConfig().isUnalignedCheckpointsEnabled());
    DataStream<String> out = wide
        ? lines.keyBy(new EventKey()).map(new KeyedCount(output, a.get("family"), settings)).uid("keyed-count").name("keyed-count")
        : lines.map(new SinkOpenLog(output, a.get("family"), settings)).uid("sink-open-log").name("sink-open-log");
    out.sinkTo(sink).uid("file-sink").name("file-sink-s3");
  }

  /** keyBy on the event's key (eventKey). */
  static final class EventKey implements KeySelector<String, String> {
    private static final long serialVersionUID = 1L;

    @Override
    public String getKey(String line) {
      return eventKey(line);
    }
  }

  /**
   * The identity on lines, chained in front of the FileSink's writer. Its open() logs the
   * line that proves which sink this subtask feeds: the filesystem class Flink resolved for
   * the output path and the RecoverableWriter class it will use (S3's multipart writer), so
   * the log shows the S3 plugin, not a local path, backs the sink, the profile's settings as
   * the job resolved them, and the mutant the agent in this JVM put into Flink ("none" for
   * the correct engine).
   */
  static class SinkOpenLog extends RichMapFunction<String, String> {
    /** Set by the fault-point agent in this JVM to the mutant it put into Flink (engine/flink/agent, Mutants.PROPERTY); unset: none. */
    static final String MUTANT_PROPERTY = "clink.qual.flink.mutant";
    private static final long serialVersionUID = 1L;
    private static final Logger LOG = LoggerFactory.getLogger(SinkOpenLog.class);
    private final String output;
    private final String family;
    private final String settings;

    SinkOpenLog(String output, String family, String settings) {
      this.output = output;
      this.family = family;
      this.settings = settings;
    }

    /** Fields a subclass adds to the line (after the settings); none here. */
    String extraFields() {
      return "";
    }

    /** The newest line this JVM logged, for the MiniCluster test (one JVM there); the rig reads the log. */
    static volatile String lastLine;

    @Override
    public void open(OpenContext ctx) throws Exception {
      FileSystem fs = FileSystem.get(new URI(output));
      if (fs instanceof SafetyNetWrapperFileSystem) fs = ((SafetyNetWrapperFileSystem) fs).getWrappedDelegate();
      RecoverableWriter w = fs.createRecoverableWriter();
      String line = String.format(
          "clink-qual flink sink open: family=%s output=%s fs=%s writer=%s %s%s subtask=%d/%d attempt=%d mutant=%s",
          family, output, fs.getClass().getName(), w.getClass().getName(), settings, extraFields(),
          getRuntimeContext().getTaskInfo().getIndexOfThisSubtask(),
          getRuntimeContext().getTaskInfo().getNumberOfParallelSubtasks(),
          getRuntimeContext().getTaskInfo().getAttemptNumber(),
          System.getProperty(MUTANT_PROPERTY, "none"));
      LOG.info(line);
      lastLine = line;
    }

    @Override
    public String map(String value) throws Exception {
      return value;
    }
  }

  /**
   * The wide profile's keyed operator: counts each key's records in keyed ValueState (so
   * every checkpoint carries real per-key state: RocksDB on the cluster) and emits every line
   * unchanged, byte for byte, as the oracle requires. The sink-open line also names the class
   * of the state object the backend handed out.
   */
  static final class KeyedCount extends SinkOpenLog {
    private static final long serialVersionUID = 1L;
    private transient ValueState<Long> count;

    KeyedCount(String output, String family, String settings) {
      super(output, family, settings);
    }

    @Override
    String extraFields() {
      return " keyedState=" + count.getClass().getName();
    }

    @Override
    public void open(OpenContext ctx) throws Exception {
      count = getRuntimeContext().getState(new ValueStateDescriptor<>("records-per-key", Long.class));
      super.open(ctx);
    }

    @Override
    public String map(String value) throws Exception {
      Long n = count.value();
      count.update(n == null ? 1L : n + 1);
      return value;
    }
  }
}
