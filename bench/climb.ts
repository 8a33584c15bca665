/**
 * The search for a side's highest sustained rate (bench/engine-sustained.ts without --rates):
 * a pure function over a `rung(rate)` callback that offers one rate and says whether the
 * side kept up, so the search is unit-tested with fake rungs and the benchmark supplies the
 * real ones (producer only, raw consume → put baseline, Clink).
 *
 * The climb, one rung at a time, each rate rounded to `step` events/s:
 *  1. Double from `start` while every rung passes (never above `ceiling`, the producer's
 *     own measured maximum when the caller has one: a rate the producer cannot offer
 *     judges nothing). The first rung that does not pass bounds the search from above.
 *  2. When the first rung (or every rung below a failure) does not pass, halve below the
 *     lowest one that did not pass until one passes: a maximum below the start is found too.
 *  3. Bisect between the highest passing rate and the lowest rate that did not pass
 *     (lo, top) until (top − lo) / lo ≤ `resolution`, or the step cannot split them.
 *  4. Confirm: run lo again `confirmations` times; a maximum must pass every time. A
 *     confirmation that fails lowers the top to lo, and the search resumes from the highest
 *     rate that passed below it (a lucky pass is not a maximum).
 * Every decision uses the lowest rate that did not pass: a pass above it (noise) never
 * raises the maximum. The search stops after `maxRungs` rungs in all, whatever it has.
 *
 * A rung that did not pass is one of two kinds. A real failure ("fail"): the side fell
 * behind at a rate the producer did offer. A producer-bound rung: the producer did not reach
 * the offered rate, so nothing was shown about the side; it bounds the search from above
 * (rates at or over it are not tried again) but never counts as the side's limit.
 *
 * The maximum is `determined` (the definition the RESULT line states) only when a real
 * failure was seen above a passing rung and it, not a producer-bound rung nor the
 * ceiling, is the top of the final bracket: the true maximum then lies in [max, firstFail).
 */

/** What a rung says about the side at one offered rate. */
export interface RungOutcome {
  offered: number;
  /** The side kept up at this rate. */
  ok: boolean;
  /** The producer did not reach the offered rate: not a result for the side (never a failure of it). */
  producerBound: boolean;
}

export interface ClimbOptions {
  /** The first rate offered, events/s. */
  start: number;
  /** Bisection stops once (lowest rate not passed − highest passed) / highest passed ≤ this (0.05 = 5 %). */
  resolution: number;
  /** At most this many rungs in all, confirmations included. */
  maxRungs: number;
  /** Times the maximum is offered again and must pass again. */
  confirmations: number;
  /** Rates are multiples of this, events/s (and the lowest rate tried). */
  step: number;
  /** Never offer more than this (the producer's measured maximum); none when undefined. */
  ceiling?: number;
}

/** Why the climb stopped. */
export type ClimbStop =
  /** lo and the lowest failure within the resolution (or the step), lo confirmed. */
  | 'resolved'
  /** maxRungs used up. */
  | 'budget'
  /** lo reached the ceiling without a failure: the producer's maximum bounds the side. */
  | 'ceiling'
  /** Not even `step` events/s passed. */
  | 'no-pass';

export interface Climb<R extends RungOutcome> {
  /** Every rung, in the order run. */
  rungs: R[];
  /** The highest rate that passed below the lowest rate that did not (null: none passed). */
  max: number | null;
  /** The last rung run at `max` (for its latency), null with it. */
  maxRung: R | null;
  /** How many times `max` passed. */
  maxPasses: number;
  /** The lowest rate at which the side fell behind with the producer at the rate (null: none). */
  firstFail: number | null;
  /** The lowest producer-bound rate (null: none). */
  producerCap: number | null;
  /** A real failure above a passing rung bounds the final bracket (see the module comment). */
  determined: boolean;
  stop: ClimbStop;
}

/** `rate` rounded to a multiple of `step` (at least `step`). */
export function roundRate(rate: number, step: number): number {
  return Math.max(step, Math.round(rate / step) * step);
}

