/**
 * A line producer whose Kafka work runs in its own worker thread (bench/engine-sustained.ts
 * --producer-threads): the benchmark's process also paces the producer and watches the
 * bucket on one event loop (the baseline's consumers and puts have their own thread,
 * bench/raw-sink-thread.ts); building each event's JSON and encoding and sending the
 * batches then moves to another thread.
 *
 * The calling thread numbers the events, exactly as test/helpers/rig-kit.ts LineProducer
 * does (round-robin over the partitions it owns, `seq` advanced before produce() returns, so
 * the caller can log the send times before the acknowledgement); the worker thread builds
 * the same lines, {"p","seq","pad"} with the same padding, sends them with the same
 * idempotent producer settings (acks=all), and answers each send once Kafka acknowledged it
 * or with its error. One send in flight per producer at a time is the caller's affair (the
 * pacing loop awaits each).
 *
 * This file is both sides: loaded as a worker (workerData.role), it runs the sending loop.
 */
import os from 'node:os';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { Producer, stringSerializers } from '@platformatic/kafka';
import { numberSend, type SendRange } from './producer-pool.ts';

const ROLE = 'clink-bench-producer-thread';

interface Init {
  role: typeof ROLE;
  bootstrap: string[];
  topic: string;
  padBytes: number;
  /** Kafka send retries (LineProducer's 20; fewer in unit tests). */
  retries: number;
  /** The thread's own nice value, when given (see ThreadedProducer's `nice`). */
  nice?: number;
}

type Request = { id: number; ranges: SendRange[] } | { id: number; close: true };
type Reply = { id: number; error?: string };

export class ThreadedProducer {
  readonly topic: string;
  readonly partitions: number;
  readonly seq: number[];
  readonly owned: readonly number[];
  readonly #worker: Worker;
  readonly #waiting = new Map<number, { resolve: () => void; reject: (err: Error) => void }>();
  #nextId = 0;
  #failed: Error | null = null;

  /**
   * opts.nice: the sending thread's own nice value (-20..19; below 0 needs root or
   * CAP_SYS_NICE). On Linux a nice value belongs to a thread, and the thread sets its own
   * (setpriority of "0" is the calling thread), so the calling thread and every other thread
   * of the process keep theirs: the load generator can be given the CPU first, without the
   * watcher or the baseline's thread in the same process getting it too.
   */
  constructor(bootstrap: string[], topic: string, partitions: number, padBytes = 60, owned?: readonly number[], opts: { retries?: number; nice?: number } = {}) {
    this.topic = topic;
    this.partitions = partitions;
    this.seq = new Array(partitions).fill(0);
    this.owned = owned ?? Array.from({ length: partitions }, (_, p) => p);
    if (!this.owned.length || this.owned.some((p) => !Number.isInteger(p) || p < 0 || p >= partitions)) throw new Error(`ThreadedProducer: owned partitions ${JSON.stringify(owned)} not within 0..${partitions - 1}`);
    if (opts.nice !== undefined && !(Number.isInteger(opts.nice) && opts.nice >= -20 && opts.nice <= 19)) throw new Error(`ThreadedProducer: nice ${opts.nice} is not an integer in -20..19`);
    const init: Init = { role: ROLE, bootstrap, topic, padBytes, retries: opts.retries ?? 20, nice: opts.nice };
    this.#worker = new Worker(new URL(import.meta.url), { workerData: init });
    this.#worker.on('message', (r: Reply) => {
      const w = this.#waiting.get(r.id);
      if (!w) return;
      this.#waiting.delete(r.id);
      if (r.error !== undefined) w.reject(new Error(`producer thread: ${r.error}`));
      else w.resolve();
    });
    const fail = (err: Error) => {
      this.#failed = err;
      for (const w of this.#waiting.values()) w.reject(err);
      this.#waiting.clear();
    };
    this.#worker.on('error', (err) => fail(new Error(`producer thread failed: ${err.message}`)));
    this.#worker.on('exit', (code) => fail(new Error(`producer thread exited (${code})`)));
  }

  get produced(): number {
    return this.seq.reduce((a, b) => a + b, 0);
  }

  /** Numbers `count` events now (round-robin over its partitions) and sends them in one batch from the thread. */
  produce(count: number, batch = count): Promise<void> {
    if (batch < count) return Promise.reject(new Error('ThreadedProducer sends one batch per call'));
    if (this.#failed) return Promise.reject(this.#failed);
    const ranges = numberSend(this.seq, this.owned, count);
    return this.#request({ id: ++this.#nextId, ranges });
  }

  #request(req: Request): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#waiting.set(req.id, { resolve, reject });
      this.#worker.postMessage(req);
    });
  }

  /** Closes the thread's Kafka producer, then the thread. */
  async close(): Promise<void> {
    try {
      if (!this.#failed) await Promise.race([this.#request({ id: ++this.#nextId, close: true }), new Promise((r) => setTimeout(r, 10_000))]);
    } finally {
      await this.#worker.terminate();
    }
  }
}

/** The worker side: one idempotent producer, a batch a request, an answer per batch. */
function runThread(init: Init): void {
  // Before anything else of the thread: its own nice value (a failure, e.g. no permission, ends the thread loudly).
  if (init.nice !== undefined) os.setPriority(0, init.nice);
  const producer = new Producer({ clientId: 'clink-testkit-producer', bootstrapBrokers: init.bootstrap, serializers: stringSerializers, idempotent: true, acks: -1, retries: init.retries, retryDelay: 500 });
  const pad = 'x'.repeat(init.padBytes);
  const port = parentPort!;
  port.on('message', async (req: Request) => {
    try {
      if ('close' in req) await producer.close();
      else {
        const messages: { topic: string; partition: number; value: string }[] = [];
        for (const [p, first, n] of req.ranges) for (let k = 0; k < n; k++) messages.push({ topic: init.topic, partition: p, value: JSON.stringify({ p, seq: first + k, pad }) });
        await producer.send({ messages });
      }
      port.postMessage({ id: req.id } satisfies Reply);
    } catch (err) {
      port.postMessage({ id: req.id, error: (err as Error).message ?? String(err) } satisfies Reply);
    }
  });
}

if (!isMainThread && (workerData as Partial<Init> | null)?.role === ROLE) runThread(workerData as Init);
