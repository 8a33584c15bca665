/**
 * The evidence a run leaves in runs/<run-id>/, one format per file. Everything the report
 * says is read from these files; `clink-qual report` needs nothing else.
 *
 *   campaign.yaml       the campaign as given;  campaign.resolved.json  with defaults filled
 *   provenance.json     Provenance
 *   plan.json           the seeded timeline (PlannedFault[])
 *   chaos.jsonl         ChaosRecord, one a line, appended as faults move
 *   gate.json           GateResult
 *   samples.jsonl       Sample, one a line
 *   ledger.jsonl        LedgerEntry, one a line (the oracle's ETag ledger)
 *   checkpoints.jsonl   { id, epoch, at, seenAt } of every completed checkpoint seen (at: the engine's clock; seenAt: the harness's, when its health poll first listed it)
 *   phases.jsonl        PhaseMark, one a line: when each phase (gate, soak, ...) started and ended
 *   resources.jsonl     ResourceSample, one a line (campaigns/runner/resources.ts)
 *   recount.json        Recount (written by the separate recount process)
 *   verdict.json        Verdict
 *   logs/<host>/...     collected logs
 *   report.md, timeline.svg, junit.xml
 */

export const COUNTER_NAMES = ['duplicates', 'gaps', 'foreign', 'corrupted', 'mutations', 'pastProduced'] as const;
export type CounterName = (typeof COUNTER_NAMES)[number];
export type Counters = Record<CounterName, number>;

export function zeroCounters(): Counters {
  return { duplicates: 0, gaps: 0, foreign: 0, corrupted: 0, mutations: 0, pastProduced: 0 };
}

/** The counters above zero, as `name=value`, in COUNTER_NAMES order. */
export function raisedCounters(c: Counters): string[] {
  return COUNTER_NAMES.filter((n) => c[n] > 0).map((n) => `${n}=${c[n]}`);
}

/** A fault kind's name: one per package in chaos/kinds.ts (the names: lib/fault-kinds.ts). */
export type { FaultKind } from './fault-kinds.ts';
import type { FaultKind } from './fault-kinds.ts';

/** What a store-tamper fault's foreign writer does under the engine's prefix. */
export const TAMPER_VARIANTS = ['foreign-put', 'overwrite', 'delete'] as const;
export type TamperVariant = (typeof TAMPER_VARIANTS)[number];
/** How a state-corruption fault corrupts the newest record of an engine's durable file (chaos/state-corruption.ts). */
export const CORRUPTION_VARIANTS = ['bitflip', 'torn'] as const;
export type CorruptionVariant = (typeof CORRUPTION_VARIANTS)[number];
/** Where a store-bitrot fault rots the store's data (chaos/store-bitrot.ts). */
export const BITROT_VARIANTS = ['committed', 'staged', 'read'] as const;
export type BitrotVariant = (typeof BITROT_VARIANTS)[number];
/** protocol-point: the process kills itself at the point (the default), or stops itself there (a zombie held at that instant). */
export const PROTOCOL_POINT_VARIANTS = ['kill', 'pause'] as const;
export type ProtocolPointVariant = (typeof PROTOCOL_POINT_VARIANTS)[number];
/** Any fault kind's variant. */
export type FaultVariant = TamperVariant | CorruptionVariant | BitrotVariant | ProtocolPointVariant;

export interface PlannedFault {
  id: string; // f001, f002...
  kind: FaultKind;
  /** Seconds after the soak starts. */
  atS: number;
  /** How long the fault is held before healing (store outage, partition, packet loss). */
  durationS?: number;
  /** Host name, or a selector resolved at plan time ('worker-2'). */
  target?: string;
  /** protocol-point: the named point. packet-loss: the drop share 0..1. */
  point?: string;
  share?: number;
  /** store-tamper: what the foreign writer does (foreign-put, overwrite, delete). state-corruption: bitflip or torn. store-bitrot: committed, staged or read. */
  variant?: FaultVariant;
  /** clock-step: how far the engine's wall clock jumps, in seconds (negative: back). */
  offsetS?: number;
  /** Set when the fault belongs to a composition; all faults of one composition share it. */
  composition?: string;
}

