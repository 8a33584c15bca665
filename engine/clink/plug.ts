/**
 * Clink as an Engine plug (engine/engine.ts): deploys the bundled engine to the rig's
 * coordinator and worker hosts over their Remotes, runs it as rig services, and reads its
 * evidence (status, checkpoint log, fired fault points, sink journals, logs) back.
 *
 * On each engine host everything lives under <dataDir>/clink/:
 *   clink.mjs           the bundle            config.json      this host's settings
 *   s3-credentials.json (0600, workers)       status.json      coordinator status
 *   checkpoints.log     the durable log       journal.jsonl    the sink's upload journal
 *   faults/armed.json, faults/fired.jsonl
 *   trigger-checkpoint  (coordinator) a checkpoint asked for now, until the coordinator takes it
 * and the services' stdout in <dataDir>/services/clink-<role>/out.log.
 */
import type { ZombieTrail } from '../../lib/evidence.ts';
import type { EngineLogFile, ZombieWindow } from '../zombie-trail.ts';
import { clinkZombieTrail } from './zombie.ts';
import path from 'node:path';
import type { Engine, EngineContext, EngineDurableFile, EngineHealth, EngineJobSpec, EngineProcess, EngineRole, FaultPointAction, FaultPointFiring } from '../engine.ts';
import type { Remote } from '../../rig/remote.ts';
import type { HostSpec } from '../../rig/types.ts';
import { serviceDir, servicePid, shQuote, startService, stopService, waitFor } from '../../rig/process.ts';
import { QualError } from '../../lib/errors.ts';
import { parseJsonl } from '../../lib/jsonl.ts';
import { controlledClockEnv } from '../../rig/clock.ts';
import { hostStateDir } from '../../rig/state-fs.ts';
import { EngineHosts, collectHostFiles } from '../hosts.ts';
import { clinkBundle } from './bundle.ts';
import type { ClinkConfig } from './config.ts';
import type { ClinkStatus } from './coordinator.ts';
import { decodeLine } from './durable-log.ts';
import { CHECKPOINT_REQUEST_FILE, checkpointRequestPath } from './checkpoint-request.ts';
import { CLINK_FAULT_POINT_INJECTION, COORDINATOR_FAULT_POINTS, FAULT_POINTS, MANDATORY_FAULT_POINTS, RECOVERY_FAULT_POINTS } from './fault-points.ts';
import { CLINK_MUTANTS, isClinkMutant } from './mutants/index.ts';
import { parseJournal, SINK_FAMILY } from './sink/s3-2pc-sink.ts';
import { armPoint, writeArmed } from '../armed-points.ts';
import { clinkPlaceOfObject, clinkRecommitTarget } from './tamper.ts';

export const COORDINATOR_SERVICE = 'clink-coordinator';
export const WORKER_SERVICE = 'clink-worker';
export const COORDINATOR_PORT = 7070;

export interface ClinkPlugOptions {
  /** Overrides for tests: shorter timeouts, another port. */
  coordinatorPort?: number;
  fencingTimeoutMs?: number;
  workerLossTimeoutMs?: number;
  startTimeoutMs?: number;
}

/** Clink's directory on a host: on the host's state filesystem (rig/state-fs.ts), which disk-full faults fill. */
export function clinkDir(host: Pick<HostSpec, 'dataDir'>): string {
  return `${hostStateDir(host)}/clink`;
}

function serviceFor(role: EngineRole): string {
  return role === 'coordinator' ? COORDINATOR_SERVICE : WORKER_SERVICE;
}

