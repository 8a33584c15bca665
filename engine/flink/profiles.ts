/**
 * The Flink job profiles the plug can deploy, selected by the campaign's `engine.profile`
 * (campaigns/schema.json) and recorded in provenance.json. Each is a set of settings that
 * the cluster's config.yaml (config.ts) and the job's arguments (job/ExactlyOnceJob.java)
 * are written from, and the plug's description of the job (Engine.profile) is read from the
 * same settings, so the report says what ran.
 *
 *   simple  one chained vertex: Kafka source -> identity map -> FileSink, heap state backend,
 *           checkpoints and HA storage on the coordinator's local disk, a part rolled and
 *           committed at every checkpoint (OnCheckpointRollingPolicy), full failover.
 *   wide    Kafka source -> keyBy(the event's key) -> a keyed count in RocksDB that emits
 *           each line unchanged -> FileSink; unaligned checkpoints; checkpoints and HA
 *           storage on S3 (the run's bucket, beside the output), so store faults touch them;
 *           DefaultRollingPolicy by size and time, so parts span checkpoints and the S3
 *           RecoverableWriter persists and recovers in-progress parts; region failover.
 *
 * Region failover and the recovery-only points (sink.recover.*): they fire in every
 * restored subtask that has committables to commit again. Region failover restarts only
 * the pipelined region of the failed task; in a streaming job every edge is pipelined, and
 * keyBy's all-to-all edge joins every source subtask to every keyed subtask, so the wide
 * job is a single region: any failure restores every subtask, as full failover does, and a
 * recovery point armed on any worker still fires. (The simple job, one chained vertex with
 * forward edges only, would be one region per subtask: why it runs with full failover.)
 */

export const FLINK_JOB_PROFILES = ['simple', 'wide'] as const;
export type FlinkJobProfileName = (typeof FLINK_JOB_PROFILES)[number];

/** The profile a campaign without `engine.profile` runs. */
export const DEFAULT_FLINK_JOB_PROFILE: FlinkJobProfileName = 'simple';

/** How the FileSink rolls part files. */
export type FlinkRolling =
  | { policy: 'OnCheckpointRollingPolicy' }
  | {
      policy: 'DefaultRollingPolicy';
      /** A part rolls once it holds more than this many bytes (also checked at each checkpoint). */
      partSizeBytes: number;
      /** ... or once it has been open this long. */
      rolloverIntervalMs: number;
      /** ... or once no record reached it for this long. */
      inactivityIntervalMs: number;
      /** How often the sink checks the two times (FileSink's bucket check interval; 60 s by default). */
      bucketCheckIntervalMs: number;
    };

/** One job profile's settings. */
export interface FlinkJobProfile {
  name: FlinkJobProfileName;
  /** keyBy on the event's key into a keyed operator that counts each key's records in ValueState and emits the line unchanged. */
  keyed: boolean;
  /** Flink's `state.backend.type`. */
  stateBackend: 'hashmap' | 'rocksdb';
  /** Where completed checkpoints and ZooKeeper HA's storage live. */
  durableStorage: 'coordinator-disk' | 's3';
  /** `execution.checkpointing.unaligned.enabled`. */
  unalignedCheckpoints: boolean;
  /** `execution.checkpointing.data-inline-threshold`: state below it travels inside the checkpoint's metadata file. */
  dataInlineThreshold: string;
  /** `taskmanager.memory.managed.size`: RocksDB takes its memory from managed memory; the heap backend needs none. */
  managedMemory: string;
  /** `jobmanager.execution.failover-strategy`. */
  failoverStrategy: 'full' | 'region';
  rolling: FlinkRolling;
}

const PROFILES: Record<FlinkJobProfileName, FlinkJobProfile> = {
  simple: {
    name: 'simple',
    keyed: false,
    stateBackend: 'hashmap',
    durableStorage: 'coordinator-disk',
    unalignedCheckpoints: false,
    dataInlineThreshold: '1mb',
    managedMemory: '0m',
    failoverStrategy: 'full',
    rolling: { policy: 'OnCheckpointRollingPolicy' },
  },
  wide: {
    name: 'wide',
    keyed: true,
    stateBackend: 'rocksdb',
    durableStorage: 's3',
    unalignedCheckpoints: true,
    // Flink's default: the keyed state (a count for each of the campaign's keys) and the
    // unaligned checkpoints' in-flight data are written by the TaskManagers as files on S3.
    dataInlineThreshold: '20kb',
    managedMemory: '128m',
    failoverStrategy: 'region',
    rolling: { policy: 'DefaultRollingPolicy', partSizeBytes: 1024 * 1024, rolloverIntervalMs: 30_000, inactivityIntervalMs: 10_000, bucketCheckIntervalMs: 1000 },
  },
};