/** The next rate to offer, or why there is none; pure, from what the rungs said so far. */
export function nextRate(
  s: { lo: number | null; firstFail: number | null; producerCap: number | null; passesAtLo: number },
  o: ClimbOptions,
): { rate: number } | { stop: Exclude<ClimbStop, 'budget'> } {
  const top = Math.min(s.firstFail ?? Infinity, s.producerCap ?? Infinity);
  if (s.lo === null) {
    // Nothing passed yet: the start, or half the lowest rate that did not pass.
    const rate = top === Infinity ? roundRate(Math.min(o.start, o.ceiling ?? Infinity), o.step) : Math.floor(top / 2 / o.step) * o.step;
    return rate >= o.step && rate < top ? { rate } : { stop: 'no-pass' };
  }
  if (top === Infinity) {
    // Everything passed: double, up to the ceiling.
    if (o.ceiling !== undefined && s.lo >= o.ceiling) return { stop: 'ceiling' };
    return { rate: Math.min(roundRate(2 * s.lo, o.step), o.ceiling ?? Infinity) };
  }
  const mid = roundRate((s.lo + top) / 2, o.step);
  if ((top - s.lo) / s.lo > o.resolution && mid > s.lo && mid < top) return { rate: mid };
  if (s.passesAtLo <= o.confirmations) return { rate: s.lo };
  return { stop: 'resolved' };
}

/** Climbs to the side's maximum (see the module comment): the rungs run and what they show. */
export async function climb<R extends RungOutcome>(rung: (rate: number) => Promise<R>, o: ClimbOptions): Promise<Climb<R>> {
  if (!(o.start >= o.step && o.step > 0 && o.resolution > 0 && o.maxRungs >= 1 && o.confirmations >= 0)) throw new Error(`climb: unusable options ${JSON.stringify(o)}`);
  const rungs: R[] = [];
  let firstFail: number | null = null;
  let producerCap: number | null = null;
  const passes = new Map<number, number>();
  /** The highest rate that passed below the lowest that did not. */
  const lo = (): number | null => {
    const top = Math.min(firstFail ?? Infinity, producerCap ?? Infinity);
    let best: number | null = null;
    for (const rate of passes.keys()) if (rate < top && (best === null || rate > best)) best = rate;
    return best;
  };
  let stop: ClimbStop;
  for (;;) {
    const l = lo();
    const next = nextRate({ lo: l, firstFail, producerCap, passesAtLo: l === null ? 0 : passes.get(l)! }, o);
    if ('stop' in next) {
      stop = next.stop;
      break;
    }
    if (rungs.length >= o.maxRungs) {
      stop = 'budget';
      break;
    }
    const r = await rung(next.rate);
    rungs.push(r);
    if (r.producerBound) producerCap = Math.min(producerCap ?? Infinity, next.rate);
    else if (r.ok) passes.set(next.rate, (passes.get(next.rate) ?? 0) + 1);
    else firstFail = Math.min(firstFail ?? Infinity, next.rate);
  }
  const max = lo();
  const maxRung = max === null ? null : (rungs.findLast((r) => r.offered === max && r.ok && !r.producerBound) ?? null);
  const determined = max !== null && firstFail !== null && firstFail > max && (producerCap === null || firstFail <= producerCap) && stop !== 'ceiling';
  return { rungs, max, maxRung, maxPasses: max === null ? 0 : passes.get(max)!, firstFail, producerCap, determined, stop };
}

/** One line saying what the climb showed, for the summary; `failed` names a real failure ("fell behind"; the producer's: "not reached"). */
export function describeClimb(name: string, c: Climb<RungOutcome>, o: Pick<ClimbOptions, 'resolution' | 'confirmations'>, failed = 'fell behind'): string {
  if (c.max === null) return `${name}: no maximum: no rate passed (${c.stop}; ${c.rungs.length} rungs)`;
  const top = Math.min(c.firstFail ?? Infinity, c.producerCap ?? Infinity);
  const bracket = top === Infinity ? `no rung above it failed` : `the lowest rate not passed ${top} events/s (${c.firstFail === top ? failed : 'producer-bound'}), ${(((top - c.max) / c.max) * 100).toFixed(1)} % above`;
  const confirmed = c.maxPasses > o.confirmations ? `passed ${c.maxPasses}×` : `passed ${c.maxPasses}×, ${o.confirmations} confirmation${o.confirmations === 1 ? '' : 's'} asked`;
  const why = c.determined ? 'determined' : c.stop === 'ceiling' ? "NOT determined: reached the producer's ceiling without falling behind" : c.producerCap !== null && (c.firstFail === null || c.producerCap < c.firstFail) ? 'NOT determined: the producer was the bound' : 'NOT determined: no rung above it fell behind';
  return `${name}: max ${c.max} events/s (${confirmed}); ${bracket}; ${why}; stopped: ${c.stop} after ${c.rungs.length} rungs`;
}
