/**
 * Where a subtask's time goes, counted cheaply and said in one log line per committed
 * checkpoint (bench/engine-sustained.ts reads it at a side's maximum; nothing in the engine
 * acts on it). The counters are cumulative from the moment the subtask starts reading:
 *  - records: records handed to the sink;
 *  - idleMs: the subtask's loop waiting with no record buffered (nothing to do but wait for
 *    the source, a barrier or a completion);
 *  - prepare: sink.prepare calls and their wall time (for s3_2pc_sink: the multipart upload
 *    of the checkpoint's buffer, CreateMultipartUpload + UploadPart + its journal line);
 *  - commit: sink.commit calls and their wall time (CompleteMultipartUpload);
 *  - fetch (from the source, PartitionSource): Kafka fetch requests, their wall time, and
 *    the time the prefetcher waited because its queue was full (the subtask was slower than
 *    Kafka). The prefetcher runs beside the loop, so its times overlap the loop's.
 * The line: `clink worker: subtask S epoch E timing: readingMs=… records=… idleMs=…
 * prepares=… prepareMs=… commits=… commitMs=… fetches=… fetchMs=… queueFullMs=…`.
 */
import { monotonicMs } from './mono.ts';

/** The source's own counters (PartitionSource keeps them; a fake source may not). */
export interface FetchTiming {
  fetches: number;
  fetchMs: number;
  queueFullMs: number;
}

export interface TimingFigures extends FetchTiming {
  subtask: number;
  epoch: number;
  readingMs: number;
  records: number;
  idleMs: number;
  prepares: number;
  prepareMs: number;
  commits: number;
  commitMs: number;
}

const FIELDS = ['readingMs', 'records', 'idleMs', 'prepares', 'prepareMs', 'commits', 'commitMs', 'fetches', 'fetchMs', 'queueFullMs'] as const;

/** A subtask's counters. */
export class SubtaskTiming {
  readonly #since: number;
  idleMs = 0;
  prepares = 0;
  prepareMs = 0;
  commits = 0;
  commitMs = 0;

  constructor(now = monotonicMs()) {
    this.#since = now;
  }

  /** Runs `fn`, adding its wall time to the prepare or commit counters. */
  async timed<T>(what: 'prepare' | 'commit', fn: () => Promise<T>): Promise<T> {
    const t0 = monotonicMs();
    try {
      return await fn();
    } finally {
      if (what === 'prepare') {
        this.prepares++;
        this.prepareMs += monotonicMs() - t0;
      } else {
        this.commits++;
        this.commitMs += monotonicMs() - t0;
      }
    }
  }

  /** Waits for `p`, adding its wall time to idleMs. */
  async idle(p: Promise<unknown>): Promise<void> {
    const t0 = monotonicMs();
    await p;
    this.idleMs += monotonicMs() - t0;
  }

  /** The log line (see the module comment). */
  line(subtask: number, epoch: number, records: number, fetch: Partial<FetchTiming>, now = monotonicMs()): string {
    const f: Omit<TimingFigures, 'subtask' | 'epoch'> = {
      readingMs: now - this.#since,
      records,
      idleMs: this.idleMs,
      prepares: this.prepares,
      prepareMs: this.prepareMs,
      commits: this.commits,
      commitMs: this.commitMs,
      fetches: fetch.fetches ?? 0,
      fetchMs: fetch.fetchMs ?? 0,
      queueFullMs: fetch.queueFullMs ?? 0,
    };
    return `clink worker: subtask ${subtask} epoch ${epoch} timing: ${FIELDS.map((k) => `${k}=${Math.round(f[k])}`).join(' ')}`;
  }
}

const LINE = /clink worker: subtask (\d+) epoch (\d+) timing: (.*)$/;

/** The figures of a timing line, or null when the line is not one. */
export function parseTimingLine(line: string): TimingFigures | null {
  const m = LINE.exec(line);
  if (!m) return null;
  const kv = new Map(m[3]!.trim().split(/\s+/).map((p) => p.split('=') as [string, string]));
  const out: Record<string, number> = { subtask: Number(m[1]), epoch: Number(m[2]) };
  for (const k of FIELDS) {
    const v = Number(kv.get(k));
    if (!kv.has(k) || !Number.isFinite(v)) return null;
    out[k] = v;
  }
  return out as unknown as TimingFigures;
}