/** Whether `name` is a profile the plug knows. */
export function isFlinkJobProfile(name: string): name is FlinkJobProfileName {
  return (FLINK_JOB_PROFILES as readonly string[]).includes(name);
}

/** The settings of a profile by name. */
export function flinkJobProfile(name: FlinkJobProfileName): FlinkJobProfile {
  return PROFILES[name];
}

/**
 * Where a profile's checkpoints and HA storage live, as Flink URIs: on the coordinator's
 * state directory (`stateDir`, file://), or on S3 beside the run's output, under
 * `<prefix without its slash>-flink/` (so neither the oracle's listing of the run prefix nor
 * the pending-upload count sees them). `ha` is null without high availability.
 */
export function flinkDurableDirs(p: FlinkJobProfile, o: { stateDir: string; bucket: string; prefix: string; ha: boolean }): { checkpointDir: string; haStorageDir: string | null } {
  const base = p.durableStorage === 's3' ? `s3://${o.bucket}/${o.prefix.replace(/\/+$/, '')}-flink` : `file://${o.stateDir}`;
  return { checkpointDir: `${base}/checkpoints`, haStorageDir: o.ha ? `${base}/ha` : null };
}

/** The job's program arguments that select the profile (job/ExactlyOnceJob.java reads them). */
export function flinkJobProfileArgs(p: FlinkJobProfile): string[] {
  const args = ['--profile', p.name];
  if (p.rolling.policy === 'DefaultRollingPolicy') {
    const r = p.rolling;
    args.push('--part-size-bytes', String(r.partSizeBytes), '--rollover-interval-ms', String(r.rolloverIntervalMs), '--inactivity-interval-ms', String(r.inactivityIntervalMs), '--bucket-check-interval-ms', String(r.bucketCheckIntervalMs));
  }
  return args;
}

function seconds(ms: number): string {
  return `${ms / 1000} s`;
}

function mib(bytes: number): string {
  return `${bytes / 2 ** 20} MiB`;
}

/** How parts roll, in words. */
export function rollingWords(r: FlinkRolling): string {
  return r.policy === 'OnCheckpointRollingPolicy'
    ? 'part files roll on every checkpoint (OnCheckpointRollingPolicy)'
    : `part files roll at ${mib(r.partSizeBytes)}, after ${seconds(r.rolloverIntervalMs)} open or ${seconds(r.inactivityIntervalMs)} without a record (DefaultRollingPolicy), so a part spans checkpoints and the S3 RecoverableWriter persists the open part at each checkpoint and recovers it at a restore`;
}

/**
 * The job as a profile deploys it, for the report's claim boundaries (Engine.profile):
 * shape, state, rolling, where checkpoints live, failover. `ha` and `restartDelay` are the
 * plug's options.
 */
export function describeFlinkJobProfile(p: FlinkJobProfile, o: { ha: boolean; restartDelay: string }): string {
  const haWords = o.ha ? 'with ZooKeeper high availability beside them' : 'without high availability (a JobManager kill loses the job)';
  const shape = p.keyed
    ? `The job ("${p.name}" profile) is a Kafka source at one subtask per partition, a keyBy on the event's key into a keyed operator that counts each key's records in ${p.stateBackend === 'rocksdb' ? 'RocksDB' : 'heap'} keyed state and emits every line unchanged, chained with the FileSink writer and its committer`
    : `The job ("${p.name}" profile) is one chained vertex (Kafka source, an identity map, the FileSink writer and its committer) at one subtask per partition`;
  const storage =
    p.durableStorage === 's3'
      ? `completed checkpoints${o.ha ? " and ZooKeeper HA's storage" : ''} are on S3 in the run's bucket, so store faults reach them`
      : `the ${p.stateBackend === 'rocksdb' ? 'RocksDB' : 'heap'} state backend keeps completed checkpoints on the coordinator host's local disk`;
  const checkpoints = p.unalignedCheckpoints ? 'checkpoints are unaligned' : 'checkpoints are aligned';
  const failover =
    p.failoverStrategy === 'region'
      ? `a failure restarts its pipelined region (region failover), which for this job is the whole job: keyBy's all-to-all edge joins every subtask into one region; fixed-delay restarts ${o.restartDelay} apart`
      : `any failure restarts the whole job (full failover, fixed-delay restarts ${o.restartDelay} apart)`;
  return `${shape}; ${rollingWords(p.rolling)}; ${checkpoints}; ${storage}, ${haWords}; ${failover}.`;
}
