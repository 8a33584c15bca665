/**
 * One subtask on a worker: a partition source feeding one sink, driven by the
 * coordinator's barriers and completion notifications.
 *
 * The subtask's loop hands records to sink.write() and, between records, runs the
 * operations the coordinator sent, in order:
 *  - barrier(C): snapshot the next offset, sink.prepare(C, E) → handles, send the snapshot.
 *    The snapshot carries every handle prepared and not yet committed (a barrier the
 *    coordinator abandoned leaves its handles pending, so the next checkpoint covers them:
 *    the offsets always match the records the handles hold).
 *  - complete(C, handles): sink.commit(C, E, handles) with the handles from the durable
 *    record; they stop being pending once the commit succeeded.
 * A SinkIntegrityError (from commit or recover) is never retried nor skipped: the subtask
 * ends and reports it to the coordinator as an integrity error, which stops the job.
 * Before reading, a restored subtask calls sink.recover(restoredHandles, E), retried until
 * it succeeds (the store may be down).
 * After each commit it logs where its time went since it started reading (subtask-timing.ts:
 * idle, prepare, commit, the source's fetches); the counters change nothing it does.
 */
import type { Sink, SinkFactory, UploadHandle } from './sink/sink-api.ts';
import type { TaskSpec, WorkerMessage } from './protocol.ts';
import { retry } from '../../lib/retry.ts';
import { monotonicMs } from './mono.ts';
import { PartitionSource, type PartitionSourceOptions, type SourceRecord } from './source.ts';
import { seamsFor, type ClinkMutant, type ProtocolSeams } from './mutants/index.ts';
import { SubtaskTiming, type FetchTiming } from './subtask-timing.ts';

/** What a subtask needs from its source (PartitionSource; a fake in unit tests). */
export interface SourceLike {
  resolvedStart: number;
  start(): Promise<void>;
  next(): SourceRecord | null;
  whenReadable(): Promise<void>;
  close(): Promise<void>;
  /** Its fetch counters, when it keeps them (PartitionSource does). */
  fetchTiming?(): FetchTiming;
}

export interface SubtaskEnv {
  epoch: number;
  spec: TaskSpec;
  sinkFactory: SinkFactory;
  makeSinkContext(subtask: number): Parameters<SinkFactory>[0];
  kafka: { bootstrap: string[]; topic: string };
  /** The job's mutant (its seams override protocol steps here; engine/clink/mutants/), absent for the correct engine. */
  mutant?: ClinkMutant;
  checkpointIntervalMs: number;
  send(msg: WorkerMessage): void;
  log(line: string): void;
  /** Defaults to a PartitionSource (Kafka). */
  makeSource?: (opts: PartitionSourceOptions) => SourceLike;
}

type Op = { kind: 'barrier'; checkpointId: number } | { kind: 'complete'; checkpointId: number; handles: UploadHandle[] };

/** Checkpoint ids a no-fencing worker invents for its own commits: far above the coordinator's. */
const AUTONOMOUS_ID_BASE = 1_000_000_000;

export class Subtask {
  readonly env: SubtaskEnv;
  readonly subtask: number;
  readonly epoch: number;
  #sink: Sink | null = null;
  #source: SourceLike | null = null;
  #ops: Op[] = [];
  #wake: (() => void) | null = null;
  #cancelled = false;
  #nextOffset: number | null = null;
  #pending: UploadHandle[] = [];
  #loop: Promise<void> | null = null;
  /** Set by a worker seam that replaces fencing (mutant no-fencing): commit on the subtask's own timer. */
  autonomous = false;
  #autonomousSeq = 0;
  #lastAutonomous = monotonicMs();
  #flushOnOwn = false;
  records = 0;
  /** Where the time went since reading started (logged after each commit). */
  #timing: SubtaskTiming | null = null;
  /** The protocol steps the job's mutant overrides (none for the correct subtask). */
  readonly #seams: ProtocolSeams;

