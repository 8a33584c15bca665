/**
 * The source: one Kafka partition read from an exact offset, with no consumer group.
 *
 * @platformatic/kafka's Consumer exposes the raw Fetch API (`consumer.fetch`): we look up
 * the partition's leader and the topic id in the cluster metadata and fetch from an
 * explicit offset; nothing joins a group, nothing is committed to Kafka, and no
 * rebalancing can move the partition. The subtask owns its offset: it is restored from
 * the checkpoint and advanced record by record.
 *
 * A prefetch loop keeps a small queue of records ahead of the subtask; fetch errors
 * (a broker restart, a leader move) are retried with a refreshed metadata view, forever,
 * until the source is closed. It counts its fetches, their wall time and the time it waited
 * with a full queue (fetchTiming, for the subtask's timing line; subtask-timing.ts).
 */
import { Consumer } from '@platformatic/kafka';
import { retry } from '../../lib/retry.ts';
import { monotonicMs } from './mono.ts';
import type { FetchTiming } from './subtask-timing.ts';

export interface SourceRecord {
  offset: number;
  value: Buffer;
}

export interface PartitionSourceOptions {
  bootstrap: string[];
  topic: string;
  partition: number;
  /** First offset to read; null = the partition's log start. */
  startOffset: number | null;
  clientId: string;
  /** Records buffered ahead of the subtask before the prefetcher waits. */
  maxQueued?: number;
  maxWaitMs?: number;
  onError?: (err: Error) => void;
}

const EARLIEST = -2n;
const RETRY_MS = 500;

export class PartitionSource {
  readonly opts: PartitionSourceOptions;
  #consumer: Consumer<Buffer, Buffer, Buffer, Buffer>;
  #queue: SourceRecord[] = [];
  #head = 0;
  #nextFetch = -1n;
  #closed = false;
  #wake: (() => void) | null = null;
  #roomWake: (() => void) | null = null;
  #loop: Promise<void> | null = null;
  /** Number of fetch errors seen (for diagnostics). */
  fetchErrors = 0;
  readonly #timing: FetchTiming = { fetches: 0, fetchMs: 0, queueFullMs: 0 };
  /** The offset reading started at, once start() resolved it. */
  resolvedStart = -1;

