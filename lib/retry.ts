/**
 * The one place a loop retries or waits.
 *
 *  - `retry(fn, o)`: calls fn until it resolves; after a failure it stops when the error is
 *    not retryable, the attempts are used up (the last error is thrown as it is), the
 *    deadline has passed or the signal has aborted (a RetryStoppedError saying which, with
 *    the last error as its cause); otherwise it sleeps the next backoff delay and tries again.
 *  - `poll(probe, o)`: calls probe until it answers something (not null, undefined or false)
 *    and returns that, or undefined once the deadline has passed or the signal aborted.
 *  - `waitUntil(probe, o)`: poll, but a deadline passed is a QualError READINESS_TIMEOUT
 *    naming what was awaited and the probe's last error.
 *  - `Backoff`: the delays between attempts (exponential with a cap, a fixed interval, or
 *    any function of the attempt); an instance keeps its place across retry() calls.
 *
 * Deadlines are wall-clock (Date.now()), like the loops this replaced; the engine's processes,
 * whose wall clock a clock-step fault moves, use retry without one (delays are timers).
 */
import { QualError } from './errors.ts';
import { sleep } from './sleep.ts';

export type BackoffSpec =
  /** The same delay every time. */
  | number
  /** initialMs, then times factor (default 2) each attempt, at most maxMs. */
  | { initialMs: number; maxMs: number; factor?: number }
  /** The delay after the given failed attempt (1-based). */
  | ((attempt: number) => number);

/** A sequence of delays; next() gives the one after the next failed attempt, reset() starts over. */
export class Backoff {
  readonly #spec: BackoffSpec;
  #attempt = 0;
  constructor(spec: BackoffSpec) {
    this.#spec = spec;
  }
  static of(spec: BackoffSpec | Backoff): Backoff {
    return spec instanceof Backoff ? spec : new Backoff(spec);
  }
  /** The delay for the given failed attempt (1-based), without moving. */
  static delay(spec: BackoffSpec, attempt: number): number {
    if (typeof spec === 'number') return spec;
    if (typeof spec === 'function') return spec(attempt);
    if (spec.initialMs <= 0) return 0;
    // The exponent is capped so a long outage's delay stays finite before the cap applies.
    return Math.min(spec.maxMs, spec.initialMs * (spec.factor ?? 2) ** Math.min(attempt - 1, 60));
  }
  next(): number {
    return Backoff.delay(this.#spec, ++this.#attempt);
  }
  reset(): void {
    this.#attempt = 0;
  }
}

export interface RetryOptions {
  /** At most this many calls; after the last one fails its error is thrown as it is. */
  attempts?: number;
  /** No retry once this much time (ms) has passed since the call; a delay never runs past it. */
  deadlineMs?: number;
  /** Delays between attempts (default 250 ms each). An instance keeps its place across calls. */
  backoff?: BackoffSpec | Backoff;
  /** Wait one backoff delay before the first call too. */
  delayFirst?: boolean;
  /** No retry once aborted; the sleep between attempts ends early on abort. */
  signal?: AbortSignal;
  /** Whether a failure may be retried (default: every failure). It may also throw, ending the retries with its own error. */
  isRetryable?: (err: unknown, attempt: number) => boolean | Promise<boolean>;
  /** Told of every failed attempt, retried or not, before anything else is decided. */
  onError?: (err: unknown, attempt: number) => void;
  /** Told of each retry, with the delay before it. */
  onRetry?: (err: unknown, attempt: number, delayMs: number) => void;
}

/** retry() gave up on a retryable failure because its deadline passed or its signal aborted. */
export class RetryStoppedError extends Error {
  readonly reason: 'deadline' | 'aborted';
  readonly attempts: number;
  readonly elapsedMs: number;
  readonly lastError: unknown;
  constructor(reason: 'deadline' | 'aborted', attempts: number, elapsedMs: number, lastError: unknown) {
    const last = lastError instanceof Error ? lastError.message : String(lastError);
    super(`${reason === 'deadline' ? `deadline passed after ${elapsedMs} ms` : 'aborted'} (${attempts} attempt${attempts === 1 ? '' : 's'}; last error: ${last})`, { cause: lastError });
    this.name = 'RetryStoppedError';
    this.reason = reason;
    this.attempts = attempts;
    this.elapsedMs = elapsedMs;
    this.lastError = lastError;
  }
}

export async function retry<T>(fn: (attempt: number) => Promise<T>, o: RetryOptions = {}): Promise<T> {
  const started = Date.now();
  const deadline = o.deadlineMs === undefined ? undefined : started + o.deadlineMs;
  const backoff = Backoff.of(o.backoff ?? 250);
  if (o.delayFirst) await sleep(backoff.next(), o.signal);
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn(attempt);
    } catch (err) {
      o.onError?.(err, attempt);
      if (o.isRetryable && !(await o.isRetryable(err, attempt))) throw err;
      if (o.attempts !== undefined && attempt >= o.attempts) throw err;
      const left = deadline === undefined ? Infinity : deadline - Date.now();
      if (left <= 0) throw new RetryStoppedError('deadline', attempt, Date.now() - started, err);
      if (o.signal?.aborted) throw new RetryStoppedError('aborted', attempt, Date.now() - started, err);
      const delay = backoff.next();
      o.onRetry?.(err, attempt, delay);
      await sleep(Math.min(delay, left), o.signal);
    }
  }
}

