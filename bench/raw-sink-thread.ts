/**
 * The raw consume → put baseline of bench/engine-sustained.ts, in its own worker thread.
 *
 * The benchmark's process also paces the producer and runs the watcher, which reads every
 * object and parses every line; on one event loop, at the rates the baseline is climbed to,
 * that loop was saturated and the climb turned producer-bound before the baseline itself fell
 * behind, so the baseline's maximum could not be determined. The baseline's consumers and
 * puts therefore run here, on another thread, doing exactly what they did in the event loop:
 *  - per partition a PartitionSource (engine/clink/source.ts) from offset 0, read
 *    continuously into a buffer of lines;
 *  - per partition one PutObject every interval, on one fixed grid t0 + slot × interval (all
 *    partitions at once), key `<prefix>p<p>/part-<slot>.jsonl`, body the lines read since the
 *    last put, each followed by '\n' (nothing put when nothing was read);
 *  - a partition's loop ends once finish() gave the target, the partition's reads reached
 *    its target, and nothing is left buffered after a put.
 * t0 is taken in the calling thread when the sink is created, so starting the thread does
 * not shift the grid. The S3 client is the thread's own, built by createS3Client (the one
 * Clink's sink uses: no flexible checksums) from plain settings in workerData.
 *
 * finish() resolves when every partition's loop ended; any failure in the thread (a put
 * that failed twice, a source that threw, the thread exiting) rejects it with its message.
 * abort() stops the loops, closes the sources and waits for that (bounded, then the thread
 * is terminated). After either, the thread is gone.
 *
 * This file is both sides: loaded as a worker (workerData.role), it runs the loops.
 */
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { PartitionSource } from '../engine/clink/source.ts';
import { createS3Client } from '../engine/clink/sink/s3-2pc-sink.ts';
import type { S3Settings } from '../engine/clink/sink/sink-api.ts';
import { retry } from '../lib/retry.ts';
import { sleep } from '../lib/sleep.ts';

const ROLE = 'clink-bench-raw-sink-thread';
/** How long abort() waits for the thread to close its sources before terminating it. */
const ABORT_TIMEOUT_MS = 10_000;
/**
 * A put's own timeout. createS3Client's default (5 s) is meant for the sink's parts, which it
 * retries; a baseline put carries a whole interval of a partition (tens of MB at the top
 * rates) and a slow one is the baseline falling behind, for the latency criteria to judge,
 * not an error that ends the benchmark. Only a store that stopped answering should end it.
 */
const PUT_TIMEOUT_MS = 120_000;
/** Attempts per put: what the rig kit's S3 client (maxAttempts 2) gave the in-loop baseline. */
const PUT_ATTEMPTS = 2;

export interface RawSinkOptions {
  bootstrap: string[];
  topic: string;
  partitions: number;
  /** The store's endpoint, region and keys (plain settings: a client cannot cross threads). */
  s3: S3Settings;
  bucket: string;
  /** Key prefix, ending in '/'. */
  prefix: string;
  /** The put interval (the benchmark's checkpoint interval). */
  intervalMs: number;
  /** The grid's origin (default: now, in the calling thread). */
  t0?: number;
}

/** What the thread gets: the options, its grid's origin fixed. */
type Init = Required<RawSinkOptions> & { role: typeof ROLE };

type Command = { t: 'finish'; target: number[] } | { t: 'abort' };
/** 'started': every source started; 'error': the first failure (the loops are then being stopped); 'ended': every loop ended and its source is closed. */
type Report = { t: 'started' } | { t: 'error'; message: string } | { t: 'ended' };

export class ThreadedRawSink {
  readonly #partitions: number;
  readonly #worker: Worker;
  /** Resolves when the thread reported every source started. */
  readonly #started: Promise<void>;
  /** Resolves when the thread reported every loop ended, or exited. */
  readonly #ended: Promise<void>;
  /** Rejects with the thread's first failure; never resolves. */
  readonly #failed: Promise<never>;
  #failure: Error | null = null;
  #fail: (err: Error) => void = () => undefined;
  #finishing = false;
  #aborted = false;
  #stopping: Promise<void> | null = null;
  #isEnded = false;