/**
 * heal-failed: the heal threw; the fault may still be in force, so nothing after it is certified.
 * composition-recovered / composition-not-recovered: once per composition episode, the
 * composition's own recovery (from its last heal); the record carries the last-healed step's
 * faultId and kind, and says nothing about that step itself (chaos.jsonl files written before
 * these phases have none).
 */
export type ChaosPhase = 'planned' | 'landed' | 'not-landed' | 'healed' | 'heal-failed' | 'recovered' | 'not-recovered' | 'composition-recovered' | 'composition-not-recovered';

export interface ChaosRecord {
  t: string; // ISO time
  faultId: string;
  kind: FaultKind;
  phase: ChaosPhase;
  target?: string;
  point?: string;
  composition?: string;
  /** What shows the phase happened: e.g. { pidGone: 1234 }, { s3TimedOutMs: 2000 }, { tcpBlocked: true }. */
  evidence?: Record<string, unknown>;
  /** recovered: seconds from the fault's own heal to the next completed checkpoint; composition-recovered: from the composition's last heal. */
  recoveryS?: number;
  detail?: string;
}

/** One engine log line of a zombie's trail: when (the line's own stamp), on which host, the line (trimmed). */
export interface TrailLine {
  at: string;
  host: string;
  line: string;
}

/**
 * A zombie's trail (zombies.json): an engine process held stopped (process-pause, or a
 * protocol point with variant pause) while the job went on without it, then resumed; or an
 * engine host cut off from the coordinator (partition) while its process ran on, then
 * reconnected. From the engine's collected logs, read by the engine's plug
 * (Engine.zombieTrail): whether the engine declared it lost while it was stopped or cut off
 * and carried on without it (with which epoch or attempt), what the process tried (once
 * resumed; a cut-off one also while cut off: late sends, commits), and what stopped each
 * attempt (the fence: an epoch, a fencing token, a cancelled task).
 */
export interface ZombieTrail {
  faultId: string;
  kind: FaultKind;
  host: string;
  /** The process's PID when the chaos log names it (a pause does; a partition names only the host). */
  pid?: number;
  /** The protocol point it stopped at (variant pause), if any. */
  point?: string;
  /** When it was stopped (a partition: when the host was cut off). */
  stoppedAt: string;
  /** When it was resumed (a partition: when the host was reconnected). */
  resumedAt: string;
  /** The engine's line declaring the process lost while it was stopped or cut off; null if none did (the window did not outlast its lease or heartbeat). */
  declaredLost: TrailLine | null;
  /** The engine's line carrying on without it (a new epoch deployed, the job restarted); null if none. */
  replacedBy: TrailLine | null;
  /** What the process tried, from its own and the coordinator's lines after the resume (a partition: from the cut on). */
  attempts: TrailLine[];
  /** What stopped it: the lines that show the fence. */
  fences: TrailLine[];
  /** The fencing token before and after, as the engine names it (e.g. "epoch 23" → "epoch 25"), when the logs say. */
  token: { before: string | null; after: string | null };
  /**
   * fenced: declared lost, replaced, and every attempt met a fence; no-attempt: declared lost
   * but nothing it tried after the resume shows in the logs; not-lost: the engine never
   * declared it lost; unfenced: an attempt with no fence after it.
   */
  outcome: 'fenced' | 'no-attempt' | 'not-lost' | 'unfenced';
}

export interface Sample {
  t: string;
  elapsedS: number;
  objects: number;
  /** Distinct events committed (judged). */
  events: number;
  produced: number;
  /** produced - events */
  lag: number;
  counters: Counters;
  /** Transient errors this sample met and retried. */
  errors: number;
  lastError?: string;
  checkpoints?: number;
  /** Set when this sample could not complete within the oracle's deadline: a stuck oracle, which fails the run. */
  stuck?: boolean;
}