export interface PollOptions {
  /** Stop polling this long (ms) after the call... */
  deadlineMs?: number;
  /** ...or at this wall-clock time (ms since the epoch), for a deadline counted from an earlier moment. */
  until?: number;
  /** At most this many probes (with or without a deadline). */
  probes?: number;
  /** After each probe that did not answer (default 250 ms), so the wait may end up to one interval past the deadline. */
  intervalMs?: number;
  /** Stop polling on abort (the sleep between probes ends early). */
  signal?: AbortSignal;
  /** A probe that throws counts as a no and polling goes on (default: the error is thrown). */
  ignoreErrors?: boolean;
  /** Told of each probe that threw, when ignoreErrors. */
  onError?: (err: unknown) => void;
}

/** What counts as an answer: anything but null, undefined and false. */
export type Answer<T> = Exclude<T, null | undefined | false>;

function deadlineOf(o: PollOptions): number {
  if (o.until !== undefined) return o.until;
  if (o.deadlineMs !== undefined) return Date.now() + o.deadlineMs;
  if (o.probes !== undefined) return Infinity;
  throw new Error('poll: deadlineMs, until or probes is required');
}

async function pollWithLastError<T>(probe: () => T | Promise<T>, o: PollOptions): Promise<{ value: Answer<T> | undefined; lastError: unknown }> {
  const deadline = deadlineOf(o);
  let lastError: unknown;
  for (let n = 1; n <= (o.probes ?? Infinity) && Date.now() < deadline && !o.signal?.aborted; n++) {
    try {
      const v = await probe();
      if (v !== null && v !== undefined && v !== false) return { value: v as Answer<T>, lastError };
    } catch (err) {
      if (!o.ignoreErrors) throw err;
      lastError = err;
      o.onError?.(err);
    }
    await sleep(o.intervalMs ?? 250, o.signal);
  }
  return { value: undefined, lastError };
}

/** The probe's first answer, or undefined once the deadline passed or the signal aborted. */
export async function poll<T>(probe: () => T | Promise<T>, o: PollOptions): Promise<Answer<T> | undefined> {
  return (await pollWithLastError(probe, o)).value;
}

/**
 * The probe's first answer; past the deadline a QualError READINESS_TIMEOUT
 * `<what>: not ready after N s (last error: …)`. Probe errors are retried unless
 * ignoreErrors is false.
 */
export async function waitUntil<T>(probe: () => T | Promise<T>, o: PollOptions & { what: string }): Promise<Answer<T>> {
  const started = Date.now();
  const { value, lastError } = await pollWithLastError(probe, { ignoreErrors: true, ...o });
  if (value !== undefined) return value;
  if (o.signal?.aborted) throw new QualError('ABORTED', `${o.what}: aborted while waiting`);
  const waitedMs = o.deadlineMs ?? Date.now() - started;
  throw new QualError('READINESS_TIMEOUT', `${o.what}: not ready after ${Math.round(waitedMs / 1000)} s${lastError ? ` (last error: ${(lastError as Error).message})` : ''}`);
}
