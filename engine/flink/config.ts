/**
 * The Flink cluster's files, as pure functions of the rig and the job: Flink's config.yaml
 * (one per host: the addresses it binds differ), the log4j2 configuration, ZooKeeper's
 * zoo.cfg, and the Java command lines of the three services. flink-dist (the distribution,
 * with its bin/ scripts) is not on Maven Central, so the plug starts the entry points from
 * the jar classpath itself, the way Flink's scripts would:
 *
 *   JobManager   org.apache.flink.runtime.entrypoint.StandaloneSessionClusterEntrypoint
 *   TaskManager  org.apache.flink.runtime.taskexecutor.TaskManagerRunner
 *   ZooKeeper    org.apache.flink.runtime.zookeeper.FlinkZooKeeperQuorumPeer (flink-runtime,
 *                running the ZooKeeper server shaded in flink-shaded-zookeeper-3)
 */

import type { FlinkJobProfile } from './profiles.ts';

export const FLINK_PORTS = { rest: 8081, jobManagerRpc: 6123, blob: 6124, taskManagerData: 6121, zookeeper: 2181 } as const;

export interface FlinkClusterSpec {
  coordinatorAddress: string;
  /** The address this host binds (coordinator or worker). */
  hostAddress: string;
  role: 'coordinator' | 'worker';
  slotsPerTaskManager: number;
  parallelism: number;
  /** The job profile (profiles.ts): state backend, checkpointing, managed memory and failover follow it. */
  profile: FlinkJobProfile;
  /** URI of the directory checkpoints go to: file:// on the coordinator host's durable state, or s3:// (profiles.ts flinkDurableDirs). */
  checkpointDir: string;
  /** URI of ZooKeeper HA's storage directory (job graphs, checkpoint pointers), or null for no HA. */
  haStorageDir: string | null;
  /** Local scratch directories (S3 writer buffers, blobs). */
  tmpDir: string;
  s3: { endpoint: string; accessKey: string; secretKey: string };
}

/** How long Flink waits before it restarts the job after a failure (see the restart strategy below). */
export const FLINK_RESTART_DELAY = '2 s';

/**
 * Each TaskManager's slots: the job's subtasks dealt over the workers (4 over 3: 2, 1, 1), so
 * the slots add up to the parallelism exactly. The job then runs only with every TaskManager,
 * each holds at least one subtask (each reading a partition, so each commits files), and a
 * killed TaskManager always fails the job, which waits for it to come back. Spare slots do not
 * work, whatever the restart delay: the JobMaster declares the lost slots again the moment a
 * TaskManager is lost, and the ResourceManager grants them at once from the survivors' spare
 * slots (flink-quick-20261204T074028-914f: worker-1 killed 07:41:48, lost 07:41:53.8, two
 * slots allocated on .13 and .12 at 07:41:53.9; worker-1 registered again at 07:42:05 and
 * stayed idle through the restart at 07:42:14). An idle TaskManager's kill hits nothing: no
 * failure, no recovery, and a recovery-only point armed elsewhere never fires.
 */
export function slotsPerWorker(parallelism: number, workers: number): number[] {
  const n = Math.max(1, workers);
  return Array.from({ length: n }, (_, i) => Math.floor(parallelism / n) + (i < parallelism % n ? 1 : 0));
}

function yamlScalar(v: string | number | boolean): string {
  if (typeof v !== 'string') return String(v);
  return JSON.stringify(v); // a JSON string is a valid YAML double-quoted scalar
}