class ClinkEngine extends EngineHosts implements Engine {
  readonly name = 'clink';
  readonly sinkFamily = SINK_FAMILY;
  readonly commitCheck = "Clink checks the object's ETag, size and its own token in the metadata";
  /**
   * The lead's words on the sink (reports/report.ts). Runs recorded before this field keep the
   * report's default sentence ("stages them as multipart parts at the barrier"), true of the
   * engine they ran: parts were uploaded only at the barrier until 2026-12-06.
   */
  readonly sinkMechanism =
    'it buffers a checkpoint interval of records and stages them as the parts of a multipart upload (each whole part as soon as it is buffered, once the subtask knows its next checkpoint; the rest at the barrier), and makes the object visible with CompleteMultipartUpload only after the checkpoint is durable.';
  /** The sink stages nothing for an empty buffer (s3-2pc-sink.ts), and one upload per subtask per checkpoint otherwise. */
  readonly commitCadence = 'each subtask commits at most one object per completed checkpoint, none for a checkpoint in which it received no records';
  /** A lost worker or a failed subtask redeploys every subtask from the last completed checkpoint, whose handles each sink completes again (coordinator.ts, s3-2pc-sink.ts). */
  readonly restoreRecommit = 'every restore redeploys all subtasks from the last completed checkpoint, and each sink completes every upload handle restored with it again';
  readonly profile =
    "Clink's coordinator deals the topic's partitions over the workers, one subtask each (source and sink in one task), and writes its completed-checkpoint log to the coordinator host's local disk (append + fsync); each subtask stages one multipart upload per checkpoint; losing a worker or a subtask restores the whole job from the last completed checkpoint in a new epoch.";
  readonly faultPoints = FAULT_POINTS;
  readonly mandatoryFaultPoints = MANDATORY_FAULT_POINTS;
  readonly recoveryFaultPoints = RECOVERY_FAULT_POINTS;
  readonly mutants = CLINK_MUTANTS;
  readonly faultPointInjection = CLINK_FAULT_POINT_INJECTION;
  // Store tamper (EngineStoreTamper): Clink's keys say where an object belongs.
  readonly placeOfObject = clinkPlaceOfObject;
  readonly recommitTarget = clinkRecommitTarget;
  readonly opts: ClinkPlugOptions;

  /**
   * State corruption (EngineDurableFiles): the coordinator restores from its checkpoint log
   * (a crc32 per record, durable-log.ts), from the newest completed-checkpoint record, whose
   * `offsets` are where the sources resume. The workers' sink journal (key, uploadId; a crc32
   * per line) is read back by no restore, only by the harness's count of pending uploads
   * (startedUploads), which names a corrupted line in the run's log and does not count it.
   */
  durableFiles(host: Pick<HostSpec, 'dataDir' | 'name'>, role: EngineRole): EngineDurableFile[] {
    const dir = clinkDir(host);
    if (role === 'coordinator') {
      return [{ path: `${dir}/checkpoints.log`, role, what: 'the completed-checkpoint log (crc32 per record)', writes: 'records', restoredFrom: true, restoreRecordMarker: '"t":"complete"', restoreKey: 'offsets' }];
    }
    return [{ path: `${dir}/journal.jsonl`, role, what: "the sink's upload journal (crc32 per line; read by no restore)", writes: 'records', restoredFrom: false }];
  }
  #job: EngineJobSpec | null = null;

  constructor(opts: ClinkPlugOptions = {}) {
    super();
    this.opts = opts;
  }

