/**
 * The engine under test is a plug. The harness (chaos/, oracle/, reports/, campaigns/)
 * drives an engine only through this interface; the bundled Clink (engine/clink/)
 * implements it, and another engine (say Flink with its S3 file sink) would implement it
 * too without touching the harness.
 *
 * Contract on the output, whatever the engine: every committed object under
 * `${job.prefix}` in `${job.bucket}` is JSON Lines, one input event a line, each line the
 * event exactly as generated (oracle/generator.ts), which carries `p` (partition) and
 * `seq` (sequence within the partition).
 */
import type { FaultKind, Provenance, ZombieTrail } from '../lib/evidence.ts';
import type { EngineLogFile, ZombieWindow } from './zombie-trail.ts';
import type { Remote } from '../rig/remote.ts';
import type { HostSpec, RigState, StoreCredentials } from '../rig/types.ts';

/**
 * The protocol points every qualification must cover (DESIGN.md, "Clink, the bundled
 * engine"): an engine plug's mandatoryFaultPoints. One that cannot reach them still names
 * them, so they are reported as not covered rather than dropped.
 */
export const MANDATORY_FAULT_POINTS = [
  'sink.before-prepare',
  'sink.after-prepare',
  'coordinator.before-complete-record',
  'coordinator.after-complete-record',
  'sink.before-commit',
  'sink.after-commit',
] as const;

export type EngineRole = 'worker' | 'coordinator';

export interface EngineJobSpec {
  /** Input topic (already created by the harness with `partitions` partitions). */
  topic: string;
  partitions: number;
  bucket: string;
  /** Object key prefix for this run, ending in '/'. */
  prefix: string;
  checkpointIntervalMs: number;
  /** A deliberately broken sink variant, or undefined for the correct sink. */
  mutant?: string;
  /**
   * Start the engine's processes under the host's controlled wall clock (rig/clock.ts,
   * libfaketime), so that clock-step faults can move it. Set when the plan has clock steps.
   */
  controlledClock?: boolean;
}

export interface EngineContext {
  rig: RigState;
  /** An open Remote for a rig host, by host name. */
  remote(hostName: string): Remote;
  credentials: StoreCredentials;
  runId: string;
  /** Progress lines for the operator. */
  log?: (line: string) => void;
}

export interface EngineProcess {
  host: string;
  role: EngineRole;
  /** The rig service name (rig/process.ts) on that host, for signals. */
  service: string;
  pid: number | null;
}

export interface EngineHealth {
  /** The job is running (all subtasks deployed in the current epoch). */
  running: boolean;
  epoch: number;
  completedCheckpoints: number;
  lastCompletedCheckpointId: number | null;
  /** ISO time of the last completed checkpoint record. */
  lastCompletedAt: string | null;
  /** Completed checkpoint records with times, newest last (at most the last 1000). */
  checkpoints?: { id: number; epoch: number; at: string }[];
  /**
   * How the engine reports refusing an object (an integrity stop), for the store-tamper
   * fault: set when it stopped or failed the job on an integrity error (an object at its key
   * that it did not write, or a committed object gone): when, and the engine's own message,
   * which names the key. Clink's coordinator stops the job and keeps the stop until the job
   * runs again; Flink fails the job and restarts it, and the newest refusal in its exception
   * history is kept for the deployment (engine/flink/tamper.ts).
   */
  integrityStop?: { at: string; message: string };
}

export interface FaultPointFiring {
  point: string;
  host: string;
  role: EngineRole;
  /** ISO time the process recorded that the point fired (just before it killed or stopped itself). */
  at: string;
  pid: number;
  checkpointId?: number;
  epoch?: number;
  /** 'pause' when the process stopped itself there (SIGSTOP) instead of dying; absent for a kill. */
  action?: FaultPointAction;
}

/**
 * What a process does at an armed point: die there (SIGKILL, the default), or stop itself
 * there (SIGSTOP) and go on from that instant when the harness resumes it (SIGCONT): a
 * zombie held at an exact protocol instant while the job moves on without it.
 */
export type FaultPointAction = 'kill' | 'pause';