/** Flink's config.yaml (Flink 2.x's standard YAML), flat keys. Holds the S3 credentials: write it 0600. */
export function flinkConfigYaml(s: FlinkClusterSpec): string {
  const kv: [string, string | number | boolean][] = [
    ['jobmanager.rpc.address', s.coordinatorAddress],
    ['jobmanager.rpc.port', FLINK_PORTS.jobManagerRpc],
    ['jobmanager.bind-host', s.role === 'coordinator' ? s.hostAddress : s.coordinatorAddress],
    // What the JobManager's JVM flags below amount to, in Flink's own memory model (the one
    // its scripts derive -Xmx from): 1024m - 256m metaspace - 192m overhead (the floor, as
    // 10% is less) - 128m off-heap = 448m of heap.
    ['jobmanager.memory.process.size', '1024m'],
    ['rest.address', s.coordinatorAddress],
    ['rest.bind-address', s.role === 'coordinator' ? s.hostAddress : s.coordinatorAddress],
    ['rest.port', FLINK_PORTS.rest],
    ['blob.server.port', FLINK_PORTS.blob],
    ['taskmanager.host', s.hostAddress],
    ['taskmanager.bind-host', s.hostAddress],
    // A random RPC port, new at each start: a TaskManager restarted at once on a fixed port
    // (1.8 s after its JVM halted) met a JobManager still associated with the dead incarnation
    // at the same address, and could not reach the ResourceManager for 5 min
    // (RegistrationTimeoutException; flink-quick-20261204T074810-b057, worker-1 at 07:55:43).
    // A new address per incarnation leaves the old one refusing, so the loss is seen at once.
    ['taskmanager.rpc.port', 0],
    ['taskmanager.data.port', FLINK_PORTS.taskManagerData],
    ['taskmanager.numberOfTaskSlots', s.slotsPerTaskManager],
    // Started without Flink's scripts, the TaskManager needs its resources spelled out
    // (the scripts would derive and pass them): 576m of Flink memory plus the profile's
    // managed memory (none for the heap state backend, which does not use it; RocksDB's
    // block cache and write buffers for the wide profile: native memory, outside -Xmx and
    // -XX:MaxDirectMemorySize).
    ['taskmanager.cpu.cores', s.slotsPerTaskManager],
    ['taskmanager.memory.framework.heap.size', '128m'],
    ['taskmanager.memory.task.heap.size', '256m'],
    ['taskmanager.memory.framework.off-heap.size', '128m'],
    ['taskmanager.memory.task.off-heap.size', '0m'],
    ['taskmanager.memory.network.min', '64m'],
    ['taskmanager.memory.network.max', '64m'],
    ['taskmanager.memory.managed.size', s.profile.managedMemory],
    ['taskmanager.memory.jvm-metaspace.size', '192m'],
    ['taskmanager.memory.jvm-overhead.min', '192m'],
    ['taskmanager.memory.jvm-overhead.max', '192m'],
    ['taskmanager.load-balance.mode', 'SLOTS'],
    // The JobMaster resolves each TaskManager's IP to a host name on its main thread; in the
    // rig's namespaces no DNS answers, each lookup waits for the resolver's timeouts, and the
    // blocked main thread missed heartbeats (30 s) so the job restarted several times at start.
    ['jobmanager.retrieve-taskmanager-hostname', false],
    ['parallelism.default', s.parallelism],
    ['io.tmp.dirs', s.tmpDir],
    // Checkpoints, as the profile says (profiles.ts). simple: the heap state backend,
    // completed checkpoints on the coordinator host's state directory, state below the 1 MiB
    // inline threshold inside the checkpoint's metadata file, which only the JobManager
    // writes, so TaskManagers never write there. wide: RocksDB keyed state, unaligned
    // checkpoints, checkpoints on S3 with Flink's default 20 KiB threshold, so the
    // TaskManagers write their state and in-flight data to the store as files.
    ['state.backend.type', s.profile.stateBackend],
    ['execution.checkpointing.storage', 'filesystem'],
    ['execution.checkpointing.dir', s.checkpointDir],
    ['execution.checkpointing.num-retained', 3],
    ['execution.checkpointing.externalized-checkpoint-retention', 'RETAIN_ON_CANCELLATION'],
    ['execution.checkpointing.data-inline-threshold', s.profile.dataInlineThreshold],
    ['execution.checkpointing.unaligned.enabled', s.profile.unalignedCheckpoints],
    ['web.checkpoints.history', 100],
    // Jar submission over REST needs flink-runtime-web, which the cluster does not carry
    // (the plug submits with the CLI); the setting is harmless without it.
    ['web.submit.enable', true],
    ['web.upload.dir', s.tmpDir],
    // Failures: restart the whole job (simple: full failover; wide: region failover, whose
    // one region is the whole job, see profiles.ts), so every subtask restores from the last
    // checkpoint and commits its committables again, as Clink redeploys every subtask when a
    // worker is lost, and a recovery-only point armed on any worker then fires; forever,
    // FLINK_RESTART_DELAY apart. A killed process is noticed at once (its connections are refused: two failed
    // heartbeat RPCs); the timeout stays generous for a busy 2-core machine. The slots add up
    // to the parallelism (slotsPerWorker), so a restart waits for a killed TaskManager's slots
    // to come back rather than packing the subtasks onto the survivors.
    ['jobmanager.execution.failover-strategy', s.profile.failoverStrategy],
    ['restart-strategy.type', 'fixed-delay'],
    ['restart-strategy.fixed-delay.attempts', 2147483647],
    ['restart-strategy.fixed-delay.delay', FLINK_RESTART_DELAY],
    ['heartbeat.interval', 5000],
    ['heartbeat.timeout', 60000],
    ['heartbeat.rpc-failure-threshold', 2],
    ['pekko.ask.timeout', '30 s'],
    ['taskmanager.slot.timeout', '60 s'],
    // The S3 filesystem (flink-s3-fs-hadoop) against the rig's MinIO.
    ['s3.endpoint', s.s3.endpoint],
    ['s3.path.style.access', true],
    ['s3.access-key', s.s3.accessKey],
    ['s3.secret-key', s.s3.secretKey],
  ];
  if (s.haStorageDir) {
    kv.push(
      ['high-availability.type', 'zookeeper'],
      ['high-availability.zookeeper.quorum', `${s.coordinatorAddress}:${FLINK_PORTS.zookeeper}`],
      ['high-availability.zookeeper.path.root', '/flink'],
      ['high-availability.cluster-id', '/clink-qual'],
      ['high-availability.storageDir', s.haStorageDir],
      ['zookeeper.sasl.disable', true],
    );
  }
  return kv.map(([k, v]) => `${k}: ${yamlScalar(v)}`).join('\n') + '\n';
}

