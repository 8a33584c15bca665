/**
 * Is a side's lag growing over a rung? (bench/engine-sustained.ts's second failure test,
 * beside p99 produce → visible.)
 *
 * Lag, as measured: events the producer has sent minus distinct events visible in the
 * bucket, sampled every listing (250 ms) while the producer runs. A side that keeps up
 * commits once per checkpoint interval, so its lag is a sawtooth: it climbs between commits
 * and drops when one becomes visible. A least-squares line through the raw sawtooth is
 * biased by its phase (up to offered / N² over N intervals), so the trend is taken through
 * its troughs: the least lag in each window of 1.5 intervals, the windows one interval
 * apart (each holds at least one commit even when commits jitter by up to half an interval).
 *
 * Growing, precisely: over the rung after its first quarter (the warm-up: deploy, JIT, the
 * first checkpoints), with at least MIN_TROUGHS troughs, the least-squares slope of the
 * troughs against time is above LAG_GROWTH_SHARE × the offered rate (events/s per second):
 * the side committed less than 95 % of what was offered while the producer ran. Fewer
 * troughs (a rung shorter than about 3 intervals): not judged (slope null). Three quarters
 * of the default rung (11 intervals) give 7 troughs: a commit jitter of ±1 s at 160,000/s
 * moves the slope by about 2 % of the rate (one standard deviation), under the 5 %.
 */

/** The slope above which lag is growing, as a share of the offered rate. */
export const LAG_GROWTH_SHARE = 0.05;
/** Troughs needed for a slope. */
export const MIN_TROUGHS = 3;

export interface LagPoint {
  /** ms, this process's clock. */
  t: number;
  /** Events sent − events visible. */
  lag: number;
}

/** Least-squares slope of lag against time, per second; null with fewer than 2 distinct times. */
export function slopePerS(points: readonly LagPoint[]): number | null {
  const n = points.length;
  if (n < 2) return null;
  const mt = points.reduce((a, p) => a + p.t, 0) / n;
  const ml = points.reduce((a, p) => a + p.lag, 0) / n;
  let cov = 0;
  let vt = 0;
  for (const p of points) {
    cov += (p.t - mt) * (p.lag - ml);
    vt += (p.t - mt) ** 2;
  }
  return vt > 0 ? (cov / vt) * 1000 : null;
}

/** The least lag in each window [from + k·interval, from + (k + 1.5)·interval] that ends by `to`. */
export function lagTroughs(points: readonly LagPoint[], fromMs: number, toMs: number, intervalMs: number): LagPoint[] {
  const out: LagPoint[] = [];
  for (let start = fromMs; start + 1.5 * intervalMs <= toMs; start += intervalMs) {
    let least: LagPoint | null = null;
    for (const p of points) if (p.t >= start && p.t <= start + 1.5 * intervalMs && (least === null || p.lag < least.lag)) least = p;
    if (least && out.at(-1) !== least) out.push(least);
  }
  return out;
}

export interface LagGrowth {
  /** Slope of the troughs after the first quarter, events/s per second; null when not judged. */
  slopePerS: number | null;
  troughs: number;
  /** LAG_GROWTH_SHARE × offered. */
  limitPerS: number;
  growing: boolean;
}

/** The lag trend over [startedAt, stoppedAt] after its first quarter (see the module comment). */
export function lagGrowth(points: readonly LagPoint[], startedAt: number, stoppedAt: number, intervalMs: number, offered: number): LagGrowth {
  const troughs = lagTroughs(points, startedAt + (stoppedAt - startedAt) / 4, stoppedAt, intervalMs);
  const slope = troughs.length >= MIN_TROUGHS ? slopePerS(troughs) : null;
  const limitPerS = LAG_GROWTH_SHARE * offered;
  return { slopePerS: slope, troughs: troughs.length, limitPerS, growing: slope !== null && slope > limitPerS };
}
