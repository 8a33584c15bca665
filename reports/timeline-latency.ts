/**
 * Produce→visible latency per oracle sample, derived from samples.jsonl alone.
 *
 * A sample says, at harness time t, how many events the generator had produced and how
 * many distinct ones the oracle had seen committed. Its latency is the time since the
 * produced count first reached that committed count: t − T, where T is found by linear
 * interpolation between the two consecutive samples whose produced counts straddle it (the
 * produced count taken as its running maximum). It reads as the age, when the sample was
 * taken, of the newest committed event if events were committed in the order they were
 * produced; with several partitions it is the delay of the committed total behind the
 * produced total, not any one event's latency. A sample committing nothing, one whose count
 * was already reached by the first sample (T lies before the evidence), and one committing
 * more than was produced are left out and counted.
 */
import type { Sample } from '../lib/evidence.ts';

export interface LatencyPoint {
  /** The sample's time (ms epoch, harness clock). */
  tMs: number;
  latencyS: number;
}

/** The latency of every sample it can be derived for, in sample order, and how many it could not. */
export function visibleLatency(samples: readonly Pick<Sample, 't' | 'produced' | 'events'>[]): { points: LatencyPoint[]; leftOut: number } {
  const rows = samples.map((s) => ({ tMs: Date.parse(s.t), produced: s.produced, events: s.events })).filter((r) => Number.isFinite(r.tMs));
  rows.sort((a, b) => a.tMs - b.tMs);
  // The running maximum of produced: "first reached" is well defined even if a count dips.
  const reached: number[] = [];
  let max = -Infinity;
  for (const r of rows) reached.push((max = Math.max(max, r.produced)));
  const points: LatencyPoint[] = [];
  let leftOut = samples.length - rows.length;
  for (const [i, r] of rows.entries()) {
    if (r.events <= 0 || reached[i]! < r.events) {
      leftOut++;
      continue;
    }
    // The first sample j whose produced count reached r.events (binary search: reached is non-decreasing).
    let lo = 0;
    let hi = i;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (reached[mid]! >= r.events) hi = mid;
      else lo = mid + 1;
    }
    if (lo === 0) {
      leftOut++;
      continue;
    }
    const a = rows[lo - 1]!;
    const b = rows[lo]!;
    const pa = reached[lo - 1]!;
    const pb = reached[lo]!;
    const T = a.tMs + ((r.events - pa) / (pb - pa)) * (b.tMs - a.tMs);
    points.push({ tMs: r.tMs, latencyS: Math.round((r.tMs - T) / 100) / 10 });
  }
  return { points, leftOut };
}