export interface MutantInfo {
  name: string;
  /** The real failure mechanism it models. */
  mechanism: string;
  /**
   * Oracle counters at least one of which a campaign must raise to catch it, or
   * 'acceptedForeign': the verdict's store-tamper criterion (the engine recovered through a
   * tampered key without an integrity stop, Verdict.tamper.acceptedForeign).
   */
  caughtBy: ('duplicates' | 'gaps' | 'foreign' | 'corrupted' | 'mutations' | 'pastProduced' | 'acceptedForeign')[];
  /**
   * Fault kinds without which no campaign can expose it (e.g. only a process pause makes a
   * zombie). `qualify-mutants` skips it, saying so, under a campaign that schedules none of them.
   */
  exposedBy?: FaultKind[];
}

// ---- Store tamper (chaos/store-tamper.ts, oracle/findings.ts): what only the engine knows of its committed objects ----

/** A committed object as a listing of the store shows it. */
export interface CommittedObject {
  key: string;
  size: number;
  /** The store's LastModified (ISO), when the listing gave it. */
  lastModified?: string;
}

/** Where a committed object belongs, as far as its key tells: each null when the key does not say. */
export interface ObjectPlace {
  subtask: number | null;
  epoch: number | null;
  checkpoint: number | null;
}

/** The place of an object whose key tells nothing. */
export const NO_PLACE: ObjectPlace = Object.freeze({ subtask: null, epoch: null, checkpoint: null });

/** The object the engine will commit again at its next restore, and the completed checkpoint whose state holds it. */
export interface RecommitTarget extends CommittedObject {
  checkpointId: number;
  /** The subtask that committed it, when the engine knows. */
  subtask?: number;
}

/**
 * The store-tamper parts of the plug contract. An engine without them can still be
 * tampered with (the newest object is the target), but its acceptance of a foreign object
 * is never judged: the reaction is then an integrity stop (EngineHealth.integrityStop
 * naming the key) or 'not-met'.
 */
export interface EngineStoreTamper {
  /** Where a committed object belongs, from its key (default: NO_PLACE). */
  placeOfObject?(key: string): ObjectPlace;
  /**
   * Among the committed objects listed under the run's prefix, with the engine's health
   * read just before the listing: the object the engine will commit again when it next
   * restores from its latest completed checkpoint, and that checkpoint's id. Null when no
   * object can be placed in a checkpoint's restore set.
   */
  recommitTarget?(objects: readonly CommittedObject[], health: Pick<EngineHealth, 'checkpoints' | 'lastCompletedCheckpointId'>): RecommitTarget | null;
}

/** The place of a committed object by the engine's own reading of its key (NO_PLACE when the engine cannot read it). */
export function placeOfObject(engine: EngineStoreTamper | undefined, key: string): ObjectPlace {
  return engine?.placeOfObject?.(key) ?? NO_PLACE;
}

// ---- end of the store-tamper block ----

// ---- State corruption (chaos/state-corruption.ts, chaos/lost-unsynced-writes.ts): the engine's durable files ----

/**
 * One file an engine keeps to survive its own death, as the corruption faults see it. The
 * plug declares them, so that chaos/ names no engine's paths.
 */
export interface EngineDurableFile {
  /** Absolute path on the host, or a shell glob when `glob` is set (Flink's checkpoint directories carry ids). */
  path: string;
  glob?: boolean;
  /** The process that owns it: stopped before it is corrupted at rest, started again after. */
  role: EngineRole;
  /** What it holds, for the evidence (e.g. 'completed-checkpoint log'). */
  what: string;
  /**
   * How it is written: 'records' = newline-terminated records appended one at a time, each
   * fsynced before the engine acts on it (Clink's checkpoint log and sink journal); 'whole' =
   * written whole and published (fsync + rename, or closed before a pointer names it).
   */
  writes: 'records' | 'whole';
  /** The engine restores from it (a corruption there must be detected), or keeps it as its own bookkeeping only. */
  restoredFrom: boolean;
  /** 'records' files of JSON lines: the records a restore reads contain this text (Clink: '"t":"complete"'); the newest such is corrupted. Default: the newest record. */
  restoreRecordMarker?: string;
  /** 'records' files of JSON lines: the key whose value a restore resumes from (Clink: 'offsets'); a bit flip falls on a number under it when there is one. */
  restoreKey?: string;
  /**
   * 'whole' binary files: the numbers in this content that a restore resumes from (Flink's HA
   * handle: each source reader's Kafka offset), each by the offset of its lowest byte; a bit
   * flip falls on the lowest bit of one of them (the number off by one, a read that still
   * parses: the hardest single flip for a reader without a checksum). Empty when the content
   * holds none; without it, a flip falls on any byte.
   */
  restoreNumbers?(content: Buffer): RestoreNumber[];
}

