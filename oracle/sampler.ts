/**
 * The oracle's sampler: every interval (default 19 s) it runs one judge pass and appends a
 * Sample (lib/evidence.ts) to samples.jsonl: time, objects, distinct events committed,
 * produced, lag, every counter, and the transient store errors the sample met.
 *
 * A pass that fails with a retryable error (the store paused, a timeout, a refused
 * connection) is retried with backoff (0.5 s doubling to 8 s) and each failure counted in
 * the sample's `errors` and `lastError`. A sample that cannot complete within the deadline
 * (default 120 s from its start) is a stuck oracle: the sampler writes that sample with
 * `stuck: true`, stops, and `stuck` / `stuckError` say so; the caller turns that into a FAIL.
 * A non-retryable error (bad credentials, no such bucket) stops the sampler the same way.
 */
import { sleep } from '../lib/sleep.ts';
import { appendFileSync } from 'node:fs';
import type { Sample } from '../lib/evidence.ts';
import { QualError } from '../lib/errors.ts';
import { retry, RetryStoppedError } from '../lib/retry.ts';
import type { IncrementalJudge } from './judge.ts';

export interface SamplerOptions {
  judge: IncrementalJudge;
  /** Produced so far, per partition (the producer's acknowledged counts). */
  produced: () => readonly number[];
  /** Completed checkpoints so far, if the engine tells (optional). */
  checkpoints?: () => number | undefined;
  samplesPath?: string;
  intervalMs?: number;
  deadlineMs?: number;
  /** First retry delay; doubles up to maxBackoffMs. */
  backoffMs?: number;
  maxBackoffMs?: number;
  onSample?: (s: Sample) => void;
}


export class Sampler {
  readonly #o: SamplerOptions;
  readonly #startedAt = Date.now();
  #timer: AbortController | undefined;
  #nap: AbortController | undefined;
  #loop: Promise<void> | undefined;
  #stuckError: QualError | undefined;
  #samples = 0;
  #errors = 0;
  last: Sample | undefined;

  constructor(o: SamplerOptions) {
    this.#o = o;
  }

  get stuck(): boolean {
    return this.#stuckError !== undefined;
  }
  get stuckError(): QualError | undefined {
    return this.#stuckError;
  }
  get samples(): number {
    return this.#samples;
  }
  /** Transient errors over all samples. */
  get errors(): number {
    return this.#errors;
  }

  /** Takes samples every interval until stop() or a stuck sample. */
  start(): void {
    if (this.#loop) return;
    this.#timer = new AbortController();
    const signal = this.#timer.signal;
    this.#loop = (async () => {
      while (!signal.aborted && !this.stuck) {
        const t0 = Date.now();
        await this.sample(signal);
        if (this.stuck) break;
        // The wait ends at the interval, at wake(), or at stop() (which aborts this too).
        this.#nap = new AbortController();
        if (signal.aborted) break;
        await sleep(Math.max(0, (this.#o.intervalMs ?? 19_000) - (Date.now() - t0)), this.#nap.signal);
      }
    })();
  }

  /**
   * The next periodic sample now, not at the end of the interval (or, while one is under way,
   * right after it): for the gate, which waits on a sample to see the first committed objects.
   */
  wake(): void {
    this.#nap?.abort();
  }

  /** Stops the periodic sampling (a sample in progress finishes its current attempt first). */
  async stop(): Promise<void> {
    this.#timer?.abort();
    this.#nap?.abort();
    await this.#loop;
  }

  /**
   * One sample: a judge pass retried until it completes or the deadline passes. Returns the
   * sample written. Abort (stop) during retries ends it early as a non-stuck sample with
   * what it had.
   */
  async sample(signal?: AbortSignal): Promise<Sample> {
    const o = this.#o;
    let errors = 0;
    let lastError: string | undefined;
    let stuck = false;
    const asQual = (err: unknown): QualError => (err instanceof QualError ? err : new QualError('INTERNAL', (err as Error)?.message ?? String(err), undefined, { cause: err }));
    try {
      await retry(() => o.judge.pass(), {
        deadlineMs: o.deadlineMs ?? 120_000,
        backoff: { initialMs: o.backoffMs ?? 500, maxMs: o.maxBackoffMs ?? 8_000 },
        signal,
        isRetryable: (err) => asQual(err).canRetry,
        onError: (err) => {
          errors++;
          lastError = asQual(err).message;
        },
      });
    } catch (err) {
      if (!(err instanceof RetryStoppedError)) {
        stuck = true;
        this.#stuckError = asQual(err);
      } else if (err.reason === 'deadline') {
        stuck = true;
        this.#stuckError = new QualError('STORE_UNAVAILABLE', `stuck oracle: a sample could not complete within ${Math.round((o.deadlineMs ?? 120_000) / 1000)} s (${errors} attempts; last error: ${lastError})`);
      }
      // Aborted (stop): not stuck; the sample keeps what it had.
    }
    // Produced is read after the pass: everything judged was produced before it was committed.
    const producedPer = o.produced();
    const produced = producedPer.reduce((a, b) => a + b, 0);
    const tally = o.judge.tally;
    const events = tally.distinct;
    const s: Sample = {
      t: new Date().toISOString(),
      elapsedS: Math.round((Date.now() - this.#startedAt) / 100) / 10,
      objects: o.judge.objects,
      events,
      produced,
      lag: produced - events,
      counters: tally.counters(producedPer),
      errors,
      ...(lastError !== undefined ? { lastError } : {}),
      ...(o.checkpoints?.() !== undefined ? { checkpoints: o.checkpoints()! } : {}),
      ...(stuck ? { stuck: true } : {}),
    };
    this.#samples++;
    this.#errors += errors;
    this.last = s;
    if (o.samplesPath) appendFileSync(o.samplesPath, JSON.stringify(s) + '\n');
    o.onSample?.(s);
    return s;
  }
}