/** log4j2 properties: everything at INFO to the console, which the rig service appends to out.log. */
export function log4jProperties(): string {
  return [
    'rootLogger.level = INFO',
    'rootLogger.appenderRef.console.ref = Console',
    'appender.console.name = Console',
    'appender.console.type = CONSOLE',
    'appender.console.layout.type = PatternLayout',
    'appender.console.layout.pattern = %d{yyyy-MM-dd\'T\'HH:mm:ss.SSSXXX} %-5p %-60c %x - %m%n',
    // Quiet the chatty ones; the sink's open line and checkpoint records stay at INFO.
    // Flink logs every config.yaml property as it loads it and masks only names it deems
    // secret (s3.secret-key, not s3.access-key): those lines stay out of the logs.
    'logger.globalconfig.name = org.apache.flink.configuration.GlobalConfiguration',
    'logger.globalconfig.level = WARN',
    'logger.kafka.name = org.apache.kafka',
    'logger.kafka.level = WARN',
    'logger.zookeeper.name = org.apache.flink.shaded.zookeeper3',
    'logger.zookeeper.level = WARN',
    'logger.hadoop.name = org.apache.hadoop',
    'logger.hadoop.level = WARN',
    'logger.s3hadoop.name = org.apache.flink.fs.s3hadoop.shaded',
    'logger.s3hadoop.level = WARN',
    '',
  ].join('\n');
}

/** zoo.cfg for a one-server ZooKeeper on the coordinator host. */
export function zooCfg(coordinatorAddress: string, dataDir: string): string {
  return [
    'tickTime=2000',
    'initLimit=10',
    'syncLimit=5',
    `dataDir=${dataDir}`,
    `clientPort=${FLINK_PORTS.zookeeper}`,
    `clientPortAddress=${coordinatorAddress}`,
    'maxClientCnxns=0',
    'autopurge.snapRetainCount=3',
    'autopurge.purgeInterval=1',
    // The admin server needs Jetty, which flink-shaded-zookeeper-3 does not carry.
    'admin.enableServer=false',
    '',
  ].join('\n');
}

export type FlinkService = 'flink-jobmanager' | 'flink-taskmanager' | 'flink-zookeeper';

export interface FlinkLayout {
  java: string;
  /** The directory of the cluster's jars. */
  lib: string;
  /** The directory holding config.yaml and log4j.properties. */
  conf: string;
}

const MAIN: Record<FlinkService, string> = {
  'flink-jobmanager': 'org.apache.flink.runtime.entrypoint.StandaloneSessionClusterEntrypoint',
  'flink-taskmanager': 'org.apache.flink.runtime.taskexecutor.TaskManagerRunner',
  'flink-zookeeper': 'org.apache.flink.runtime.zookeeper.FlinkZooKeeperQuorumPeer',
};

const JVM: Record<FlinkService, string[]> = {
  // jobmanager.memory.process.size 1024m as Flink's scripts would derive it: heap 448m,
  // metaspace 256m (no direct-memory limit: jobmanager.memory.enable-jvm-direct-memory-limit
  // is false by default).
  'flink-jobmanager': ['-Xms448m', '-Xmx448m', '-XX:MaxMetaspaceSize=256m'],
  // framework heap 128m + task heap 256m; direct memory: framework off-heap 128m + network
  // 64m; metaspace 192m (the values config.yaml declares).
  'flink-taskmanager': ['-Xms384m', '-Xmx384m', '-XX:MaxDirectMemorySize=192m', '-XX:MaxMetaspaceSize=192m'],
  'flink-zookeeper': ['-Xms64m', '-Xmx128m'],
};