/** A number a restore resumes from, in a durable file's bytes (EngineDurableFile.restoreNumbers). */
export interface RestoreNumber {
  /** The byte offset of its lowest byte. */
  offset: number;
  /** What it is, for the evidence (e.g. 'the source reader's Kafka offset of partition 2: 1834'). */
  what: string;
}

/** The durable-file part of the plug contract: an engine without it is never the target of a state-corruption fault. */
export interface EngineDurableFiles {
  /** The durable files of the engine's process of this role on this host. */
  durableFiles?(host: Pick<HostSpec, 'dataDir' | 'name'>, role: EngineRole): EngineDurableFile[];
  /**
   * Whether the process of this role on this host, started again, has read its durable files
   * and runs on from them (Flink: the job RUNNING under the new JobManager, which reads the
   * HA checkpoint store before it schedules a task). A state-corruption heal watches the
   * restarted process until this says so or the process stops, for up to REACTION_MAX_MS
   * (a JobManager that refuses a handle stops half a minute after its start); without it,
   * for REACTION_WATCH_MS (Clink reads its log as it starts).
   */
  restoredAfterStart?(host: string, role: EngineRole): Promise<boolean>;
}

// ---- end of the state-corruption block ----

export interface Engine extends EngineStoreTamper, EngineDurableFiles {
  readonly name: string;
  /** The sink family a correct deployment must name in its open-time log line. */
  readonly sinkFamily: string;
  readonly faultPoints: readonly string[];
  readonly mandatoryFaultPoints: readonly string[];
  /**
   * Points reached only while the engine recovers: they fire only when a later fault causes
   * a recovery. In a composition, the steps after such a point proceed once it is armed
   * (not once it fired), since they are what makes it fire.
   */
  readonly recoveryFaultPoints?: readonly string[];
  readonly mutants: readonly MutantInfo[];