export const RUN_PHASES = ['gate', 'soak', 'drain', 'settle', 'recount'] as const;
export type RunPhase = (typeof RUN_PHASES)[number];

/** A phase's start or end (phases.jsonl). The plan's atS and the fault log count from the soak's start. */
export interface PhaseMark {
  t: string;
  phase: RunPhase;
  edge: 'start' | 'end';
  /** On the soak's end mark, when a mutant's soak ended before its planned length (campaigns/runner/soak-caught.ts). */
  endedEarly?: SoakEarlyEnd;
}

/**
 * A mutant's soak that ended before its planned length because the oracle had already caught
 * the mutant (campaigns/runner/soak-caught.ts): in phases.jsonl (the soak's end mark) and verdict.json.
 */
export interface SoakEarlyEnd {
  /** Seconds into the soak when it ended, and its planned length. */
  endedAtS: number;
  plannedS: number;
  /** Seconds into the soak when the catch was seen: no fault planned after it was started. */
  caughtAtS: number;
  /** The counter the mutant must raise, its value, and the time of the oracle's sample that showed it. */
  counter: CounterName;
  value: number;
  sampleT: string;
  /** The planned faults not started (recorded not-landed in chaos.jsonl). */
  notStarted: string[];
}

/** One rig process in a ResourceSample, read from /proc on its host. */
export interface ProcessResources {
  host: string;
  /** The host's role (worker, coordinator, broker, store). */
  role: string;
  /** The service name under <dataDir>/services (kafka, minio, clink-worker, ...). */
  service: string;
  pid: number;
  rssBytes: number;
  /** User + system CPU seconds since the process started. */
  cpuS: number;
  /** CPU use since the previous sample of the same process, in % of one core; absent on its first sample. */
  cpuPct?: number;
}

/** The size of a data directory and the free space of the filesystem it is on. */
export interface DiskUsage {
  host: string;
  what: 'store' | 'broker';
  bytes: number;
  /** The filesystem's mount point and its free space at the sample. */
  fs: string;
  fsFreeBytes: number;
}

/**
 * One resource sample (resources.jsonl). `machine` groups hosts that share a kernel (its
 * boot id): the local rig's namespaces are all one machine with the controller.
 */
export interface ResourceSample {
  t: string;
  /** Seconds the sample itself took. */
  durationS: number;
  /** Events produced and judged (oracle) when the sample was taken. */
  produced: number;
  judged: number;
  processes: ProcessResources[];
  controller: { rssBytes: number; heapUsedBytes: number; cpuS: number; cpuPct?: number; machine?: string };
  disks: (DiskUsage & { machine?: string })[];
  machines: { machine: string; hosts: string[]; memTotalBytes: number; memAvailableBytes: number }[];
  /**
   * The oracle's lag behind the bucket: objects the sample's own listing of the prefix found
   * beyond those the oracle has judged (listed − judged, at least 0), and the age of the
   * oracle's last completed sample.
   */
  oracleLag?: { listed: number; judged: number; unjudged: number; lastSampleAgeS?: number };
  /** What could not be read in this sample (host: message); never fatal. */
  errors: string[];
}

export interface LedgerEntry {
  key: string;
  etag: string;
  size: number;
  lines: number;
  firstSeen: string;
  /**
   * Absent on the line written when the object is first judged (that line is the judged
   * version). Set on a later line for the same key when the oracle saw it change, vanish,
   * or reappear after vanishing; `at` says when. Each such line is one mutation.
   */
  change?: 'changed' | 'vanished' | 'reappeared';
  at?: string;
}

export interface Recount {
  t: string;
  objects: number;
  lines: number;
  distinctEvents: number;
  bytes: number;
  counters: Counters;
  perPartition: { partition: number; produced: number; distinct: number; highestSeq: number }[];
  durationS: number;
  /** Objects under the prefix with a hidden name (oracle/store.ts isHiddenKey: a writer's staging files), left unjudged as a downstream consumer leaves them; absent when none. */
  hiddenObjects?: number;
}

