/** Node's timers hold at most 2^31-1 ms (about 24.8 days); a longer one fires after ~1 ms. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Sleeps for ms, ending early (without error) when the signal aborts. A delay longer than
 * a Node timer can hold is slept in chunks, so it is never cut short.
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted || !(ms > 0)) return resolve();
    const until = Date.now() + ms;
    let t: NodeJS.Timeout | undefined;
    const done = () => {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const arm = () => {
      const left = until - Date.now();
      if (left <= 0) return done();
      t = setTimeout(left > MAX_TIMER_MS ? arm : done, Math.min(left, MAX_TIMER_MS));
    };
    signal?.addEventListener('abort', done, { once: true });
    arm();
  });
}