  async deploy(ctx: EngineContext, job: EngineJobSpec): Promise<void> {
    this.deployedCtx = ctx;
    this.#job = job;
    if (job.mutant && job.mutant !== 'none' && !isClinkMutant(job.mutant)) {
      throw new QualError('BAD_ARGUMENTS', `clink: unknown mutant '${job.mutant}' (known: ${CLINK_MUTANTS.map((m) => m.name).join(', ')})`);
    }
    const mutant = isClinkMutant(job.mutant) ? job.mutant : undefined;
    const bundle = await clinkBundle();
    this.log(`clink: bundle ${path.basename(bundle.file)} sha256 ${bundle.sha256.slice(0, 12)}`);
    const coord = this.coordinatorHost;
    const port = this.opts.coordinatorPort ?? COORDINATOR_PORT;
    await Promise.all(
      this.engineHosts().map(async ({ host, role }) => {
        const r = this.remote(host);
        const dir = clinkDir(host);
        // A fresh run: stop leftovers, clear the previous run's state and logs (the bundle stays).
        await stopService(r, serviceFor(role), 5000);
        await r.exec(
          `mkdir -p ${shQuote(dir)}/faults && rm -f ${shQuote(dir)}/checkpoints.log ${shQuote(dir)}/status.json ${shQuote(dir)}/journal.jsonl ${shQuote(dir)}/faults/armed.json ${shQuote(dir)}/faults/fired.jsonl ${shQuote(dir)}/status.json.tmp-* ${shQuote(dir)}/${CHECKPOINT_REQUEST_FILE}* ; ` +
            `mkdir -p ${shQuote(serviceDir(r, serviceFor(role)))} && : > ${shQuote(serviceDir(r, serviceFor(role)))}/out.log`,
        );
        await r.upload(bundle.file, `${dir}/clink.mjs`, { mode: 0o644 });
        const credFile = `${dir}/s3-credentials.json`;
        await r.writeFile(credFile, JSON.stringify(ctx.credentials), { mode: 0o600 });
        await r.exec(`chmod 600 ${shQuote(credFile)}`);
        const cfg: ClinkConfig = {
          host: host.name,
          clinkDir: dir,
          coordinator: { address: coord.address, port },
          kafka: { bootstrap: ctx.rig.kafka.bootstrap.split(',').map((s) => s.trim()).filter(Boolean) },
          topic: job.topic,
          partitions: job.partitions,
          bucket: job.bucket,
          prefix: job.prefix,
          checkpointIntervalMs: job.checkpointIntervalMs,
          mutant,
          s3: { endpoint: ctx.rig.store.endpoint, region: ctx.rig.store.region, credentialsFile: credFile },
          expectedWorkers: this.workerHosts.map((h) => h.name),
          fencingTimeoutMs: this.opts.fencingTimeoutMs,
          workerLossTimeoutMs: this.opts.workerLossTimeoutMs,
        };
        await r.writeFile(`${dir}/config.json`, JSON.stringify(cfg, null, 2), { mode: 0o644 });
        this.log(`clink: deployed ${role} on ${host.name}`);
      }),
    );
  }

