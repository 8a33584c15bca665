/**
 * Apache Flink as an Engine plug (engine/engine.ts): a Flink 2.2 session cluster on the
 * rig over SSH, started from the jars `rig install --engine flink` cached (rig/install-flink.ts;
 * a Flink run installs them on its first use, and so does deploy when none did), with
 * ZooKeeper high availability, running the job in engine/flink/job/ (Kafka source from the
 * earliest offset -> lines unchanged -> FileSink to s3://bucket/prefix, exactly-once
 * checkpoints at the campaign's interval) in one of two job profiles (profiles.ts, the
 * campaign's engine.profile): simple (one chained vertex, a part rolled and committed on
 * each checkpoint, checkpoints on the coordinator's disk, full failover) or wide (keyBy with
 * RocksDB keyed state, unaligned checkpoints and HA storage on S3, DefaultRollingPolicy,
 * region failover).
 *
 * Where things run (rig services, rig/process.ts):
 *   coordinator host  flink-zookeeper   one ZooKeeper server (the leader election and the
 *                                        pointers to job graphs and completed checkpoints)
 *                     flink-jobmanager  StandaloneSessionClusterEntrypoint (the "coordinator"
 *                                        process the chaos kinds kill)
 *   each worker host  flink-taskmanager TaskManagerRunner (the "worker" process)
 *
 * On each host, <dataDir>/flink/ holds lib/, plugins/, conf/ (config.yaml is 0600: it holds
 * the store's credentials), tmp/ and, on the coordinator, the job jar. The coordinator's
 * durable state lives on its state filesystem, <dataDir>/state/flink/: checkpoints/ (the
 * completed checkpoints' metadata), ha/ (ZooKeeper HA's storage: job graphs, checkpoint
 * handles) and zk/ (ZooKeeper's data); in the wide profile checkpoints/ and ha/ are on S3
 * instead, under s3://<bucket>/<run prefix>-flink/, and only zk/ stays on the disk. A JobManager SIGKILL loses nothing there; the
 * restarted JobManager is elected leader, reads the job graph and the latest completed
 * checkpoint through ZooKeeper and resumes the job, and the TaskManagers (same PIDs)
 * reconnect to it.
 *
 * Health comes from Flink's REST API on the coordinator (port 8081): /jobs/<id> for the
 * job's and tasks' state, /jobs/<id>/checkpoints for completed checkpoints (accumulated here
 * across JobManager restarts, which reset Flink's own counters), /jobs/<id>/metrics for
 * numRestarts. A checkpoint asked for now (Engine.triggerCheckpoint) is Flink's own REST
 * trigger, POST /jobs/<id>/checkpoints.
 */
import type { ZombieTrail } from '../../lib/evidence.ts';
import type { EngineLogFile, ZombieWindow } from '../zombie-trail.ts';
import { flinkZombieTrail } from './zombie.ts';
import { readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ListMultipartUploadsCommand, S3Client, type ListMultipartUploadsCommandOutput } from '@aws-sdk/client-s3';
import { MANDATORY_FAULT_POINTS, type Engine, type EngineContext, type EngineDurableFile, type EngineHealth, type EngineJobSpec, type EngineProcess, type EngineRole, type FaultPointAction, type FaultPointFiring, type MutantInfo } from '../engine.ts';
import type { Remote } from '../../rig/remote.ts';
import type { HostSpec, StoreCredentials } from '../../rig/types.ts';
import { serviceDir, servicePid, shQuote, startService, stopService, waitFor } from '../../rig/process.ts';
import { hostStateDir } from '../../rig/state-fs.ts';
import { component, installForEngine } from '../../rig/install.ts';
import { FLINK_AGENT_JAR, FLINK_JOB_JAR, FLINK_PINS } from '../../rig/install-flink.ts';
import { QualError } from '../../lib/errors.ts';
import { FLINK_PORTS, FLINK_RESTART_DELAY, flinkConfigYaml, log4jProperties, serviceCommand, slotsPerWorker, submitCommand, zooCfg, type FlinkAgentSpec, type FlinkLayout, type FlinkService } from './config.ts';
import { FLINK_COORDINATOR_FAULT_POINTS, FLINK_FAULT_POINT_INJECTION, FLINK_FAULT_POINTS, FLINK_NOT_APPLICABLE_POINTS, FLINK_RECOVERY_FAULT_POINTS } from './fault-points.ts';
import { parseJsonl } from '../../lib/jsonl.ts';
import { EngineHosts, collectHostFiles } from '../hosts.ts';
import { armPoint, writeArmed } from '../armed-points.ts';
import { flinkIntegrityStop, flinkRecommitTarget, type RestJobExceptions } from './tamper.ts';
import { FLINK_MUTANTS, isFlinkMutant } from './mutants.ts';
import { readerOffsets } from './ha-handle.ts';
import { DEFAULT_FLINK_JOB_PROFILE, FLINK_JOB_PROFILES, describeFlinkJobProfile, flinkDurableDirs, flinkJobProfile, flinkJobProfileArgs, isFlinkJobProfile, type FlinkJobProfile, type FlinkJobProfileName } from './profiles.ts';

