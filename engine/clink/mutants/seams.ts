/**
 * The seam between Clink's protocol and its mutants: one optional hook per protocol step a
 * mutant overrides. The protocol files (sink, worker, subtask, coordinator, assign) call the
 * hook at its step and do the correct thing when it is absent, which it always is for the
 * correct engine (`seamsFor(undefined)` is `{}`). Each mutant, in its own file beside this
 * one, fills in the hooks of the steps it breaks; index.ts maps every mutant name to its
 * seams.
 */
import type { UploadHandle } from '../sink/sink-api.ts';
import type { CompletedCheckpoint } from '../assign.ts';

/** What a sink hook may use: the sink's identity, its log, its store access and its commit. */
export interface SinkSeamContext {
  readonly subtask: number;
  readonly prefix: string;
  readonly bucket: string;
  log(line: string): void;
  /** One request to the store (no retry; close() aborts it). */
  send(command: unknown): Promise<any>;
  /** One request, retried as the sink retries a commit's requests (transient failures, the commit deadline); `what` names it in the retry log. */
  sendRetried(what: string, makeCommand: () => unknown): Promise<any>;
  /** The sink's own idempotent, verified completion of a handle's upload. */
  complete(h: UploadHandle): Promise<void>;
}

/** What a worker hook may use: the worker's identity, its log, its tasks and its lease. */
export interface WorkerSeamContext {
  readonly workerId: string;
  log(line: string): void;
  /** The tasks of the current epoch. */
  readonly tasks: readonly { autonomous: boolean; flushOnOwn(): void }[];
  /** Takes the coordinator as heard now: the lease as still held. */
  keepLease(): void;
}

export interface ProtocolSeams {
  // --- The sink (engine/clink/sink/s3-2pc-sink.ts) ---
  /** The key of a checkpoint's object (correct: `clinkObjectKey`, unique per subtask, epoch and checkpoint). */
  objectKey?(sink: SinkSeamContext, place: { subtask: number; epoch: number; checkpointId: number }): string;
  /** prepare() with an empty buffer stages an upload too (correct: no handle). */
  stageEmptyBuffer?: boolean;
  /** Right after prepare() staged a handle (correct: nothing; the commit waits for the checkpoint). */
  afterStage?(sink: SinkSeamContext, h: UploadHandle): Promise<void>;
  /** Replaces the verification of a NoSuchUpload answer to a completion (correct: the object must be ours, by HEAD). */
  onNoSuchUpload?(sink: SinkSeamContext, h: UploadHandle): Promise<void>;
  /** Whether a foreign object at the key of a re-completed upload is accepted (correct: never, an integrity error). */
  acceptForeignObject?(sink: SinkSeamContext, h: UploadHandle, problems: readonly string[]): boolean;
  /** Replaces retrying a completion whose outcome is unknown; the handle then counts as done (correct: retry until the deadline). */
  onUnknownOutcome?(sink: SinkSeamContext, h: UploadHandle, error: string): Promise<void>;
  /** The restored handles recover() completes (correct: all of them). */
  restoredHandles?(sink: SinkSeamContext, handles: UploadHandle[]): UploadHandle[];

  // --- The worker (engine/clink/worker.ts) ---
  /** The worker's timers ran late by more than the fencing timeout (correct: nothing; silence is judged as usual). */
  onStall?(worker: WorkerSeamContext, stalledMs: number): void;
  /** Replaces self-fencing; the tasks are not stopped (correct: stop every task of the epoch). */
  fence?(worker: WorkerSeamContext, silentMs: number): void;

  // --- The subtask (engine/clink/subtask.ts) ---
  /** The offset a restored source starts from, given the checkpointed one (correct: exactly it). */
  startOffset?(checkpointed: number): number;

  // --- The coordinator (engine/clink/coordinator.ts, engine/clink/assign.ts) ---
  /**
   * The checkpoint log (correct: a failed append is cut back and stops the coordinator; every
   * record's checksum is verified when the log is read, `uncheckedRecords` absent or false).
   */
  checkpointLog?: { keepTornAppends: boolean; stopOnFailedAppend: boolean; uncheckedRecords?: boolean };
  /** Whether a completed checkpoint replaces the current last one (correct: always; the log's order says which is newer). */
  supersedes?(rec: CompletedCheckpoint, current: CompletedCheckpoint): boolean;
}

/** Makes one mutant's seams; called once per protocol object (a sink, a worker, ...), so a hook's state is that object's. */
export type SeamsFactory = () => ProtocolSeams;
