/**
 * The climb to a side's maximum (bench/climb.ts) against fake rungs: a monotone limit, a
 * limit below the start rate, a limit above the producer's ceiling (with and without the
 * ceiling given), a lucky pass caught by the confirmation, noisy rungs over many seeds, and
 * the rung budget.
 */
import t from 'tap';
import seedrandom from 'seedrandom';
import { climb, describeClimb, nextRate, roundRate, type ClimbOptions, type RungOutcome } from '../../../bench/climb.ts';

const OPTS: ClimbOptions = { start: 40_000, resolution: 0.05, maxRungs: 20, confirmations: 1, step: 1000 };

/** A side that keeps up at and below `limit`, behind above it; a producer that reaches `producerMax`. */
function fakeSide(limit: number, producerMax = Infinity) {
  const offered: number[] = [];
  const rung = async (rate: number): Promise<RungOutcome> => {
    offered.push(rate);
    if (rate > producerMax) return { offered: rate, ok: false, producerBound: true };
    return { offered: rate, ok: rate <= limit, producerBound: false };
  };
  return { rung, offered };
}

t.test('a monotone limit: doubling, then bisection to the resolution, the maximum confirmed', async (t) => {
  const limit = 123_456;
  const side = fakeSide(limit);
  const c = await climb(side.rung, OPTS);
  t.same(side.offered.slice(0, 3), [40_000, 80_000, 160_000], 'doubles from the start until a rung fails');
  t.equal(c.determined, true);
  t.equal(c.stop, 'resolved');
  t.ok(c.max! <= limit && c.firstFail! > limit, `the limit lies in [${c.max}, ${c.firstFail})`);
  t.ok((c.firstFail! - c.max!) / c.max! <= OPTS.resolution, 'within the resolution');
  t.equal(c.maxPasses, 2, 'the maximum passed again (one confirmation)');
  t.equal(c.maxRung?.offered, c.max);
  t.equal(c.producerCap, null);
  t.ok(side.offered.every((r) => r % 1000 === 0), 'every rate a multiple of the step');
  t.equal(side.offered.length, c.rungs.length);
  t.ok(c.rungs.length <= 10, `${c.rungs.length} rungs`);
  t.match(describeClimb('clink', c, OPTS), new RegExp(`^clink: max ${c.max} events/s \\(passed 2×\\); the lowest rate not passed ${c.firstFail} events/s \\(fell behind\\), \\d+\\.\\d % above; determined; stopped: resolved`));

  const finer = await climb(fakeSide(limit).rung, { ...OPTS, resolution: 0.01 });
  t.ok((finer.firstFail! - finer.max!) / finer.max! <= 0.01 && finer.rungs.length > c.rungs.length, 'a finer resolution takes more rungs and gets closer');
});

t.test('a limit below the start rate: halves until a rung passes, then bisects', async (t) => {
  const side = fakeSide(7_300);
  const c = await climb(side.rung, OPTS);
  t.same(side.offered.slice(0, 4), [40_000, 20_000, 10_000, 5_000]);
  t.equal(c.determined, true);
  t.ok(c.max! <= 7_300 && c.firstFail! > 7_300, `[${c.max}, ${c.firstFail})`);
  t.ok((c.firstFail! - c.max!) / c.max! <= 0.2, 'the step (1000) bounds the resolution at low rates');

  const none = await climb(fakeSide(500).rung, OPTS);
  t.same([none.max, none.determined, none.stop], [null, false, 'no-pass'], 'nothing passes at the step: no maximum');
  t.same(none.rungs.map((r) => r.offered), [40_000, 20_000, 10_000, 5_000, 2_000, 1_000]);
});

t.test("a limit above the producer's ceiling: never a determined maximum, never a producer-bound rung counted as the side's limit", async (t) => {
  const side = fakeSide(300_000, 100_000);
  const c = await climb(side.rung, OPTS);
  t.equal(c.determined, false, 'the producer bounded the climb');
  t.equal(c.firstFail, null, 'no rung fell behind');
  t.ok(c.max! <= 100_000 && c.producerCap! > 100_000, `max ${c.max}, producer-bound from ${c.producerCap}`);
  t.ok((c.producerCap! - c.max!) / c.max! <= OPTS.resolution, 'the bracket still narrowed: max is a tight lower bound');
  t.match(describeClimb('baseline', c, OPTS), /producer-bound\).*NOT determined: the producer was the bound/);

  const capped = fakeSide(300_000, 100_000);
  const k = await climb(capped.rung, { ...OPTS, ceiling: 100_000 });
  t.same(capped.offered, [40_000, 80_000, 100_000], 'with the ceiling given: doubling stops at it, nothing above it offered');
  t.same([k.max, k.determined, k.stop], [100_000, false, 'ceiling']);
  t.match(describeClimb('clink', k, OPTS), /reached the producer's ceiling/);

  // A side limit below the producer's: determined, even with a producer-bound rung higher up.
  const both = await climb(fakeSide(90_000, 150_000).rung, { ...OPTS, start: 100_000 });
  t.equal(both.determined, true);
  t.ok(both.max! <= 90_000 && both.firstFail! > 90_000);

  // The producer bound below a real failure: the failure is above the top, so not determined.
  const seq: RungOutcome[] = [];
  const mixed = await climb(async (rate) => {
    const r = { offered: rate, ok: rate <= 50_000, producerBound: rate === 60_000 };
    seq.push(r);
    return r;
  }, { ...OPTS, start: 30_000, step: 10_000 });
  t.same(seq.map((r) => r.offered), [30_000, 60_000, 50_000, 50_000], '60000 producer-bound bounds the bisection (the step cannot split 50000 and 60000), 50000 is confirmed');
  t.same([mixed.max, mixed.firstFail, mixed.producerCap, mixed.determined], [50_000, null, 60_000, false]);
});