/**
 * The module openings flink-dist's default config passes to every Flink JVM on Java 17
 * (env.java.opts.all): Flink reflects into java.util and friends (Kryo, the DataStream
 * translators), which Java 17's strong encapsulation refuses otherwise.
 */
export const JAVA17_OPENS = [
  '-XX:+IgnoreUnrecognizedVMOptions',
  '--add-exports=java.base/sun.net.util=ALL-UNNAMED',
  '--add-exports=java.rmi/sun.rmi.registry=ALL-UNNAMED',
  '--add-exports=java.security.jgss/sun.security.krb5=ALL-UNNAMED',
  ...['java.lang', 'java.net', 'java.io', 'java.nio', 'sun.nio.ch', 'java.lang.reflect', 'java.text', 'java.time', 'java.util', 'java.util.concurrent', 'java.util.concurrent.atomic', 'java.util.concurrent.locks'].map(
    (p) => `--add-opens=java.base/${p}=ALL-UNNAMED`,
  ),
];

function q(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * The command that submits the job, detached, with Flink's own CLI (flink-clients'
 * CliFrontend; the REST jar-upload endpoints live in flink-runtime-web, which the cluster
 * does not carry). It finds the JobManager through the config (ZooKeeper under HA) and
 * prints "Job has been submitted with JobID <id>".
 */
export function submitCommand(l: FlinkLayout, jobJar: string, programArgs: string[]): string {
  return [
    `FLINK_CONF_DIR=${q(l.conf)}`,
    q(l.java),
    '-Xmx256m',
    ...JAVA17_OPENS,
    `-Dlog4j.configurationFile=${q(`file:${l.conf}/log4j.properties`)}`,
    '-classpath',
    q(`${l.lib}/*`),
    'org.apache.flink.client.cli.CliFrontend',
    'run',
    '-d',
    '-c',
    'qual.clink.flink.ExactlyOnceJob',
    q(jobJar),
    ...programArgs.map(q),
  ].join(' ');
}

/**
 * The fault-point agent (engine/flink/agent) on a JobManager or TaskManager command line:
 * `-javaagent:<jar>=dir=<faults dir>,host=<rig host>,role=<role>[,mutant=<name>]`. The
 * agent reads `<faults dir>/armed.json` and appends `<faults dir>/fired.jsonl` (Clink's
 * contract); with a mutant it also installs that mutant's advice (engine/flink/mutants.ts).
 */
export interface FlinkAgentSpec {
  jar: string;
  faultsDir: string;
  host: string;
  role: 'worker' | 'coordinator';
  /** A mutant's name (engine/flink/mutants.ts); absent for the correct engine. */
  mutant?: string;
}

export function agentArg(a: FlinkAgentSpec): string {
  for (const v of [a.jar, a.faultsDir, a.host, ...(a.mutant !== undefined ? [a.mutant] : [])]) {
    if (/[,=\s]/.test(v) || v === '') throw new Error(`flink agent: '${v}' cannot be passed in the agent's arguments (empty, comma, '=' or space)`);
  }
  return q(`-javaagent:${a.jar}=dir=${a.faultsDir},host=${a.host},role=${a.role}${a.mutant !== undefined ? `,mutant=${a.mutant}` : ''}`);
}

/** The shell command (quoted) that runs the service in the foreground. */
export function serviceCommand(service: FlinkService, l: FlinkLayout, extra: { zooCfg?: string; agent?: FlinkAgentSpec } = {}): string {
  const agent = extra.agent && service !== 'flink-zookeeper' ? [agentArg(extra.agent)] : [];
  const args = [q(l.java), ...JVM[service], '-XX:+UseG1GC', ...JAVA17_OPENS, ...agent, `-Dlog4j.configurationFile=${q(`file:${l.conf}/log4j.properties`)}`, '-classpath', q(`${l.lib}/*`), MAIN[service]];
  if (service === 'flink-zookeeper') {
    if (!extra.zooCfg) throw new Error('flink-zookeeper needs a zoo.cfg');
    args.push('--zkConfigFile', q(extra.zooCfg), '--peerId', '1');
  } else {
    args.push('--configDir', q(l.conf));
  }
  return args.join(' ');
}