  /** Uploads the engine and its configuration to the rig's worker and coordinator hosts. */
  deploy(ctx: EngineContext, job: EngineJobSpec): Promise<void>;
  /** Starts the coordinator and the workers and waits until the job runs. */
  start(): Promise<void>;
  /** Stops every engine process (idempotent). */
  stop(): Promise<void>;
  /** The engine's processes, per host. */
  processes(): Promise<EngineProcess[]>;
  /** Starts the process of this role on this host again (after a kill); returns it. */
  restart(host: string, role: EngineRole): Promise<EngineProcess>;
  health(): Promise<EngineHealth>;
  /**
   * Asks the engine for one checkpoint as soon as possible, outside its periodic cadence
   * (which goes on as before). Returns once the request is accepted, not when the checkpoint
   * completes: the caller watches health() for it like any other. A no-op while the job is
   * not running or a checkpoint is pending (the caller asks again if it still waits). The
   * harness asks only while it waits on a checkpoint outside the soak (the gate, the drain,
   * the settle: campaigns/runner/phases.ts), never during the soak, where recovery times are
   * measured against the periodic cadence. An engine without it is waited on as before.
   */
  triggerCheckpoint?(): Promise<void>;
  /**
   * Arms a named fault point: the next time (or `times` times) a process reaches it, it
   * records the firing and SIGKILLs itself, or with `action: 'pause'` SIGSTOPs itself and
   * goes on from there once resumed.
   */
  armFaultPoint(point: string, opts?: { times?: number; host?: string; action?: FaultPointAction }): Promise<void>;
  /** Disarms every armed point that has not fired. */
  disarmFaultPoints(): Promise<void>;
  firedFaultPoints(): Promise<FaultPointFiring[]>;
  /** Each worker's open-time sink log line, read from the worker's own log. */
  sinkOpenLines(): Promise<{ host: string; line: string }[]>;
  /**
   * Every multipart upload the engine started, from its own journal (key, uploadId); the
   * harness lists each key exactly to count those still pending. An engine with no such
   * journal (Flink) implements pendingUploads() instead.
   */
  startedUploads?(): Promise<{ key: string; uploadId: string }[]>;
  /** Multipart uploads still pending under the run's prefix, counted the engine's own way (`method` says how). */
  pendingUploads?(store: { endpoint: string; region: string; bucket: string; kind?: string }, credentials: StoreCredentials): Promise<{ pending: number; method: string }>;
  /** Mandatory protocol points this engine cannot reach, each with the reason; still counted as uncovered. */
  readonly faultPointsNotApplicable?: Readonly<Record<string, string>>;
  /** Where each named point sits in the engine and how it is injected, as the report names it. */
  readonly faultPointInjection?: Readonly<Record<string, string>>;
  /** The engine's own version as the report names it (Clink is versioned by the harness's revision). */
  readonly version?: string;
  /**
   * How the sink makes output visible, one or two sentences for the report's lead, after
   * "Whether an event lands once depends only on the engine:" (default: Clink's staged
   * multipart commits).
   */
  readonly sinkMechanism?: string;
  /**
   * How the engine finds out, when its commit is repeated after a recovery and the store
   * answers that the upload is gone, whether the object at the key is its own; a clause
   * for the report's paragraph on the kill after the commit (e.g. "it checks the object's
   * ETag and size"). Without it the report says nothing of how.
   */
  readonly commitCheck?: string;
  /**
   * How many objects a subtask commits per completed checkpoint, a clause for the report's
   * comparison of objects with checkpoints (e.g. "each subtask commits at most one object per
   * completed checkpoint"). Without it the report states only the evidence's ratio.
   */
  readonly commitCadence?: string;
  /**
   * What a restore does with the commits of the checkpoint it restores from, a clause for the
   * report's paragraph on the kill after the commit (e.g. "every restore commits the restored
   * checkpoint's pending commits again"). Without it the report says nothing of restores.
   */
  readonly restoreRecommit?: string;
  /**
   * The job as this plug deploys it, for the report's claim boundaries: its shape (vertices,
   * chaining, parallelism), how output files roll, where checkpoints are stored and how a
   * failure is recovered (e.g. full failover). One or two sentences.
   */
  readonly profile?: string;
  /**
   * The job profiles this plug can deploy, by name, the default first (a campaign's
   * `engine.profile` picks one; the plug is built with it, engine/index.ts loadEngine).
   * Absent or empty: the plug deploys one job and a campaign may not name a profile.
   */
  readonly jobProfiles?: readonly string[];
  /** The name of the job profile this plug deploys (one of jobProfiles), recorded in provenance.json. */
  readonly jobProfile?: string;
  /** Copies the engine's logs and journals into destDir/<host>/...; returns the files written. */
  collectLogs(destDir: string): Promise<string[]>;
  /**
   * A zombie's trail from the collected logs (zombies.json): whether this engine declared
   * the stopped process (or the one on a host cut off from the coordinator, kind
   * 'partition', which runs on meanwhile) lost and carried on without it, what the process
   * tried once resumed (a cut-off one: from the cut on), and what fenced it. Pure. An engine
   * without it leaves zombies unread.
   */
  zombieTrail?(w: ZombieWindow, logs: readonly EngineLogFile[]): ZombieTrail;
}

/** What the report says of the engine beyond its name: recorded in provenance.json at the run's start. */
export function engineDescription(
  engine: Engine,
): Pick<NonNullable<Provenance['engine']>, 'version' | 'sinkMechanism' | 'commitCheck' | 'commitCadence' | 'restoreRecommit' | 'profile' | 'jobProfile' | 'faultPointInjection' | 'faultPointsNotApplicable'> {
  return {
    ...(engine.version ? { version: engine.version } : {}),
    ...(engine.sinkMechanism ? { sinkMechanism: engine.sinkMechanism } : {}),
    ...(engine.commitCheck ? { commitCheck: engine.commitCheck } : {}),
    ...(engine.commitCadence ? { commitCadence: engine.commitCadence } : {}),
    ...(engine.restoreRecommit ? { restoreRecommit: engine.restoreRecommit } : {}),
    ...(engine.profile ? { profile: engine.profile } : {}),
    ...(engine.jobProfile ? { jobProfile: engine.jobProfile } : {}),
    ...(engine.faultPointInjection ? { faultPointInjection: { ...engine.faultPointInjection } } : {}),
    ...(engine.faultPointsNotApplicable && Object.keys(engine.faultPointsNotApplicable).length ? { faultPointsNotApplicable: { ...engine.faultPointsNotApplicable } } : {}),
  };
}
