/**
 * lib/retry.ts: retry (attempts, deadline, backoff, abort, what is retryable, hooks), poll and
 * waitUntil (answers, deadlines from now or from an earlier moment, probe limits, errors), and
 * Backoff (exponential with a cap, fixed, a function; an instance keeps its place).
 * Real timers with small delays; elapsed times are checked with slack for a loaded machine.
 */
import t from 'tap';
import { QualError } from '../../../lib/errors.ts';
import { Backoff, poll, retry, RetryStoppedError, waitUntil } from '../../../lib/retry.ts';

const failing = (n: number, make: (i: number) => unknown = (i) => new Error(`fail ${i}`)) => {
  let calls = 0;
  const fn = async (attempt: number): Promise<string> => {
    calls++;
    if (attempt !== calls) throw new Error(`attempt ${attempt} is not call ${calls}`);
    if (calls <= n) throw make(calls);
    return `ok after ${calls}`;
  };
  return { fn, calls: () => calls };
};

t.test('Backoff: exponential with a cap, fixed, a function; reset; huge attempts stay finite', async (t) => {
  const b = new Backoff({ initialMs: 100, maxMs: 1000 });
  t.same([b.next(), b.next(), b.next(), b.next(), b.next(), b.next()], [100, 200, 400, 800, 1000, 1000]);
  b.reset();
  t.equal(b.next(), 100, 'reset starts over');
  t.same([1, 2, 3].map((a) => Backoff.delay({ initialMs: 10, maxMs: 1e6, factor: 3 }, a)), [10, 30, 90]);
  t.equal(Backoff.delay(70, 9), 70);
  t.equal(Backoff.delay((a) => Math.min(5000, 250 * a), 3), 750);
  t.equal(Backoff.delay({ initialMs: 100, maxMs: 2000 }, 10_000), 2000, 'attempt 10000 is the cap, not Infinity or NaN');
  t.equal(Backoff.delay({ initialMs: 0, maxMs: 2000 }, 10_000), 0, 'a zero start stays zero');
  t.equal(Backoff.of(b), b, 'an instance is used as it is');
});

t.test('retry: succeeds after failures, with the backoff between attempts', async (t) => {
  const f = failing(3);
  const delays: number[] = [];
  const t0 = Date.now();
  t.equal(await retry(f.fn, { backoff: { initialMs: 20, maxMs: 40 }, onRetry: (_e, _a, d) => delays.push(d) }), 'ok after 4');
  t.same(delays, [20, 40, 40]);
  t.ok(Date.now() - t0 >= 95, `slept the delays (${Date.now() - t0} ms)`);
});

t.test('retry: attempts used up → the last error itself', async (t) => {
  const f = failing(10);
  const seen: number[] = [];
  await t.rejects(retry(f.fn, { attempts: 3, backoff: 1, onError: (_e, a) => seen.push(a) }), { message: 'fail 3' });
  t.equal(f.calls(), 3);
  t.same(seen, [1, 2, 3], 'onError told of every failure');
});

t.test('retry: a failure that is not retryable is thrown at once', async (t) => {
  const f = failing(10, (i) => new QualError(i === 2 ? 'PROTOCOL_VIOLATION' : 'STORE_UNAVAILABLE', `fail ${i}`));
  await t.rejects(retry(f.fn, { backoff: 1, isRetryable: (e) => (e as QualError).canRetry }), { code: 'PROTOCOL_VIOLATION', message: 'fail 2' });
  t.equal(f.calls(), 2);
});

t.test('retry: past the deadline → RetryStoppedError(deadline) with the last error; no sleep runs past it', async (t) => {
  const f = failing(1000);
  const t0 = Date.now();
  const err = await retry(f.fn, { deadlineMs: 300, backoff: 1000 }).catch((e: unknown) => e);
  const took = Date.now() - t0;
  t.type(err, RetryStoppedError);
  const e = err as RetryStoppedError;
  t.equal(e.reason, 'deadline');
  t.equal(e.attempts, f.calls());
  t.equal((e.lastError as Error).message, `fail ${f.calls()}`);
  t.equal(e.cause, e.lastError);
  t.equal(f.calls(), 2, 'calls at 0 and 300 ms: the 1 s delay is cut to the deadline');
  t.ok(took >= 295 && took < 900, `ended at the deadline (${took} ms)`);
});