export const SINK_FAMILY = 'flink_filesink_s3';
export const JOBMANAGER_SERVICE: FlinkService = 'flink-jobmanager';
export const TASKMANAGER_SERVICE: FlinkService = 'flink-taskmanager';
export const ZOOKEEPER_SERVICE: FlinkService = 'flink-zookeeper';

export interface FlinkPlugOptions {
  /** Run without ZooKeeper HA (then a JobManager SIGKILL loses the job: see docs/flink.md). */
  noHa?: boolean;
  startTimeoutMs?: number;
  /** The job profile to deploy (profiles.ts; the campaign's engine.profile); default simple. */
  profile?: string;
}

export function flinkDir(host: Pick<HostSpec, 'dataDir'>): string {
  return `${host.dataDir}/flink`;
}

export function flinkStateDir(host: Pick<HostSpec, 'dataDir'>): string {
  return `${hostStateDir(host)}/flink`;
}

/** Where the fault-point agent reads armed.json and appends fired.jsonl on a host. */
export function flinkFaultsDir(host: Pick<HostSpec, 'dataDir'>): string {
  return `${flinkDir(host)}/faults`;
}

function serviceFor(role: EngineRole): FlinkService {
  return role === 'coordinator' ? JOBMANAGER_SERVICE : TASKMANAGER_SERVICE;
}

interface RestCheckpoint {
  id: number;
  status: string;
  latest_ack_timestamp?: number;
  trigger_timestamp?: number;
}

/** One call to Flink's REST API at `baseUrl` (15 s at most): the JSON answer, or an error naming the call and its HTTP status. */
export async function flinkRest<T>(baseUrl: string, p: string, init?: RequestInit): Promise<T> {
  const res = await fetch(`${baseUrl}${p}`, { ...init, signal: AbortSignal.timeout(15_000) });
  if (!res.ok) throw new Error(`${init?.method ?? 'GET'} ${p}: HTTP ${res.status}`);
  return (await res.json()) as T;
}

/** flinkRest bound to one cluster. */
type FlinkRest = <T>(p: string, init?: RequestInit) => Promise<T>;

/**
 * Flink 2.2's REST call that triggers a checkpoint of a job (202 Accepted, answering
 * {"request-id": ...}): POST /jobs/<id>/checkpoints with the checkpoint type the job is
 * configured for (CONFIGURED; INCREMENTAL is refused by the API, FLINK-33723).
 */
export function checkpointTriggerRequest(jobId: string): { path: string; init: RequestInit } {
  return {
    path: `/jobs/${jobId}/checkpoints`,
    init: { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ checkpointType: 'CONFIGURED' }) },
  };
}

/**
 * Triggers a checkpoint of the job when it runs with every task and none is in progress,
 * through `rest`; returns the trigger's request id, or why nothing was asked. A job that is
 * not running (or a JobManager that does not answer) is a no-op, as the Engine contract
 * says; so is a checkpoint in progress, which Flink would otherwise queue the request behind
 * (the counts may lag behind by the REST cache's refresh, so a request may still be queued
 * behind a checkpoint that has just started). A failed trigger call throws.
 */
export async function triggerFlinkCheckpoint(rest: FlinkRest, jobId: string): Promise<{ requestId: string } | { skipped: string }> {
  try {
    const j = await rest<RestJob>(`/jobs/${jobId}`);
    if (!jobRunning(j)) return { skipped: `job ${j.state}, not every task running` };
    const c = await rest<{ counts?: { in_progress?: number } }>(`/jobs/${jobId}/checkpoints`);
    if ((c.counts?.in_progress ?? 0) > 0) return { skipped: 'a checkpoint is in progress' };
  } catch (err) {
    return { skipped: `job state unknown: ${(err as Error).message}` };
  }
  const req = checkpointTriggerRequest(jobId);
  const r = await rest<{ 'request-id'?: string }>(req.path, req.init);
  return { requestId: String(r['request-id'] ?? '?') };
}

interface RestJob {
  state: string;
  vertices: { status: string; parallelism: number; tasks: Record<string, number> }[];
}

/** The job runs with every task of every vertex deployed and running. */
function jobRunning(j: RestJob): boolean {
  const allTasksRunning = j.vertices.length > 0 && j.vertices.every((v) => v.status === 'RUNNING' && (v.tasks.RUNNING ?? 0) === v.parallelism);
  return j.state === 'RUNNING' && allTasksRunning;
}