  constructor(env: SubtaskEnv) {
    this.env = env;
    this.#seams = seamsFor(env.mutant);
    this.subtask = env.spec.subtask;
    this.epoch = env.epoch;
  }

  get cancelled(): boolean {
    return this.#cancelled;
  }

  start(): void {
    this.#loop = this.#run().catch((err: Error) => {
      if (this.#cancelled) return;
      if (isIntegrityError(err)) {
        // Never retried, never skipped: the coordinator stops the job and says why.
        this.env.log(`clink worker: subtask ${this.subtask} epoch ${this.epoch} INTEGRITY ERROR, reported to the coordinator: ${err.message}`);
        this.env.send({ type: 'error', epoch: this.epoch, subtask: this.subtask, message: String(err.message), fatal: true, integrity: true });
        return;
      }
      this.env.log(`clink worker: subtask ${this.subtask} epoch ${this.epoch} failed: ${err.stack ?? err.message}`);
      this.env.send({ type: 'error', epoch: this.epoch, subtask: this.subtask, message: String(err.message), fatal: true });
    });
  }

  barrier(checkpointId: number): void {
    this.#ops.push({ kind: 'barrier', checkpointId });
    this.#signal();
  }

  complete(checkpointId: number, handles: UploadHandle[]): void {
    this.#ops.push({ kind: 'complete', checkpointId, handles });
    this.#signal();
  }

  /** For a worker seam (mutant stall-flush): prepare and commit the buffer once, on the subtask's own authority. */
  flushOnOwn(): void {
    this.#flushOnOwn = true;
    this.#signal();
  }

  /** Stops reading, drops the buffer (sink.close) and the source. */
  async cancel(): Promise<void> {
    if (this.#cancelled) return;
    this.#cancelled = true;
    this.#signal();
    const closing = [this.#source?.close(), this.#sink?.close()];
    await Promise.allSettled(closing);
    await Promise.race([this.#loop, sleep(5000)]);
  }

  #signal(): void {
    const w = this.#wake;
    this.#wake = null;
    w?.();
  }

  async #run(): Promise<void> {
    const { spec, epoch } = this.env;
    const sink = this.env.sinkFactory(this.env.makeSinkContext(spec.subtask));
    this.#sink = sink;
    await sink.open();
    if (this.#cancelled) return void (await sink.close());
    try {
      await retry(() => sink.recover(spec.restoredHandles, epoch), {
        backoff: (attempt) => Math.min(5000, 250 * attempt),
        // An integrity error is not retried: it ends the subtask (start() reports it).
        isRetryable: (err) => !this.#cancelled && !isIntegrityError(err),
        onRetry: (err, attempt) => {
          this.env.log(`clink worker: subtask ${spec.subtask} recover attempt ${attempt} failed: ${(err as Error).message}`);
          this.env.send({ type: 'error', epoch, subtask: spec.subtask, message: `recover: ${(err as Error).message}` });
        },
      });
    } catch (err) {
      if (this.#cancelled) return;
      throw err;
    }
    if (this.#cancelled) return;
    let start = spec.startOffset;
    // Seam: where a restored source starts (correct: exactly the checkpointed offset).
    if (start !== null && this.#seams.startOffset) start = this.#seams.startOffset(start);
    const makeSource = this.env.makeSource ?? ((o: PartitionSourceOptions) => new PartitionSource(o));
    const source = makeSource({
      bootstrap: this.env.kafka.bootstrap,
      topic: this.env.kafka.topic,
      partition: spec.partition,
      startOffset: start,
      clientId: `clink-s${spec.subtask}-e${epoch}-${process.pid}`,
      onError: (err) => this.env.log(`clink worker: subtask ${spec.subtask} fetch error (retrying): ${err.message}`),
    });
    this.#source = source;
    if (this.#cancelled) return void (await source.close());
    await source.start();
    this.#nextOffset = source.resolvedStart;
    this.env.log(`clink worker: subtask ${spec.subtask} epoch ${epoch} reading partition ${spec.partition} from offset ${source.resolvedStart} (restored ${spec.restoredHandles.length} handles)`);
    this.env.send({ type: 'ready', epoch, subtask: spec.subtask });
    const timing = new SubtaskTiming();
    this.#timing = timing;

    while (!this.#cancelled) {
      const op = this.#ops.shift();
      if (op) {
        await this.#runOp(sink, op);
        continue;
      }
      if ((this.autonomous && monotonicMs() - this.#lastAutonomous >= this.env.checkpointIntervalMs) || this.#flushOnOwn) {
        this.#flushOnOwn = false;
        await this.#autonomousCommit(sink);
        continue;
      }
      let n = 0;
      let r;
      while (n < 2000 && this.#ops.length === 0 && (r = source.next())) {
        sink.write(r.value.toString('utf8'));
        this.#nextOffset = r.offset + 1;
        n++;
      }
      this.records += n;
      if (n === 0) {
        await timing.idle(Promise.race([source.whenReadable(), new Promise<void>((res) => (this.#wake = res)), sleep(this.autonomous ? 500 : 2000)]));
      } else if (n >= 2000) {
        await new Promise((res) => setImmediate(res));
      }
    }
  }

  async #runOp(sink: Sink, op: Op): Promise<void> {
    const epoch = this.epoch;
    if (op.kind === 'barrier') {
      const offset = this.#nextOffset;
      const handles = this.#timing ? await this.#timing.timed('prepare', () => sink.prepare(op.checkpointId, epoch)) : await sink.prepare(op.checkpointId, epoch);
      this.#pending.push(...handles);
      if (this.#cancelled) return;
      this.env.send({ type: 'snapshot', checkpointId: op.checkpointId, epoch, subtask: this.subtask, offset, handles: [...this.#pending] });
      return;
    }
    try {
      if (this.#timing) await this.#timing.timed('commit', () => sink.commit(op.checkpointId, epoch, op.handles));
      else await sink.commit(op.checkpointId, epoch, op.handles);
      const done = new Set(op.handles.map((h) => `${h.key}\n${h.uploadId}`));
      this.#pending = this.#pending.filter((h) => !done.has(`${h.key}\n${h.uploadId}`));
      if (this.#timing) this.env.log(this.#timing.line(this.subtask, epoch, this.records, this.#source?.fetchTiming?.() ?? {}));
    } catch (err) {
      if (this.#cancelled) return;
      // An integrity error is never retried nor skipped: it ends the subtask (start() reports it).
      if (isIntegrityError(err)) throw err;
      // Still pending: the next snapshot carries them again, so a later completion commits them.
      this.env.log(`clink worker: subtask ${this.subtask} commit of checkpoint ${op.checkpointId} failed: ${(err as Error).message}`);
      this.env.send({ type: 'error', epoch, subtask: this.subtask, message: `commit ${op.checkpointId}: ${(err as Error).message}` });
    }
  }

  /**
   * Only under a worker seam (mutants no-fencing, stall-flush): the subtask prepares and
   * commits on its own authority, without the coordinator. The correct engine never gets here.
   */
  async #autonomousCommit(sink: Sink): Promise<void> {
    this.#lastAutonomous = monotonicMs();
    const id = AUTONOMOUS_ID_BASE + this.epoch * 10_000 + ++this.#autonomousSeq;
    const handles = await sink.prepare(id, this.epoch);
    const all = [...this.#pending, ...handles];
    this.env.log(`clink worker: MUTANT ${this.env.mutant}: subtask ${this.subtask} commits ${all.length} handles without the coordinator (id ${id})`);
    await sink.commit(id, this.epoch, all);
    this.#pending = [];
  }
}

/** A SinkIntegrityError (by name: the subtask does not depend on one sink family). */
export function isIntegrityError(err: unknown): boolean {
  return !!err && typeof err === 'object' && (err as { name?: unknown }).name === 'SinkIntegrityError';
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