/**
 * What the store answered for one object at the recount's held pass (recount-held.json): an
 * object it would not serve, one whose bytes differ from the version the oracle judged, or
 * one a fault held through the recount rotted (listed whatever the store answered).
 */
export interface HeldStoreAnswer {
  key: string;
  /** The held fault that rotted it (chaos.jsonl's faultId), when one did. */
  faultId?: string;
  /** Why it is listed: the store refused it; its bytes differ from the judged version (ETag, size or the fault's original MD5); a held fault rotted it. */
  why: ('unreadable' | 'differs' | 'held')[];
  /** The store's answer: bytes, or an error (for an unreadable object, to a reader that does not check the CRC32: recountError). */
  answered: 'bytes' | 'error';
  /** An error's name (the S3 error code, e.g. SlowDownRead), HTTP status and message. */
  name?: string;
  httpStatus?: number | null;
  message?: string;
  /** The bytes served: their size, the ETag, their MD5. */
  size?: number;
  etag?: string;
  md5?: string;
  /** The version the oracle judged (ledger.jsonl), and whether the served ETag and size are that version's. */
  judged?: { etag: string; size: number };
  matchesJudged?: boolean;
  /** For a held fault's object: whether the served bytes' MD5 is the one the fault read before it rotted the object. */
  matchesOriginal?: boolean;
  /**
   * For an unreadable object: the recount's own read's error (its S3 client checks the response's
   * CRC32, and may report a checksum mismatch where the store sent an error). The answer above is
   * then the store's to a reader that does not check it: its error code, or the bytes it serves.
   */
  recountError?: string;
}

/**
 * The recount's held pass (recount-held.json): a full read of the settled bucket with the
 * faults held through the recount still in force (chaos/controller.ts healHeld), recording
 * what the store answered instead of failing on an object it will not serve. Not the
 * verdict's recount: that one (recount.json) reads the bucket again once they are healed.
 */
export interface HeldRecount {
  t: string;
  /** The held faults in force during the pass, and the object each rotted. */
  held: { faultId: string; key: string }[];
  /** Objects the pass read or the store refused. */
  objects: number;
  answers: HeldStoreAnswer[];
  durationS: number;
}

export interface GateCondition {
  name: string;
  passed: boolean;
  evidence: string;
}

export interface GateResult {
  passed: boolean;
  conditions: GateCondition[];
}

/**
 * UNKNOWN (exit 2): nothing was shown wrong, but a fault could not be healed, so nothing is
 * certified either. GATE_FAILED: the gate failed, so no soak ran (verdict.json files of
 * schemaVersion 1 wrote it 'GATE FAILED'; readers take both through normalizeVerdictName).
 */
export type VerdictName = 'PASS' | 'FAIL' | 'GATE_FAILED' | 'ABORTED' | 'UNKNOWN';

/**
 * verdict.json's schema version: 2 added schemaVersion, campaign, seed, engine, revision and
 * the value GATE_FAILED; 3 added classifiedReasons (each reason with its failure class).
 */
export const VERDICT_SCHEMA_VERSION = 3;

/** What kind of failure a verdict reason is (lib/failure-class.ts): the engine shown wrong, not in time, or nothing shown. */
export const FAILURE_CLASSES = ['safety', 'liveness', 'coverage'] as const;
export type FailureClass = (typeof FAILURE_CLASSES)[number];

/** A verdict name as read from any verdict.json, old ones included ('GATE FAILED' becomes GATE_FAILED). */
export function normalizeVerdictName(name: string): VerdictName | string {
  return name === 'GATE FAILED' ? 'GATE_FAILED' : name;
}

/** What a verdict is about, for a reader that has verdict.json alone (schemaVersion 2). */
export interface VerdictSubject {
  campaign: string;
  seed: string;
  engine: { name: string; mutant: string };
  revision: { revision: string; dirty: boolean };
}

