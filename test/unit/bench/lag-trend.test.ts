/**
 * The lag trend (bench/lag-trend.ts) on synthetic sawtooths: a side that keeps up at every
 * commit phase and with jittery commits is not growing, one that commits 90 % of the offered
 * rate is; the least-squares slope itself; troughs; a rung too short to judge.
 */
import t from 'tap';
import seedrandom from 'seedrandom';
import { LAG_GROWTH_SHARE, lagGrowth, lagTroughs, slopePerS, type LagPoint } from '../../../bench/lag-trend.ts';

const INTERVAL = 8000;
const DURATION = 88_000;

/**
 * Lag sampled every 250 ms of a side offered `rate`/s that, at barrier k (every interval from
 * `phase`), cuts `share` of what was sent by then and shows it `delay(k)` ms later.
 */
function sawtooth(rate: number, share: number, phase: number, delay: (k: number) => number): LagPoint[] {
  const commits: { at: number; visible: number }[] = [];
  for (let k = 0, b = phase; b < DURATION + INTERVAL; k++, b += INTERVAL) commits.push({ at: b + delay(k), visible: share * rate * (b / 1000) });
  const out: LagPoint[] = [];
  for (let ts = 0; ts <= DURATION; ts += 250) {
    let visible = 0;
    for (const c of commits) if (c.at <= ts) visible = Math.max(visible, c.visible);
    out.push({ t: ts, lag: (rate * ts) / 1000 - visible });
  }
  return out;
}

t.test('least-squares slope, per second', async (t) => {
  t.equal(slopePerS([{ t: 0, lag: 10 }, { t: 1000, lag: 30 }, { t: 2000, lag: 50 }]), 20);
  t.equal(slopePerS([{ t: 0, lag: 5 }, { t: 1000, lag: 5 }]), 0);
  t.equal(slopePerS([{ t: 0, lag: 0 }, { t: 1000, lag: 10 }, { t: 2000, lag: 0 }, { t: 3000, lag: 10 }]), 2, 'through noise');
  t.equal(slopePerS([{ t: 0, lag: 1 }]), null);
  t.equal(slopePerS([{ t: 5, lag: 1 }, { t: 5, lag: 2 }]), null, 'no spread in time');
});

t.test('troughs: the least lag per 1.5-interval window, windows an interval apart, each point once', async (t) => {
  const pts = sawtooth(1000, 1, 0, () => 1000);
  const tr = lagTroughs(pts, 44_000, 88_000, INTERVAL);
  t.equal(tr.length, 5, 'windows starting 44, 52, 60, 68, 76 s (each ends by 88 s)');
  t.ok(tr.every((p) => p.lag === 1000), `each right after a commit: 1 s of events (${tr.map((p) => p.lag).join(', ')})`);
  t.same(lagTroughs([{ t: 1, lag: 1 }], 0, 12_000, INTERVAL), [{ t: 1, lag: 1 }]);
  t.same(lagTroughs([{ t: 1, lag: 1 }], 0, 11_999, INTERVAL), [], 'a window must end by the end');
  t.same(lagTroughs([], 0, 100_000, INTERVAL), []);
});

t.test('a side that keeps up is not growing, whatever the commit phase and jitter', async (t) => {
  const rate = 160_000;
  for (const phase of [0, 1000, 2500, 4000, 6000, 7750]) {
    const g = lagGrowth(sawtooth(rate, 1, phase, () => 1500), 0, DURATION, INTERVAL, rate);
    t.equal(g.growing, false, `phase ${phase}: slope ${g.slopePerS?.toFixed(0)}/s`);
    t.ok(g.troughs >= 4);
    t.ok(Math.abs(g.slopePerS!) < 0.005 * rate, 'the troughs are flat');
  }
  const rng = seedrandom('lag-jitter');
  let worst = 0;
  for (let run = 0; run < 40; run++) {
    const jitter = Array.from({ length: 20 }, () => 500 + rng() * 2000);
    const g = lagGrowth(sawtooth(rate, 1, rng() * INTERVAL, (k) => jitter[k]!), 0, DURATION, INTERVAL, rate);
    worst = Math.max(worst, g.slopePerS!);
    t.equal(g.growing, false, `run ${run}: commits 0.5–2.5 s after their barrier: slope ${g.slopePerS!.toFixed(0)}/s`);
  }
  t.ok(worst < LAG_GROWTH_SHARE * rate, `the worst jittery slope ${worst.toFixed(0)}/s stays under ${LAG_GROWTH_SHARE * rate}/s`);
});

t.test('a side committing 90 % of the offered rate is growing; 97 % is not', async (t) => {
  const rate = 100_000;
  const behind = lagGrowth(sawtooth(rate, 0.9, 3000, () => 1500), 0, DURATION, INTERVAL, rate);
  t.equal(behind.growing, true);
  t.ok(Math.abs(behind.slopePerS! - 0.1 * rate) < 0.01 * rate, `slope ${behind.slopePerS!.toFixed(0)}/s ≈ the 10 % deficit`);
  t.equal(behind.limitPerS, 5000);
  const close = lagGrowth(sawtooth(rate, 0.97, 3000, () => 1500), 0, DURATION, INTERVAL, rate);
  t.equal(close.growing, false, `3 % behind: slope ${close.slopePerS!.toFixed(0)}/s under the 5 % limit`);
});

t.test('the first quarter (warm-up) does not count; too short a rung is not judged', async (t) => {
  const rate = 100_000;
  // Slow first commits (5 s late, then 2.5, then on time from 16 s): not growing.
  const warm = sawtooth(rate, 1, 0, (k) => (k === 0 ? 5000 : k === 1 ? 2500 : 1500));
  const w = lagGrowth(warm, 0, DURATION, INTERVAL, rate);
  t.equal(w.growing, false, `slope ${w.slopePerS}`);
  t.equal(w.troughs, 7, 'windows from 22 s');
  const short = lagGrowth(sawtooth(rate, 0.5, 0, () => 1500), 0, 24_000, INTERVAL, rate);
  t.same([short.slopePerS, short.growing], [null, false], '18 s after the warm-up: one window, not judged');
  t.equal(short.troughs, 1);
});
