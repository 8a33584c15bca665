/**
 * A pool of judge workers (oracle/judge-worker.ts), so that judging every line — the
 * recount's CPU cost — runs beside the thread that fetches the objects instead of on it.
 * Each body is handed over without a copy when it owns its memory (it is detached then:
 * the caller must not use it afterwards), copied once otherwise. The judgement comes back
 * as oracle/tally.ts BodyJudgement; the caller marks it in its own tally (addJudged), so the
 * definitions and the memory of the tally are the same as when judging in-thread.
 *
 * The bodies go to a worker in batches: those handed over in the same turn of the event
 * loop (up to JUDGE_BATCH_BYTES) travel in one message, and their judgements come back in
 * one. A message and its reply each wake a thread; one per object was a per-object cost of
 * the recount (about 0.1-0.35 ms an object on the development box,
 * docs/qualification/oracle-flat.md), paid 1,600 times at 64 partitions and 100 at 4.
 */
import os from 'node:os';
import { Worker } from 'node:worker_threads';
import type { GeneratorSpec } from './generator.ts';
import type { BodyJudgement } from './tally.ts';
import type { JudgeBatch, JudgeReply, JudgeRequest } from './judge-worker.ts';

/** Bytes of bodies that, once waiting for one worker, go at once instead of at the end of the turn. */
export const JUDGE_BATCH_BYTES = 4 * 1024 * 1024;

interface Pending {
  resolve: (j: BodyJudgement) => void;
  reject: (err: Error) => void;
}

interface Slot {
  worker: Worker;
  pending: Map<number, Pending>;
  /** Bodies not sent yet (the batch being gathered), their transfer list and bytes. */
  outbox: JudgeRequest[];
  transfer: ArrayBuffer[];
  outboxBytes: number;
  flushScheduled: boolean;
}

/** Default worker count: one per core beyond the first, at most 4 (at least 1). */
export function defaultJudgeWorkers(): number {
  return Math.max(1, Math.min(4, os.availableParallelism() - 1));
}

export class JudgePool {
  readonly #slots: Slot[] = [];
  #nextId = 1;
  #messages = 0;
  #failed: Error | undefined;
  #closed = false;

  constructor(spec: GeneratorSpec, workers: number) {
    const data: GeneratorSpec = { seed: spec.seed, partitions: spec.partitions, keys: spec.keys };
    for (let i = 0; i < Math.max(1, workers); i++) {
      const worker = new Worker(new URL('./judge-worker.ts', import.meta.url), { workerData: data });
      const slot: Slot = { worker, pending: new Map(), outbox: [], transfer: [], outboxBytes: 0, flushScheduled: false };
      worker.on('message', (replies: JudgeReply[]) => {
        for (const m of replies) {
          const p = slot.pending.get(m.id);
          if (!p) continue;
          slot.pending.delete(m.id);
          if (m.judgement) p.resolve(m.judgement);
          else p.reject(new Error(`judge worker: ${m.error}`));
        }
      });
      const fail = (err: Error) => {
        this.#failed ??= err;
        for (const p of slot.pending.values()) p.reject(err);
        slot.pending.clear();
      };
      worker.on('error', fail);
      worker.on('exit', (code) => {
        if (!this.#closed) fail(new Error(`judge worker exited (code ${code})`));
      });
      this.#slots.push(slot);
    }
  }

  /** Messages sent to the workers so far (each a batch of bodies). */
  get messagesSent(): number {
    return this.#messages;
  }

  /** Judges one body in a worker. The body is detached when it owns its whole ArrayBuffer. */
  judge(key: string, body: Buffer): Promise<BodyJudgement> {
    if (this.#failed) return Promise.reject(this.#failed);
    let slot = this.#slots[0]!;
    for (const s of this.#slots) if (s.pending.size < slot.pending.size) slot = s;
    let buf = body.buffer as ArrayBuffer;
    let offset = body.byteOffset;
    // A slice of a larger (or pooled, or shared) buffer is copied; a whole one is moved.
    if (offset !== 0 || body.length !== buf.byteLength || !(buf instanceof ArrayBuffer)) {
      const copy = new Uint8Array(body.length);
      copy.set(body);
      buf = copy.buffer;
      offset = 0;
    }
    const id = this.#nextId++;
    const judged = new Promise<BodyJudgement>((resolve, reject) => slot.pending.set(id, { resolve, reject }));
    slot.outbox.push({ id, key, buf, offset, length: body.length });
    slot.transfer.push(buf);
    slot.outboxBytes += body.length;
    if (slot.outboxBytes >= JUDGE_BATCH_BYTES) this.#flush(slot);
    else if (!slot.flushScheduled) {
      slot.flushScheduled = true;
      setImmediate(() => this.#flush(slot));
    }
    return judged;
  }

  /** Sends the slot's gathered bodies to its worker in one message (transferred, not copied). */
  #flush(slot: Slot): void {
    slot.flushScheduled = false;
    if (slot.outbox.length === 0 || this.#closed) return;
    const batch: JudgeBatch = slot.outbox;
    const transfer = slot.transfer;
    slot.outbox = [];
    slot.transfer = [];
    slot.outboxBytes = 0;
    this.#messages++;
    slot.worker.postMessage(batch, transfer);
  }

  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all(this.#slots.map((s) => s.worker.terminate()));
  }
}