export interface Verdict extends Partial<VerdictSubject> {
  /** Absent in files of schema version 1. */
  schemaVersion?: number;
  runId: string;
  verdict: VerdictName;
  exitCode: number;
  reasons: string[];
  /** `reasons` again, each with its failure class (schemaVersion 3; absent before: readers class the text, lib/failure-class.ts). */
  classifiedReasons?: { reason: string; class: FailureClass }[];
  /** Things the report must say that do not fail the run (e.g. a fault that did not land). */
  warnings: string[];
  produced: number;
  committedDistinct: number;
  oracle: Counters;
  recount: Counters;
  recountAgrees: boolean;
  pendingUploads: number;
  drainConverged: boolean;
  /** Why the drain ended before its deadline, unconverged, when it did (campaigns/runner/drain-stall.ts). */
  drainStalled?: string;
  /** When a mutant's soak ended before its planned length, when and why (campaigns/runner/soak-caught.ts). */
  soakEndedEarly?: SoakEarlyEnd;
  uncoveredFaultPoints: string[];
  startedAt: string;
  endedAt: string;
  /**
   * Store-tamper faults (campaigns/runner/tamper.ts): the engine's reaction per tamper, the
   * mutations the harness's own tampering caused (reported apart; `oracle` and `recount`
   * above exclude them), and how many tampers the engine accepted as its own objects.
   */
  tamper?: {
    reactions: { faultId: string; variant: string; keys: string[]; reaction: string | null }[];
    harnessMutations: { oracle: number; recount: number };
    acceptedForeign: number;
  };
}

/** rehearsal.json: the shorter run at the same revision that a qualification run follows (reports/rehearsal.ts). */
export interface Rehearsal {
  runId: string;
  campaign: string;
  seed: string | null;
  verdict: string;
  revision: string | null;
  dirty: boolean | null;
  startedAt: string | null;
  endedAt: string | null;
  durationS: number | null;
  produced: number | null;
}

export interface Provenance {
  runId: string;
  campaign: string;
  seed: string;
  engine: {
    name: string;
    revision: string;
    dirty: boolean;
    sink: string;
    mutant?: string;
    /** Engine.faultPoints and Engine.mandatoryFaultPoints, so the report can say which mandatory points were covered. */
    faultPoints?: string[];
    mandatoryFaultPoints?: string[];
    /** Engine.version, Engine.sinkMechanism, Engine.commitCheck, Engine.commitCadence, Engine.restoreRecommit, Engine.profile, Engine.jobProfile, Engine.faultPointInjection and Engine.faultPointsNotApplicable, for the report. */
    version?: string;
    sinkMechanism?: string;
    commitCheck?: string;
    commitCadence?: string;
    restoreRecommit?: string;
    profile?: string;
    /** Engine.jobProfile: the name of the job profile deployed (the campaign's engine.profile, or the plug's default); absent for a plug with one job. */
    jobProfile?: string;
    faultPointInjection?: Record<string, string>;
    faultPointsNotApplicable?: Record<string, string>;
  };
  components: { name: string; version: string; sha256: string }[];
  rig: {
    kind: string;
    hosts: { name: string; address: string; roles: string[] }[];
    /** The operations host's logical cores and memory (on a local rig every host shares them); absent in runs recorded before it was. */
    operationsHost?: { cores: number; memoryMiB: number };
  };
  harness: { node: string; platform: string };
  /** The S3 store the run ran against (the campaign's `store`, as the rig ran it); absent in runs recorded before a campaign could choose. */
  /** `drives`: MinIO's drive layout (1, or 4 erasure-coded); absent for SeaweedFS and in runs recorded before layouts could be chosen (one drive). */
  store?: { name: string; version: string; drives?: number };
  /** Store settings the report's caveats cite, e.g. { MINIO_API_STALE_UPLOADS_EXPIRY: '72h' }. */
  storeSettings?: Record<string, string>;
  startedAt: string;
}