class FlinkEngine extends EngineHosts implements Engine {
  readonly name = 'flink';
  readonly sinkFamily = SINK_FAMILY;
  /** Injected by the Java agent (engine/flink/agent) at Flink's own methods: see fault-points.ts. */
  readonly faultPoints: readonly string[] = FLINK_FAULT_POINTS;
  readonly recoveryFaultPoints: readonly string[] = FLINK_RECOVERY_FAULT_POINTS;
  /** The harness's mandatory points stay mandatory: uncovered, they are reported as such, never as covered. */
  readonly mandatoryFaultPoints: readonly string[] = MANDATORY_FAULT_POINTS;
  readonly faultPointsNotApplicable = FLINK_NOT_APPLICABLE_POINTS;
  /** Put into Flink's methods by the agent (engine/flink/mutants.ts, agent Mutants.java). */
  readonly mutants: readonly MutantInfo[] = FLINK_MUTANTS;
  readonly version = FLINK_PINS.flink;
  readonly faultPointInjection = FLINK_FAULT_POINT_INJECTION;
  /** How the sink gets an event into the store, as the deployed profile's rolling policy makes it (the report's lead). */
  get sinkMechanism(): string {
    const upload = "Flink's FileSink writes each subtask's part file to S3 as a multipart upload through Flink's S3 RecoverableWriter (a part is uploaded whenever 5 MiB are buffered)";
    const commit = "the committer makes the object visible with CompleteMultipartUpload only once that checkpoint is complete, and a restored job commits the checkpoint's committables again.";
    return this.#profile.rolling.policy === 'OnCheckpointRollingPolicy'
      ? `${upload}; at the checkpoint barrier the writer closes the in-progress part file for commit (prepareCommit: the rest uploaded, the upload left open) and its committable goes into the checkpoint; ${commit}`
      : `${upload}; a part file rolls by size or time (DefaultRollingPolicy), and at each checkpoint barrier the writer persists the part still open (what is buffered uploaded, its unfinished tail put beside the output as a hidden object, both recorded in the checkpoint so that a restore resumes the same upload) while a part that has rolled is closed for commit and its committable goes into the checkpoint; ${commit}`;
  }
  /** Read from flink-s3-fs-hadoop 2.2.0's S3Committer.commitAfterRecovery (javap): getObjectMetadata, then getContentLength against the recovered upload's total length. */
  readonly commitCheck =
    "Flink's S3Committer reads the object's metadata and accepts it when its length equals the recovered upload's, so only the size is checked";
  /** The job profiles this plug deploys (profiles.ts), the campaign's engine.profile; the first is the default. */
  readonly jobProfiles: readonly string[] = FLINK_JOB_PROFILES;
  /** The profile this plug deploys, by name (recorded in provenance.json). */
  get jobProfile(): FlinkJobProfileName {
    return this.#profile.name;
  }
  get #profile(): FlinkJobProfile {
    return flinkJobProfile(this.#profileName);
  }
  /**
   * simple (OnCheckpointRollingPolicy): a part file per subtask is rolled at every checkpoint,
   * and none is opened without a record. wide (DefaultRollingPolicy): a part is committed in
   * the first checkpoint after it rolled, by size or time, so most checkpoints commit none.
   */
  get commitCadence(): string {
    const r = this.#profile.rolling;
    return r.policy === 'OnCheckpointRollingPolicy'
      ? 'each subtask commits at most one part file per completed checkpoint (OnCheckpointRollingPolicy), none for a checkpoint in which it received no records'
      : `each subtask commits a part file only once it has rolled (DefaultRollingPolicy: at ${r.partSizeBytes / 2 ** 20} MiB, after ${r.rolloverIntervalMs / 1000} s open or ${r.inactivityIntervalMs / 1000} s without a record), with the first checkpoint completed after that, so a part spans checkpoints and most checkpoints commit none`;
  }
  /**
   * Flink's committer commits every committable restored with the checkpoint again on every
   * restore (commitAfterRecovery); failover restores every subtask: full failover (simple),
   * or region failover whose one region is the whole keyed job (wide, profiles.ts).
   */
  get restoreRecommit(): string {
    const how = this.#profile.failoverStrategy === 'full' ? 'full failover' : "region failover, and keyBy's all-to-all edge makes the whole job one region";
    return `every restore (${how}) restores every subtask from the last completed checkpoint, and Flink's committer commits every committable restored with it again`;
  }
  /** The job (job/ExactlyOnceJob.java) and the cluster's settings (config.ts) as the profile deploys them (profiles.ts), high availability as the options say. */
  get profile(): string {
    return describeFlinkJobProfile(this.#profile, { ha: !this.opts.noHa, restartDelay: FLINK_RESTART_DELAY });
  }
  /** Store tamper (EngineStoreTamper): the part file committed after the latest checkpoint (tamper.ts). Part keys name no subtask or checkpoint: no placeOfObject. */
  readonly recommitTarget = flinkRecommitTarget;
  /**
   * State corruption (EngineDurableFiles): the JobManager's completed checkpoints' metadata
   * (checkpoints/<job>/chk-<n>/_metadata) and, with HA, ZooKeeper HA's completed-checkpoint
   * handles in ha/; each written whole before ZooKeeper names it. A JobManager started again
   * under HA restores from the handle, a Java-serialised CompletedCheckpoint that holds the
   * small operator states inline (ha-handle.ts); the _metadata file is read only by a restore
   * from a path (flink run -s), which the plug never asks, so it is declared but not
   * restoredFrom (flink-corruption at abb911a: two flips in it changed nothing). A bit flip in
   * the handle falls on a source reader's Kafka offset (readerOffsets). The TaskManagers keep
   * no local state here (the heap backend, no local recovery). With checkpoints and HA
   * storage on S3 (the wide profile) no file a restore reads is on a host's disk: none.
   */
  durableFiles(host: Pick<HostSpec, 'dataDir' | 'name'>, role: EngineRole): EngineDurableFile[] {
    if (role !== 'coordinator' || this.#profile.durableStorage !== 'coordinator-disk') return [];
    const dir = flinkStateDir(host);
    const topic = this.#job?.topic;
    return [
      { path: `${dir}/checkpoints/*/chk-*/_metadata`, glob: true, role, what: "a completed checkpoint's metadata (read only by a restore from its path)", writes: 'whole', restoredFrom: false },
      ...(this.opts.noHa
        ? []
        : [{ path: `${dir}/ha/*/completedCheckpoint*`, glob: true, role, what: "ZooKeeper HA's completed-checkpoint handle", writes: 'whole' as const, restoredFrom: true, ...(topic ? { restoreNumbers: (content: Buffer) => readerOffsets(content, topic) } : {}) }]),
    ];
  }
  /** The JobManager has read the HA checkpoint store and runs the job again (its tasks all RUNNING); a TaskManager reads no durable file. */
  async restoredAfterStart(_host: string, role: EngineRole): Promise<boolean> {
    if (role !== 'coordinator') return true;
    return (await this.#jobState().catch(() => ({ running: false }))).running;
  }
  readonly opts: FlinkPlugOptions;
  readonly #profileName: FlinkJobProfileName;
  #job: EngineJobSpec | null = null;
  /** The newest refusal of an object in the job's exception history (tamper.ts), kept across JobManager restarts (whose history starts empty). */
  #integrityStop: { at: string; message: string } | null = null;
  #jobId: string | null = null;
  /** Completed checkpoints seen through the REST API, by id (Flink's own history resets when the JobManager restarts). */
  #completed = new Map<number, { id: number; epoch: number; at: string }>();
  /** Epochs of the JobManagers before the current one (Flink's numRestarts starts again at 0 with each). */
  #epochBase = 0;
  #lastRestarts = 0;

  /** QualError('BAD_ARGUMENTS') (exit 254) for a profile the plug does not know. */
  constructor(opts: FlinkPlugOptions = {}) {
    super();
    this.opts = opts;
    const p = opts.profile ?? DEFAULT_FLINK_JOB_PROFILE;
    if (!isFlinkJobProfile(p)) throw new QualError('BAD_ARGUMENTS', `flink: unknown job profile '${p}' (known: ${FLINK_JOB_PROFILES.join(', ')})`);
    this.#profileName = p;
  }

  get restUrl(): string {
    return `http://${this.coordinatorHost.address}:${FLINK_PORTS.rest}`;
  }

  get jobId(): string | null {
    return this.#jobId;
  }

  #layout(host: HostSpec): FlinkLayout {
    const d = flinkDir(host);
    return { java: 'java', lib: `${d}/lib`, conf: `${d}/conf` };
  }

  async deploy(ctx: EngineContext, job: EngineJobSpec): Promise<void> {
    this.deployedCtx = ctx;
    this.#job = job;
    this.#jobId = null;
    this.#completed.clear();
    this.#epochBase = 0;
    this.#lastRestarts = 0;
    this.#integrityStop = null;
    if (job.mutant && job.mutant !== 'none' && !isFlinkMutant(job.mutant)) {
      throw new QualError('BAD_ARGUMENTS', `flink: unknown mutant '${job.mutant}' (known: ${FLINK_MUTANTS.map((m) => m.name).join(', ')})`);
    }
    if (job.controlledClock) throw new QualError('BAD_ARGUMENTS', 'flink: clock-step faults (a controlled clock) are not supported for Flink');
    // Installed on Flink's first use when a campaign has not done it before (a rig test's direct deploy).
    const manifest = await installForEngine(this.name, (l) => this.log(`rig install: ${l}`));
    const lib = component(manifest, 'flink');
    const plugin = component(manifest, 'flink-s3-fs-hadoop');
    const jobJar = component(manifest, 'flink-job');
    const agent = component(manifest, 'flink-agent');
    this.log(`flink: Flink ${lib.version}, job ${jobJar.version} (sha256 ${jobJar.sha256.slice(0, 12)}), profile ${this.#profile.name}`);
    const libFiles = readdirSync(lib.path).sort();
    const coord = this.coordinatorHost;
    const parallelism = job.partitions;
    const slots = slotsPerWorker(parallelism, this.workerHosts.length);
    const profile = this.#profile;
    const durable = flinkDurableDirs(profile, { stateDir: flinkStateDir(coord), bucket: job.bucket, prefix: job.prefix, ha: !this.opts.noHa });
    await Promise.all(
      this.engineHosts().map(async ({ host, role }) => {
        const r = this.remote(host);
        const d = flinkDir(host);
        const services: FlinkService[] = role === 'coordinator' ? [JOBMANAGER_SERVICE, ZOOKEEPER_SERVICE] : [TASKMANAGER_SERVICE];
        for (const s of services) await stopService(r, s, 10_000);
        // A fresh run: the previous run's durable state, scratch and logs go (the jars stay).
        const logs = services.map((s) => `mkdir -p ${shQuote(serviceDir(r, s))} && : > ${shQuote(serviceDir(r, s))}/out.log`).join(' && ');
        await r.exec(`rm -rf ${shQuote(flinkStateDir(host))} ${shQuote(d)}/tmp && mkdir -p ${shQuote(flinkStateDir(host))} ${shQuote(d)}/tmp ${shQuote(d)}/conf && ${logs}`);
        // Drop jars of another version, then copy what differs (upload skips identical files).
        await r.exec(`mkdir -p ${shQuote(d)}/lib && cd ${shQuote(d)}/lib && for f in *; do case " ${libFiles.join(' ')} " in *" $f "*) ;; *) rm -f -- "$f";; esac; done`, { check: false });
        for (const f of libFiles) await r.upload(path.join(lib.path, f), `${d}/lib/${f}`, { mode: 0o644 });
        await r.exec(`rm -rf ${shQuote(d)}/plugins && mkdir -p ${shQuote(d)}/plugins/s3-fs-hadoop`);
        await r.upload(plugin.path, `${d}/plugins/s3-fs-hadoop/${path.basename(plugin.path)}`, { mode: 0o644, sha256: plugin.sha256 });
        if (role === 'coordinator') await r.upload(jobJar.path, `${d}/${FLINK_JOB_JAR}`, { mode: 0o644, sha256: jobJar.sha256 });
        // The fault-point agent, and an empty faults directory (nothing armed, nothing fired).
        await r.exec(`mkdir -p ${shQuote(d)}/agent && rm -rf ${shQuote(flinkFaultsDir(host))} && mkdir -p ${shQuote(flinkFaultsDir(host))}`);
        await r.upload(agent.path, `${d}/agent/${FLINK_AGENT_JAR}`, { mode: 0o644, sha256: agent.sha256 });
        const cfg = flinkConfigYaml({
          coordinatorAddress: coord.address,
          hostAddress: host.address,
          role,
          slotsPerTaskManager: role === 'worker' ? slots[this.workerHosts.findIndex((w) => w.name === host.name)] ?? 1 : 1,
          parallelism,
          profile,
          checkpointDir: durable.checkpointDir,
          haStorageDir: durable.haStorageDir,
          tmpDir: `${d}/tmp`,
          s3: { endpoint: ctx.rig.store.endpoint, accessKey: ctx.credentials.accessKeyId, secretKey: ctx.credentials.secretAccessKey },
        });
        await r.writeFile(`${d}/conf/config.yaml`, cfg, { mode: 0o600 });
        await r.exec(`chmod 600 ${shQuote(d)}/conf/config.yaml`);
        await r.writeFile(`${d}/conf/log4j.properties`, log4jProperties(), { mode: 0o644 });
        if (role === 'coordinator') await r.writeFile(`${d}/conf/zoo.cfg`, zooCfg(coord.address, `${flinkStateDir(host)}/zk`), { mode: 0o644 });
        this.log(`flink: deployed ${role} on ${host.name}`);
      }),
    );
  }

  async #startService(host: HostSpec, service: FlinkService): Promise<number> {
    const r = this.remote(host);
    const existing = await servicePid(r, service);
    if (existing !== null) return existing;
    const l = this.#layout(host);
    const mutant = this.#job?.mutant && this.#job.mutant !== 'none' ? this.#job.mutant : undefined;
    const agent: FlinkAgentSpec = { jar: `${flinkDir(host)}/agent/${FLINK_AGENT_JAR}`, faultsDir: flinkFaultsDir(host), host: host.name, role: service === JOBMANAGER_SERVICE ? 'coordinator' : 'worker', ...(mutant ? { mutant } : {}) };
    const command = service === ZOOKEEPER_SERVICE ? serviceCommand(service, l, { zooCfg: `${l.conf}/zoo.cfg` }) : serviceCommand(service, l, { agent });
    if (service === JOBMANAGER_SERVICE && this.#jobId) {
      // A JobManager restart is one more epoch; its numRestarts counts from 0 again.
      this.#epochBase += this.#lastRestarts + 1;
      this.#lastRestarts = 0;
    }
    return startService(r, { name: service, command, cwd: flinkDir(host), env: { FLINK_PLUGINS_DIR: `${flinkDir(host)}/plugins`, FLINK_CONF_DIR: l.conf } });
  }

  #rest<T>(p: string, init?: RequestInit): Promise<T> {
    return flinkRest<T>(this.restUrl, p, init);
  }