t.test('retry: abort ends the sleep and stops retrying → RetryStoppedError(aborted)', async (t) => {
  const ac = new AbortController();
  const f = failing(1000);
  setTimeout(() => ac.abort(), 50);
  const t0 = Date.now();
  const err = (await retry(f.fn, { backoff: 10_000, signal: ac.signal }).catch((e: unknown) => e)) as RetryStoppedError;
  t.ok(Date.now() - t0 < 5000, `not the 10 s delay (${Date.now() - t0} ms)`);
  t.type(err, RetryStoppedError);
  t.equal(err.reason, 'aborted');
  t.equal(f.calls(), 2, 'the attempt due when the sleep ended runs, then no more');
});

t.test('retry: delayFirst waits before the first call; a Backoff instance keeps its place across calls', async (t) => {
  const b = new Backoff({ initialMs: 30, maxMs: 1000 });
  const t0 = Date.now();
  await retry(async () => 'x', { backoff: b, delayFirst: true });
  t.ok(Date.now() - t0 >= 28, `waited first (${Date.now() - t0} ms)`);
  const delays: number[] = [];
  await retry(failing(1).fn, { backoff: b, onRetry: (_e, _a, d) => delays.push(d) });
  t.same(delays, [60], 'the second call went on from the first one\'s place');
});

t.test('poll: the first answer (0 and "" are answers); undefined past the deadline, after the probe limit, on abort', async (t) => {
  let n = 0;
  t.equal(await poll(() => (++n < 3 ? null : 0), { deadlineMs: 5000, intervalMs: 5 }), 0);
  t.equal(n, 3);
  t.equal(await poll(async () => '', { deadlineMs: 1000 }), '');
  n = 0;
  const t0 = Date.now();
  t.equal(await poll(() => (n++, false), { deadlineMs: 100, intervalMs: 20 }), undefined);
  t.ok(Date.now() - t0 >= 100 && n >= 3, `polled until the deadline (${n} probes, ${Date.now() - t0} ms)`);
  n = 0;
  t.equal(await poll(() => (n++, undefined), { probes: 4, intervalMs: 1 }), undefined);
  t.equal(n, 4, 'at most 4 probes');
  n = 0;
  t.equal(await poll(() => (n++, null), { until: Date.now() - 1 }), undefined);
  t.equal(n, 0, 'a deadline counted from an earlier moment that has passed: no probe');
  const ac = new AbortController();
  setTimeout(() => ac.abort(), 30);
  const t1 = Date.now();
  t.equal(await poll(() => null, { deadlineMs: 10_000, intervalMs: 5000, signal: ac.signal }), undefined);
  t.ok(Date.now() - t1 < 3000, 'abort ends the wait');
});

t.test('poll: a throwing probe ends it unless ignoreErrors', async (t) => {
  await t.rejects(poll(() => Promise.reject(new Error('boom')), { deadlineMs: 1000 }), { message: 'boom' });
  let n = 0;
  const errors: string[] = [];
  const v = await poll(
    () => {
      if (++n < 3) throw new Error(`boom ${n}`);
      return 'up';
    },
    { deadlineMs: 1000, intervalMs: 1, ignoreErrors: true, onError: (e) => errors.push((e as Error).message) },
  );
  t.equal(v, 'up');
  t.same(errors, ['boom 1', 'boom 2']);
});

t.test('waitUntil: the answer, or READINESS_TIMEOUT naming what and the last error', async (t) => {
  let n = 0;
  t.equal(await waitUntil(async () => (++n === 2 ? { pid: 7 } : null), { what: 'x', deadlineMs: 1000, intervalMs: 1 }).then((v) => v.pid), 7);
  const err = (await waitUntil(
    () => {
      throw new Error('connection refused');
    },
    { what: 'store on store-1 answering', deadlineMs: 1200, intervalMs: 100 },
  ).catch((e: unknown) => e)) as QualError;
  t.type(err, QualError);
  t.equal(err.code, 'READINESS_TIMEOUT');
  t.equal(err.message, 'store on store-1 answering: not ready after 1 s (last error: connection refused)');
  const quiet = (await waitUntil(() => false, { what: 'quiet', deadlineMs: 50, intervalMs: 10 }).catch((e: unknown) => e)) as QualError;
  t.equal(quiet.message, 'quiet: not ready after 0 s');
  const ac = new AbortController();
  ac.abort();
  await t.rejects(waitUntil(() => false, { what: 'aborted', deadlineMs: 1000, signal: ac.signal }), { code: 'ABORTED' });
});

t.test('retry: isRetryable may throw its own error to end the retries', async (t) => {
  const f = failing(10);
  await t.rejects(
    retry(f.fn, {
      backoff: 1,
      isRetryable: (_e, attempt) => {
        if (attempt === 3) throw new Error('deadline of my own');
        return true;
      },
    }),
    { message: 'deadline of my own' },
  );
  t.equal(f.calls(), 3);
});