  constructor(opts: PartitionSourceOptions) {
    this.opts = opts;
    this.#consumer = new Consumer({
      clientId: opts.clientId,
      groupId: `${opts.clientId}-nogroup`,
      bootstrapBrokers: opts.bootstrap,
      retries: 2,
      retryDelay: 250,
      timeout: 10_000,
      metadataMaxAge: 30_000,
    });
    this.#consumer.topics.track(opts.topic);
  }

  /** Resolves the start offset (log start when null) and starts prefetching. */
  async start(): Promise<void> {
    let start: bigint;
    if (this.opts.startOffset === null) start = await this.#retry(() => this.#earliest());
    else start = BigInt(this.opts.startOffset);
    this.#nextFetch = start;
    this.resolvedStart = Number(start);
    this.#loop = this.#run();
  }

  /** Returns the next buffered record, or null when none is buffered right now. */
  next(): SourceRecord | null {
    if (this.#head >= this.#queue.length) return null;
    const r = this.#queue[this.#head++]!;
    if (this.#head > 4096 && this.#head * 2 > this.#queue.length) {
      this.#queue = this.#queue.slice(this.#head);
      this.#head = 0;
    }
    if (this.#roomWake && this.#queue.length - this.#head < (this.opts.maxQueued ?? 20_000) / 2) {
      const w = this.#roomWake;
      this.#roomWake = null;
      w();
    }
    return r;
  }

  /** Fetch requests answered, their wall time, and the time the prefetcher waited with a full queue. */
  fetchTiming(): FetchTiming {
    return { ...this.#timing };
  }

  /** A promise that resolves when a record is buffered (or the source closes). */
  whenReadable(): Promise<void> {
    if (this.#head < this.#queue.length || this.#closed) return Promise.resolve();
    return new Promise((resolve) => {
      const prev = this.#wake;
      this.#wake = () => {
        prev?.();
        resolve();
      };
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#signal();
    this.#roomWake?.();
    try {
      await this.#consumer.close(true);
    } catch {
      /* closing anyway */
    }
    await this.#loop?.catch(() => undefined);
  }

  #signal(): void {
    const w = this.#wake;
    this.#wake = null;
    w?.();
  }

  async #earliest(): Promise<bigint> {
    const offsets = await this.#consumer.listOffsets({
      topics: [this.opts.topic],
      partitions: { [this.opts.topic]: [this.opts.partition] },
      timestamp: EARLIEST,
    });
    const arr = offsets.get(this.opts.topic);
    const v = arr?.[this.opts.partition];
    if (v === undefined) throw new Error(`no earliest offset for ${this.opts.topic}/${this.opts.partition}`);
    return v;
  }

  /** fn until it succeeds, RETRY_MS apart; once closed, its error is thrown. */
  #retry<T>(fn: () => Promise<T>): Promise<T> {
    return retry(fn, {
      backoff: RETRY_MS,
      isRetryable: () => !this.#closed,
      onRetry: (err) => {
        this.fetchErrors++;
        this.opts.onError?.(err as Error);
      },
    });
  }

  async #run(): Promise<void> {
    const { topic, partition } = this.opts;
    const maxQueued = this.opts.maxQueued ?? 20_000;
    while (!this.#closed) {
      if (this.#queue.length - this.#head >= maxQueued) {
        const t0 = monotonicMs();
        await new Promise<void>((r) => (this.#roomWake = r));
        this.#timing.queueFullMs += monotonicMs() - t0;
        continue;
      }
      try {
        const md = await this.#consumer.metadata({ topics: [topic] });
        const t = md.topics.get(topic);
        const pm = t?.partitions[partition];
        if (!t || !pm) throw new Error(`no metadata for ${topic}/${partition}`);
        const fetchOffset = this.#nextFetch;
        const t0 = monotonicMs();
        const res = await this.#consumer.fetch({
          node: pm.leader,
          maxWaitTime: this.opts.maxWaitMs ?? 200,
          minBytes: 1,
          maxBytes: 8 * 1024 * 1024,
          topics: [
            {
              topicId: t.id,
              partitions: [{ partition, fetchOffset, currentLeaderEpoch: -1, lastFetchedEpoch: -1, partitionMaxBytes: 4 * 1024 * 1024 }],
            },
          ],
        });
        this.#timing.fetches++;
        this.#timing.fetchMs += monotonicMs() - t0;
        if (this.#closed) return;
        let added = 0;
        for (const tr of res.responses) {
          for (const pr of tr.partitions) {
            if (pr.partitionIndex !== partition) continue;
            if (pr.errorCode !== 0) throw new Error(`fetch ${topic}/${partition} at ${fetchOffset}: error code ${pr.errorCode}`);
            for (const batch of pr.records ?? []) {
              const last = batch.firstOffset + BigInt(batch.lastOffsetDelta);
              // Control batches (transaction markers) occupy offsets but carry no records for us.
              if ((batch.attributes & 0x20) === 0) {
                for (const rec of batch.records) {
                  const off = batch.firstOffset + BigInt(rec.offsetDelta);
                  if (off < this.#nextFetch) continue;
                  if (rec.value) {
                    this.#queue.push({ offset: Number(off), value: rec.value });
                    added++;
                  }
                  this.#nextFetch = off + 1n;
                }
              }
              if (last + 1n > this.#nextFetch) this.#nextFetch = last + 1n;
            }
          }
        }
        if (added > 0) this.#signal();
      } catch (err) {
        if (this.#closed) return;
        this.fetchErrors++;
        this.opts.onError?.(err as Error);
        this.#consumer.clearMetadata?.();
        await sleep(RETRY_MS);
      }
    }
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