  async start(): Promise<void> {
    const coord = this.coordinatorHost;
    const timeout = this.opts.startTimeoutMs ?? 180_000;
    if (!this.opts.noHa) {
      await this.#startService(coord, ZOOKEEPER_SERVICE);
      await waitFor('ZooKeeper on the coordinator', async () => (await this.remote(coord).exec(`exec 3<>/dev/tcp/${coord.address}/${FLINK_PORTS.zookeeper}`, { check: false })).code === 0, 60_000, 500);
    }
    await this.#startService(coord, JOBMANAGER_SERVICE);
    await Promise.all(this.workerHosts.map((h) => this.#startService(h, TASKMANAGER_SERVICE)));
    const n = this.workerHosts.length;
    await waitFor(`${n} Flink TaskManagers registered`, async () => (await this.#rest<{ taskmanagers: number }>('/overview')).taskmanagers >= n, timeout, 1000);
    this.log(`flink: JobManager and ${n} TaskManagers up`);
    if (!this.#jobId) await this.#submit();
    await waitFor('flink job running with every task deployed', async () => (await this.#jobState()).running, timeout, 1000);
    this.log(`flink: job ${this.#jobId} running`);
  }

  async #submit(): Promise<void> {
    const job = this.#job!;
    const coord = this.coordinatorHost;
    const l = this.#layout(coord);
    const args = [
      '--bootstrap', this.ctx.rig.kafka.bootstrap,
      '--topic', job.topic,
      '--output', `s3://${job.bucket}/${job.prefix}`,
      '--checkpoint-interval-ms', String(job.checkpointIntervalMs),
      '--parallelism', String(job.partitions),
      '--family', SINK_FAMILY,
      ...flinkJobProfileArgs(this.#profile),
    ];
    const cmd = `cd ${shQuote(flinkDir(coord))} && FLINK_PLUGINS_DIR=${shQuote(`${flinkDir(coord)}/plugins`)} ${submitCommand(l, `${flinkDir(coord)}/${FLINK_JOB_JAR}`, args)} >> ${shQuote(serviceDir(this.remote(coord), JOBMANAGER_SERVICE))}/submit.log 2>&1; tail -n 40 ${shQuote(serviceDir(this.remote(coord), JOBMANAGER_SERVICE))}/submit.log`;
    const r = await this.remote(coord).exec(cmd, { timeoutMs: 180_000, check: false });
    const m = /Job has been submitted with JobID ([0-9a-f]{32})/.exec(r.stdout);
    if (!m) throw new QualError('REMOTE_COMMAND_FAILED', `flink: the job was not submitted:\n${r.stdout.slice(-2000)}`);
    this.#jobId = m[1]!;
    this.log(`flink: submitted job ${this.#jobId}`);
  }

  async #jobState(): Promise<{ running: boolean; state: string }> {
    if (!this.#jobId) return { running: false, state: 'NOT SUBMITTED' };
    const j = await this.#rest<RestJob>(`/jobs/${this.#jobId}`);
    return { running: jobRunning(j), state: j.state };
  }

  async stop(): Promise<void> {
    if (!this.deployedCtx) return;
    // Cancel the job first (best effort) so ZooKeeper HA does not keep it for a later cluster.
    if (this.#jobId) await fetch(`${this.restUrl}/jobs/${this.#jobId}?mode=cancel`, { method: 'PATCH', signal: AbortSignal.timeout(5000) }).catch(() => {});
    await Promise.all(this.workerHosts.map((h) => stopService(this.remote(h), TASKMANAGER_SERVICE, 15_000)));
    await stopService(this.remote(this.coordinatorHost), JOBMANAGER_SERVICE, 15_000);
    await stopService(this.remote(this.coordinatorHost), ZOOKEEPER_SERVICE, 10_000);
  }

  async processes(): Promise<EngineProcess[]> {
    return Promise.all(
      this.engineHosts().map(async ({ host, role }) => ({ host: host.name, role, service: serviceFor(role), pid: await servicePid(this.remote(host), serviceFor(role)) })),
    );
  }

  async restart(hostName: string, role: EngineRole): Promise<EngineProcess> {
    if (this.roleOf(hostName) !== role) throw new QualError('BAD_ARGUMENTS', `${hostName} does not run the flink ${role}`);
    const host = this.ctx.rig.hosts.find((h) => h.name === hostName)!;
    if (role === 'coordinator' && !this.opts.noHa) await this.#startService(host, ZOOKEEPER_SERVICE);
    const pid = await this.#startService(host, serviceFor(role));
    return { host: hostName, role, service: serviceFor(role), pid };
  }

  async health(): Promise<EngineHealth> {
    let running = false;
    if (this.#jobId) {
      try {
        running = (await this.#jobState()).running;
        const m = await this.#rest<{ id: string; value: string }[]>(`/jobs/${this.#jobId}/metrics?get=numRestarts`);
        const v = Number(m.find((x) => x.id === 'numRestarts')?.value);
        if (Number.isFinite(v) && v >= this.#lastRestarts) this.#lastRestarts = v;
        const c = await this.#rest<{ history?: RestCheckpoint[]; latest?: { completed?: RestCheckpoint | null } }>(`/jobs/${this.#jobId}/checkpoints`);
        const seen = [...(c.history ?? []), ...(c.latest?.completed ? [c.latest.completed] : [])];
        for (const cp of seen) {
          if (cp.status !== 'COMPLETED' || this.#completed.has(cp.id)) continue;
          const t = cp.latest_ack_timestamp ?? cp.trigger_timestamp ?? Date.now();
          this.#completed.set(cp.id, { id: cp.id, epoch: this.#epoch(), at: new Date(t).toISOString() });
        }
        // The exception history only adds a refusal: a failed read of it changes nothing else.
        const ex = await this.#rest<RestJobExceptions>(`/jobs/${this.#jobId}/exceptions`).catch(() => null);
        const stop = ex ? flinkIntegrityStop(ex) : null;
        if (stop && (!this.#integrityStop || stop.at > this.#integrityStop.at)) this.#integrityStop = stop;
      } catch {
        running = false; // the JobManager is down or not leader yet: what was seen stays
      }
    }
    const checkpoints = [...this.#completed.values()].sort((a, b) => a.id - b.id).slice(-1000);
    const last = checkpoints.at(-1) ?? null;
    return { running, epoch: this.#epoch(), completedCheckpoints: this.#completed.size, lastCompletedCheckpointId: last?.id ?? null, lastCompletedAt: last?.at ?? null, checkpoints, ...(this.#integrityStop ? { integrityStop: this.#integrityStop } : {}) };
  }

  /** Asks Flink for a checkpoint now (triggerFlinkCheckpoint): a no-op before the job was submitted, while it is not running or while a checkpoint is in progress. */
  async triggerCheckpoint(): Promise<void> {
    if (!this.#jobId) return;
    const r = await triggerFlinkCheckpoint(<T>(p: string, init?: RequestInit) => this.#rest<T>(p, init), this.#jobId);
    if ('requestId' in r) this.log(`flink: checkpoint triggered on request (trigger ${r.requestId})`);
  }

  /** Job restarts (Flink's numRestarts) plus one per JobManager restart, with the restarts each earlier JobManager had seen: monotonic. */
  #epoch(): number {
    return this.#epochBase + this.#lastRestarts;
  }

  /**
   * The worker hosts running the sink's subtasks now (REST: each vertex's TaskManagers,
   * matched to the rig's worker addresses), most subtasks first. Flink chains the writer
   * and the committer with the source, so every subtask of the job has both.
   */
  async activeWorkers(): Promise<string[]> {
    if (!this.#jobId) return [];
    const j = await this.#rest<{ vertices: { id: string; name: string }[] }>(`/jobs/${this.#jobId}`);
    const sinkVertices = j.vertices.filter((v) => /writer|committer|sink/i.test(v.name));
    const counts = new Map<string, number>();
    for (const v of sinkVertices.length ? sinkVertices : j.vertices) {
      const tms = await this.#rest<{ taskmanagers?: Record<string, unknown>[] }>(`/jobs/${this.#jobId}/vertices/${v.id}/taskmanagers`);
      for (const tm of tms.taskmanagers ?? []) {
        const text = JSON.stringify(tm);
        const host = this.workerHosts.find((h) => text.includes(`"${h.address}:`) || text.includes(`"${h.address}"`));
        const running = Number((tm['status-counts'] as Record<string, number> | undefined)?.RUNNING ?? 1);
        if (host) counts.set(host.name, (counts.get(host.name) ?? 0) + running);
      }
    }
    return [...counts.entries()].filter(([, n]) => n > 0).sort((a, b) => b[1] - a[1]).map(([h]) => h);
  }

  async armFaultPoint(point: string, opts: { times?: number; host?: string; action?: FaultPointAction } = {}): Promise<void> {
    if (!FLINK_FAULT_POINTS.includes(point)) throw new QualError('BAD_ARGUMENTS', `flink: unknown fault point '${point}' (known: ${FLINK_FAULT_POINTS.join(', ')})`);
    const isCoordinator = FLINK_COORDINATOR_FAULT_POINTS.includes(point);
    let hostName = opts.host;
    if (!hostName) hostName = isCoordinator ? this.coordinatorHost.name : ((await this.activeWorkers().catch(() => []))[0] ?? this.workerHosts[0]!.name);
    const role = this.roleOf(hostName);
    if (isCoordinator !== (role === 'coordinator')) throw new QualError('BAD_ARGUMENTS', `flink: ${point} is not reached on ${hostName} (${role})`);
    const host = this.ctx.rig.hosts.find((h) => h.name === hostName)!;
    const r = this.remote(host);
    const file = `${flinkFaultsDir(host)}/armed.json`;
    const times = await armPoint(r, file, point, opts.times ?? 1, opts.action);
    this.log(`flink: armed ${point} x${times}${opts.action === 'pause' ? ' (pause)' : ''} on ${hostName}`);
  }

  async disarmFaultPoints(): Promise<void> {
    await Promise.all(this.engineHosts().map(({ host }) => writeArmed(this.remote(host), `${flinkFaultsDir(host)}/armed.json`, {})));
  }

  /** The agents' fired records (fired.jsonl on each engine host), oldest first. */
  async firedFaultPoints(): Promise<FaultPointFiring[]> {
    if (!this.deployedCtx) return [];
    const all = await Promise.all(
      this.engineHosts().map(async ({ host }) => {
        const r = await this.remote(host).exec(`cat ${shQuote(flinkFaultsDir(host))}/fired.jsonl 2>/dev/null`, { check: false });
        return parseJsonl<FaultPointFiring>(r.stdout);
      }),
    );
    return all.flat().sort((a, b) => a.at.localeCompare(b.at));
  }

  /**
   * Each worker's newest sink-open line of the deployed profile (the job logs
   * `profile=<name> rolling=<policy>`): a line of another profile or rolling policy is not
   * this job's, so it does not confirm the sink.
   */
  async sinkOpenLines(): Promise<{ host: string; line: string }[]> {
    const lines = await this.lastWorkerLogLines(TASKMANAGER_SERVICE, 'clink-qual flink sink open: family=');
    return lines.filter((l) => sinkOpenLineMatches(l.line, this.#profile));
  }

  /**
   * Multipart uploads pending under the run's prefix. Flink keeps no journal of the uploads
   * it starts (their keys are part-<uuid>-<subtask>-<n>.jsonl, decided inside the writer),
   * so this lists the bucket's pending uploads with an empty prefix and keeps those under
   * the run's prefix. MinIO answers that listing from an in-memory cache that a restart of
   * the store empties; the campaigns pause the store (SIGSTOP) and never restart it.
   */
  async pendingUploads(store: { endpoint: string; region: string; bucket: string; kind?: string }, credentials: StoreCredentials): Promise<{ pending: number; method: string; keys: string[] }> {
    const prefix = this.#job?.prefix ?? '';
    const s3 = new S3Client({ endpoint: store.endpoint, region: store.region, forcePathStyle: true, credentials, maxAttempts: 3 });
    const keys: string[] = [];
    try {
      let keyMarker: string | undefined;
      let uploadIdMarker: string | undefined;
      do {
        const r: ListMultipartUploadsCommandOutput = await s3.send(new ListMultipartUploadsCommand({ Bucket: store.bucket, KeyMarker: keyMarker, UploadIdMarker: uploadIdMarker }));
        for (const u of r.Uploads ?? []) if (u.Key?.startsWith(prefix)) keys.push(u.Key);
        keyMarker = r.IsTruncated ? r.NextKeyMarker : undefined;
        uploadIdMarker = r.IsTruncated ? r.NextUploadIdMarker : undefined;
      } while (keyMarker);
    } finally {
      s3.destroy();
    }
    // MinIO answers the listing from its in-memory cache (said, since a restart empties it); another store as it keeps them.
    const cache = (store.kind ?? 'minio') === 'minio' ? ', MinIO in-memory cache' : '';
    return { pending: keys.length, method: `ListMultipartUploads on the bucket (empty prefix${cache}), keys under the run prefix`, keys };
  }

  zombieTrail(w: ZombieWindow, logs: readonly EngineLogFile[]): ZombieTrail {
    return flinkZombieTrail(w, logs);
  }

  async collectLogs(destDir: string): Promise<string[]> {
    const written: string[] = [];
    for (const { host, role } of this.engineHosts()) {
      const r = this.remote(host);
      const services: FlinkService[] = role === 'coordinator' ? [JOBMANAGER_SERVICE, ZOOKEEPER_SERVICE] : [TASKMANAGER_SERVICE];
      const files: [string, string][] = services.map((s) => [`${serviceDir(r, s)}/out.log`, `${s}.out.log`]);
      files.push([`${flinkFaultsDir(host)}/fired.jsonl`, 'faults.fired.jsonl'], [`${flinkFaultsDir(host)}/armed.json`, 'faults.armed.json']);
      if (role === 'coordinator') files.push([`${serviceDir(r, JOBMANAGER_SERVICE)}/submit.log`, 'submit.log']);
      const hostDir = path.join(destDir, host.name);
      written.push(...(await collectHostFiles(r, files, hostDir)));
      // The config without its credentials.
      const cfg = await r.exec(`grep -v -E '^s3\\.(access|secret)-key:' ${shQuote(flinkDir(host))}/conf/config.yaml 2>/dev/null`, { check: false });
      if (cfg.stdout) {
        const local = path.join(hostDir, 'config.redacted.yaml');
        writeFileSync(local, cfg.stdout);
        written.push(local);
      }
    }
    const cps = path.join(destDir, this.coordinatorHost.name, 'checkpoints.json');
    writeFileSync(cps, JSON.stringify({ jobId: this.#jobId, completed: [...this.#completed.values()].sort((a, b) => a.id - b.id) }, null, 2) + '\n');
    written.push(cps);
    return written;
  }
}

/** Whether a sink-open line (job/ExactlyOnceJob.java) names the profile and the rolling policy `p` deploys. */
export function sinkOpenLineMatches(line: string, p: FlinkJobProfile): boolean {
  const fields = new Set(line.trim().split(/\s+/));
  return fields.has(`profile=${p.name}`) && fields.has(`rolling=${p.rolling.policy}`);
}

/** Apache Flink behind the plug; QualError('BAD_ARGUMENTS') for an unknown `opts.profile`. */
export function flinkEngine(opts: FlinkPlugOptions = {}): FlinkEngine {
  return new FlinkEngine(opts);
}
export type { FlinkEngine };