  constructor(o: RawSinkOptions) {
    if (!Number.isInteger(o.partitions) || o.partitions < 1) throw new Error(`ThreadedRawSink: ${o.partitions} partitions`);
    if (!(o.intervalMs > 0)) throw new Error(`ThreadedRawSink: interval ${o.intervalMs} ms`);
    this.#partitions = o.partitions;
    const init: Init = { ...o, role: ROLE, t0: o.t0 ?? Date.now() };
    this.#failed = new Promise<never>((_, reject) => {
      this.#fail = (err) => {
        if (this.#failure) return;
        this.#failure = err;
        reject(err);
      };
    });
    this.#failed.catch(() => undefined); // awaited by finish(); a failure with nobody waiting is not unhandled
    let started!: () => void;
    this.#started = new Promise<void>((r) => (started = r));
    let ended!: () => void;
    this.#ended = new Promise<void>((r) => (ended = r));
    this.#worker = new Worker(new URL(import.meta.url), { workerData: init });
    this.#worker.on('message', (m: Report) => {
      if (m.t === 'started') started();
      else if (m.t === 'error') this.#fail(new Error(`raw sink thread: ${m.message}`));
      else {
        this.#isEnded = true;
        ended();
      }
    });
    this.#worker.on('error', (err) => this.#fail(new Error(`raw sink thread failed: ${err.message}`)));
    this.#worker.on('exit', (code) => {
      // Exiting before it reported its loops ended, and not because we terminated it: a failure.
      if (!this.#isEnded && !this.#stopping) this.#fail(new Error(`raw sink thread exited (${code})`));
      ended();
    });
  }

  /** The thread's id while it runs; -1 once it stopped (Node's worker.threadId). */
  get threadId(): number {
    return this.#worker.threadId;
  }

  /**
   * Resolves once the thread loaded its modules and every partition's source started
   * reading: the benchmark starts its producer after it, as it did after the in-loop
   * baseline's sources, which started at once. Rejects when the thread failed or ended first.
   */
  started(): Promise<void> {
    const endedFirst = this.#ended.then(() => Promise.reject(this.#failure ?? new Error('raw sink thread ended before its sources started')));
    endedFirst.catch(() => undefined);
    return Promise.race([this.#started, this.#failed, endedFirst]);
  }

  /** Gives each partition's target (events to read before its loop may end) and waits for every loop to end. */
  async finish(target: number[]): Promise<void> {
    if (target.length !== this.#partitions || target.some((n) => !Number.isInteger(n) || n < 0)) throw new Error(`ThreadedRawSink.finish: target ${JSON.stringify(target)} is not one count ≥ 0 per partition (${this.#partitions})`);
    if (this.#finishing) throw new Error('ThreadedRawSink.finish: called twice');
    if (this.#aborted) throw new Error('raw sink aborted');
    if (this.#failure) throw this.#failure;
    this.#finishing = true;
    try {
      this.#worker.postMessage({ t: 'finish', target: [...target] } satisfies Command);
      await Promise.race([this.#ended, this.#failed]);
      if (this.#failure) throw this.#failure;
      if (this.#aborted) throw new Error('raw sink aborted before every partition was put');
    } finally {
      await this.#stop();
    }
  }

  /** Stops the loops and closes the sources (the thread is terminated after ABORT_TIMEOUT_MS at most), then ends the thread. */
  async abort(): Promise<void> {
    this.#aborted = true;
    await this.#stop();
  }

  /** Once: asks the thread to stop unless its loops ended, waits (bounded), terminates it. */
  #stop(): Promise<void> {
    this.#stopping ??= (async () => {
      if (!this.#isEnded) {
        this.#worker.postMessage({ t: 'abort' } satisfies Command);
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([this.#ended, new Promise<void>((r) => (timer = setTimeout(r, ABORT_TIMEOUT_MS)))]);
        clearTimeout(timer);
      }
      await this.#worker.terminate();
    })();
    return this.#stopping;
  }
}

/** The worker side: the loops of the old in-process baseline, reporting their end or their first failure. */
function runThread(init: Init): void {
  const port = parentPort!;
  const s3 = createS3Client(init.s3, { requestTimeoutMs: PUT_TIMEOUT_MS });
  // Aborted by abort() or by the first failure: the sleeps and the puts in flight end at once.
  const stopping = new AbortController();
  const signal = stopping.signal;
  let target: number[] | null = null;
  port.on('message', (c: Command) => {
    if (c.t === 'finish') target = c.target;
    else stopping.abort();
  });

  const put = async (key: string, body: string): Promise<void> => {
    try {
      await retry(() => s3.send(new PutObjectCommand({ Bucket: init.bucket, Key: key, Body: body }), { abortSignal: signal }), { attempts: PUT_ATTEMPTS, backoff: 100, signal, isRetryable: () => !signal.aborted });
    } catch (err) {
      // The SDK's message alone can be as bare as "UnknownError" (a 500 without a body).
      throw new Error(`PutObject ${key}: ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}`, { cause: err });
    }
  };

  let sourcesStarted = 0;
  const loop = async (p: number): Promise<void> => {
    const src = new PartitionSource({ bootstrap: init.bootstrap, topic: init.topic, partition: p, startOffset: 0, clientId: `bench-sustained-base-${p}` });
    await src.start();
    if (++sourcesStarted === init.partitions) port.postMessage({ t: 'started' } satisfies Report);
    let lines: string[] = [];
    let read = 0;
    let stop = false;
    const reader = (async () => {
      while (!stop) {
        await src.whenReadable();
        let r;
        while ((r = src.next())) {
          lines.push(r.value.toString('utf8'));
          read++;
        }
      }
    })();
    try {
      for (let slot = 1; !signal.aborted; slot++) {
        await sleep(init.t0 + slot * init.intervalMs - Date.now(), signal);
        if (signal.aborted) break;
        const body = lines;
        lines = [];
        if (body.length) await put(`${init.prefix}p${p}/part-${slot}.jsonl`, body.join('\n') + '\n');
        if (target && read >= target[p]! && !lines.length) break;
      }
    } finally {
      stop = true;
      await src.close();
      await reader;
    }
  };

  const loops = Array.from({ length: init.partitions }, (_, p) =>
    loop(p).catch((err: unknown) => {
      // After an abort, an error is the abort's doing (a put cut short); otherwise the first
      // failure is reported and stops the other partitions too: the benchmark has no result.
      if (signal.aborted) return;
      port.postMessage({ t: 'error', message: err instanceof Error ? err.message : String(err) } satisfies Report);
      stopping.abort();
    }),
  );
  void Promise.all(loops).then(() => {
    s3.destroy();
    port.postMessage({ t: 'ended' } satisfies Report);
  });
}

if (!isMainThread && (workerData as Partial<Init> | null)?.role === ROLE) runThread(workerData as Init);