  #command(host: HostSpec, role: EngineRole): string {
    const dir = clinkDir(host);
    // RigState.nodePath is relative to the host's dataDir (or absolute).
    const node = this.ctx.rig.nodePath.startsWith('/') ? this.ctx.rig.nodePath : `${host.dataDir}/${this.ctx.rig.nodePath}`;
    return `${shQuote(node)} ${shQuote(`${dir}/clink.mjs`)} ${role} ${shQuote(`${dir}/config.json`)}`;
  }

  async #startOne(host: HostSpec, role: EngineRole): Promise<number> {
    const r = this.remote(host);
    const existing = await servicePid(r, serviceFor(role));
    if (existing !== null) return existing;
    const env = this.#job?.controlledClock ? await controlledClockEnv(r) : undefined;
    return startService(r, { name: serviceFor(role), command: this.#command(host, role), cwd: clinkDir(host), ...(env ? { env } : {}) });
  }

  async start(): Promise<void> {
    await this.#startOne(this.coordinatorHost, 'coordinator');
    await Promise.all(this.workerHosts.map((h) => this.#startOne(h, 'worker')));
    const n = this.workerHosts.length;
    await waitFor(
      `clink job running on ${n} workers`,
      async () => {
        const s = await this.#status();
        return !!s && s.running && s.workers.length === n;
      },
      this.opts.startTimeoutMs ?? 90_000,
      500,
    );
    this.log('clink: job running');
  }

  async stop(): Promise<void> {
    if (!this.deployedCtx) return;
    await Promise.all(this.workerHosts.map((h) => stopService(this.remote(h), WORKER_SERVICE, 10_000)));
    await stopService(this.remote(this.coordinatorHost), COORDINATOR_SERVICE, 10_000);
  }

  async processes(): Promise<EngineProcess[]> {
    return Promise.all(
      this.engineHosts().map(async ({ host, role }) => ({
        host: host.name,
        role,
        service: serviceFor(role),
        pid: await servicePid(this.remote(host), serviceFor(role)),
      })),
    );
  }

  async restart(hostName: string, role: EngineRole): Promise<EngineProcess> {
    if (this.roleOf(hostName) !== role) throw new QualError('BAD_ARGUMENTS', `${hostName} does not run the clink ${role}`);
    const host = this.ctx.rig.hosts.find((h) => h.name === hostName)!;
    const pid = await this.#startOne(host, role);
    return { host: hostName, role, service: serviceFor(role), pid };
  }

  async #status(): Promise<ClinkStatus | null> {
    const r = await this.remote(this.coordinatorHost).exec(`cat ${shQuote(clinkDir(this.coordinatorHost))}/status.json 2>/dev/null`, { check: false });
    if (!r.stdout.trim()) return null;
    try {
      return JSON.parse(r.stdout) as ClinkStatus;
    } catch {
      return null;
    }
  }

  async health(): Promise<EngineHealth> {
    const s = await this.#status();
    // The durable log is the authority on completed checkpoints; status.json mirrors it.
    const r = await this.remote(this.coordinatorHost).exec(`tail -n 3 ${shQuote(clinkDir(this.coordinatorHost))}/checkpoints.log 2>/dev/null`, { check: false });
    let lastDurable: { id: number; epoch: number; at: string } | null = null;
    for (const line of r.stdout.split('\n')) {
      const rec = decodeLine<{ t: string; id: number; epoch: number; at: string }>(line);
      if (rec?.t === 'complete') lastDurable = rec;
    }
    const checkpoints = s?.checkpoints ?? [];
    return {
      running: s?.running ?? false,
      epoch: s?.epoch ?? 0,
      completedCheckpoints: s?.completedCheckpoints ?? 0,
      lastCompletedCheckpointId: s?.lastCompletedCheckpointId ?? lastDurable?.id ?? null,
      lastCompletedAt: s?.lastCompletedAt ?? lastDurable?.at ?? null,
      checkpoints,
      ...(s?.integrityStop ? { integrityStop: s.integrityStop } : {}),
    };
  }

  /**
   * Asks the coordinator for a checkpoint now: creates its request file (checkpoint-request.ts)
   * atomically, written beside it and renamed, so the coordinator never takes a half-made one.
   * Resolves once the file is there; the coordinator's next look (within 250 ms) takes it and
   * triggers a barrier when the job runs and none is pending, and drops it otherwise.
   */
  async triggerCheckpoint(): Promise<void> {
    const file = checkpointRequestPath(clinkDir(this.coordinatorHost));
    const tmp = `${file}.plug-tmp`;
    await this.remote(this.coordinatorHost).exec(`printf '%s\\n' ${shQuote(JSON.stringify({ at: new Date().toISOString() }))} > ${shQuote(tmp)} && mv -f ${shQuote(tmp)} ${shQuote(file)}`, { timeoutMs: 15_000 });
  }

  /** The worker hosts running subtasks now (from the coordinator's status), busiest first. */
  async activeWorkers(): Promise<string[]> {
    const s = await this.#status();
    return (s?.workers ?? []).filter((w) => w.subtasks.length > 0).sort((a, b) => b.subtasks.length - a.subtasks.length).map((w) => w.id);
  }

  async armFaultPoint(point: string, opts: { times?: number; host?: string; action?: FaultPointAction } = {}): Promise<void> {
    if (!FAULT_POINTS.includes(point)) throw new QualError('BAD_ARGUMENTS', `clink: unknown fault point '${point}' (known: ${FAULT_POINTS.join(', ')})`);
    const isCoordinator = (COORDINATOR_FAULT_POINTS as readonly string[]).includes(point);
    let hostName = opts.host;
    if (!hostName) {
      if (isCoordinator) hostName = this.coordinatorHost.name;
      else {
        const active = await this.activeWorkers();
        hostName = active[0] ?? this.workerHosts[0]!.name;
      }
    }
    const role = this.roleOf(hostName);
    if (isCoordinator !== (role === 'coordinator')) throw new QualError('BAD_ARGUMENTS', `clink: ${point} is not reached on ${hostName} (${role})`);
    const host = this.ctx.rig.hosts.find((h) => h.name === hostName)!;
    const r = this.remote(host);
    const file = `${clinkDir(host)}/faults/armed.json`;
    const times = await armPoint(r, file, point, opts.times ?? 1, opts.action);
    this.log(`clink: armed ${point} x${times}${opts.action === 'pause' ? ' (pause)' : ''} on ${hostName}`);
  }

  async disarmFaultPoints(): Promise<void> {
    await Promise.all(
      this.engineHosts().map(async ({ host }) => {
        const r = this.remote(host);
        await writeArmed(r, `${clinkDir(host)}/faults/armed.json`, {});
      }),
    );
  }

  async firedFaultPoints(): Promise<FaultPointFiring[]> {
    const all = await Promise.all(
      this.engineHosts().map(async ({ host }) => {
        const r = await this.remote(host).exec(`cat ${shQuote(clinkDir(host))}/faults/fired.jsonl 2>/dev/null`, { check: false });
        return parseJsonl<FaultPointFiring>(r.stdout);
      }),
    );
    return all.flat().sort((a, b) => a.at.localeCompare(b.at));
  }

  async sinkOpenLines(): Promise<{ host: string; line: string }[]> {
    // The newest open line of each worker's log (one per subtask opened; they name the same settings).
    return this.lastWorkerLogLines(WORKER_SERVICE, 'family=');
  }

  async startedUploads(): Promise<{ key: string; uploadId: string }[]> {
    const seen = new Set<string>();
    const out: { key: string; uploadId: string }[] = [];
    for (const host of this.workerHosts) {
      // No journal: the worker started no upload. A journal that is there but cannot be read is an error naming it, never read as empty.
      const file = `${clinkDir(host)}/journal.jsonl`;
      const r = await this.remote(host).exec(`f=${shQuote(file)}; [ -e "$f" ] || exit 0; cat -- "$f"`, { check: false });
      if (r.code !== 0) throw new QualError('REMOTE_COMMAND_FAILED', `${host.name}: cannot read the sink's upload journal ${file}: ${r.stderr.trim() || `exit ${r.code}`}`, { host: host.name, path: file });
      const journal = parseJournal(r.stdout);
      // A corrupted line is never taken as an entry, and never dropped unsaid: its upload is not counted.
      for (const c of journal.corrupt) this.log(`clink: ${host.name}: journal.jsonl line at byte ${c.byte} fails its checksum; its upload is not counted as started: ${JSON.stringify(c.line.slice(0, 200))}`);
      for (const e of journal.entries) {
        const k = `${e.key}\n${e.uploadId}`;
        if (!e.key || !e.uploadId || seen.has(k)) continue;
        seen.add(k);
        out.push({ key: e.key, uploadId: e.uploadId });
      }
    }
    return out;
  }

  zombieTrail(w: ZombieWindow, logs: readonly EngineLogFile[]): ZombieTrail {
    return clinkZombieTrail(w, logs);
  }

  async collectLogs(destDir: string): Promise<string[]> {
    const written: string[] = [];
    for (const { host, role } of this.engineHosts()) {
      const r = this.remote(host);
      const dir = clinkDir(host);
      const files: [string, string][] = [
        [`${serviceDir(r, serviceFor(role))}/out.log`, 'out.log'],
        [`${dir}/faults/fired.jsonl`, 'fired.jsonl'],
        [`${dir}/faults/armed.json`, 'armed.json'],
        [`${dir}/config.json`, 'config.json'],
      ];
      if (role === 'coordinator') files.push([`${dir}/status.json`, 'status.json'], [`${dir}/checkpoints.log`, 'checkpoints.log']);
      else files.push([`${dir}/journal.jsonl`, 'journal.jsonl']);
      written.push(...(await collectHostFiles(r, files, path.join(destDir, host.name))));
    }
    return written;
  }
}

/** The bundled Clink engine. */
export function clinkEngine(opts: ClinkPlugOptions = {}): Engine & { activeWorkers(): Promise<string[]>; startedUploads(): Promise<{ key: string; uploadId: string }[]> } {
  return new ClinkEngine(opts);
}