t.test('a lucky pass above the limit is caught by the confirmation', async (t) => {
  const ran = new Map<number, number>();
  const c = await climb(
    async (rate) => {
      ran.set(rate, (ran.get(rate) ?? 0) + 1);
      // Limit 200; 250 passes the first time it is offered only.
      return { offered: rate, ok: rate <= 200 || (rate === 250 && ran.get(rate) === 1), producerBound: false };
    },
    { start: 100, resolution: 0.05, maxRungs: 20, confirmations: 1, step: 1 },
  );
  t.equal(ran.get(250), 2, '250 offered again to confirm it, and it failed');
  t.equal(c.max, 200, 'the maximum fell back to the highest confirmed rate');
  t.ok(c.firstFail! <= 210, `and the bisection resumed below 250 (${c.firstFail})`);
  t.equal(c.maxPasses, 2);
  t.equal(c.determined, true);

  const unconfirmed = await climb(fakeSide(200).rung, { start: 100, resolution: 0.05, maxRungs: 20, confirmations: 0, step: 1 });
  t.equal(unconfirmed.maxPasses, 1, 'confirmations 0: passed once is enough');
});

t.test('noisy rungs: near the limit a rung flips at random; the search still brackets it', async (t) => {
  const limit = 150_000;
  let resolved = 0;
  for (let seed = 0; seed < 60; seed++) {
    const rng = seedrandom(`climb-noise-${seed}`);
    const seen: RungOutcome[] = [];
    const c = await climb(async (rate) => {
      const near = Math.abs(rate - limit) <= 0.1 * limit;
      const truth = rate <= limit;
      const r = { offered: rate, ok: near && rng() < 0.3 ? !truth : truth, producerBound: false };
      seen.push(r);
      return r;
    }, OPTS);
    t.ok(c.rungs.length <= OPTS.maxRungs, `seed ${seed}: within the budget`);
    if (c.max === null) continue;
    // No rung at or above the lowest failure ever raises the maximum; the maximum passed every time it was offered after the bracket closed.
    t.ok(c.firstFail === null || c.max < c.firstFail, `seed ${seed}: max ${c.max} below the lowest failure ${c.firstFail}`);
    t.ok(c.max <= 1.1 * limit, `seed ${seed}: the maximum ${c.max} is not above where noise can pass`);
    if (c.firstFail !== null) t.ok(c.firstFail >= 0.9 * limit, `seed ${seed}: no failure where noise cannot fail (${c.firstFail})`);
    t.equal(c.maxPasses, seen.filter((r) => r.offered === c.max && r.ok).length);
    if (c.stop === 'resolved') {
      resolved++;
      t.ok(c.maxPasses >= 2, `seed ${seed}: the maximum confirmed`);
      t.ok(c.determined);
    }
  }
  t.ok(resolved >= 50, `most seeds resolve within 20 rungs (${resolved}/60)`);
});

t.test('the rung budget stops the climb with what it has', async (t) => {
  const high = await climb(fakeSide(1e9).rung, { ...OPTS, maxRungs: 3 });
  t.same(high.rungs.map((r) => r.offered), [40_000, 80_000, 160_000]);
  t.same([high.max, high.determined, high.stop], [160_000, false, 'budget'], 'no failure seen: not determined');
  const found = await climb(fakeSide(100_000).rung, { ...OPTS, maxRungs: 4 });
  t.same([found.max, found.firstFail, found.determined, found.stop], [80_000, 120_000, true, 'budget'], 'a failure above a pass: determined, at a coarser resolution, unconfirmed');
  t.equal(found.maxPasses, 1);
  await t.rejects(climb(fakeSide(1).rung, { ...OPTS, start: 0 }), /unusable options/);
  await t.rejects(climb(fakeSide(1).rung, { ...OPTS, resolution: 0 }), /unusable options/);
});

t.test('next rate and rounding', async (t) => {
  t.equal(roundRate(12_345, 1000), 12_000);
  t.equal(roundRate(12_500, 1000), 13_000);
  t.equal(roundRate(10, 1000), 1000, 'never below the step');
  const s = (lo: number | null, firstFail: number | null = null, producerCap: number | null = null, passesAtLo = 1) => ({ lo, firstFail, producerCap, passesAtLo });
  t.same(nextRate(s(null), OPTS), { rate: 40_000 });
  t.same(nextRate(s(null), { ...OPTS, ceiling: 25_000 }), { rate: 25_000 }, 'the start is not above the ceiling');
  t.same(nextRate(s(40_000), OPTS), { rate: 80_000 });
  t.same(nextRate(s(80_000), { ...OPTS, ceiling: 100_000 }), { rate: 100_000 });
  t.same(nextRate(s(100_000), { ...OPTS, ceiling: 100_000 }), { stop: 'ceiling' });
  t.same(nextRate(s(80_000, 160_000), OPTS), { rate: 120_000 });
  t.same(nextRate(s(80_000, null, 100_000), OPTS), { rate: 90_000 }, 'a producer-bound rung bounds like a failure');
  t.same(nextRate(s(100_000, 104_000), OPTS), { rate: 100_000 }, 'within 5 %: confirm');
  t.same(nextRate(s(100_000, 104_000, null, 2), OPTS), { stop: 'resolved' });
  t.same(nextRate(s(100_000, 101_000), OPTS), { rate: 100_000 }, 'the step cannot split them: confirm');
  t.same(nextRate(s(null, 40_000), OPTS), { rate: 20_000 });
  t.same(nextRate(s(null, 1_500), OPTS), { stop: 'no-pass' });
});
