import t from 'tap';
import { Generator } from '../../../oracle/generator.ts';
import { EventTally } from '../../../oracle/tally.ts';

const g = new Generator({ seed: 'tally', partitions: 2, keys: 10 });
const body = (lines: string[], nl = true) => Buffer.from(lines.join('\n') + (nl ? '\n' : ''));
const ev = (p: number, from: number, to: number) => Array.from({ length: to - from }, (_, i) => g.line(p, from + i));

t.test('definitions on in-memory objects', async (t) => {
  const tally = new EventTally(g);
  tally.addObject('a', body(ev(0, 0, 10)));
  tally.addObject('b', body([...ev(1, 0, 5), g.line(1, 2)]));
  tally.addObject('c', body(ev(0, 12, 13), false));
  tally.addObject('d', Buffer.alloc(0));
  tally.addObject('e', body([g.line(5, 1), 'garbage', g.line(1, 5)]));
  tally.addObject('f', body([g.line(0, 1e15)]));
  const c = tally.counters([20, 8]);
  t.strictSame(c, { duplicates: 1, gaps: 2 + 0, foreign: 1, corrupted: 2, mutations: 0, pastProduced: 1 });
  const f = tally.figures([20, 8]);
  t.strictSame(f.map((x) => [x.distinct, x.highestSeq, x.gaps, x.pastProduced]), [[12, 1e15, 2, 1], [6, 5, 0, 0]]);
  t.equal(tally.lines, 10 + 6 + 1 + 3 + 1);
  t.ok(tally.bitsetBytes < 1_000_000, 'a fabricated seq of 10^15 does not grow the bitset');
});

t.test('gaps and pastProduced follow the produced counts given', async (t) => {
  const tally = new EventTally(g);
  tally.addObject('a', body([...ev(0, 0, 3), ...ev(0, 6, 8)]));
  t.equal(tally.counters([8, 0]).gaps, 3);
  t.equal(tally.counters([5, 0]).gaps, 0, 'below produced=5 the highest is 2: no hole below it');
  t.equal(tally.counters([5, 0]).pastProduced, 2);
  t.equal(tally.counters().pastProduced, 0, 'produced unknown: nothing is past it');
});

t.test('settled (the recount): a missing tail up to produced is counted as gaps; live it is only lag', async (t) => {
  const empty = new EventTally(g);
  t.equal(empty.counters([1, 1]).gaps, 0, 'live: an empty bucket is lag, not a gap');
  t.equal(empty.counters([1, 1], { settled: true }).gaps, 2, 'settled: an empty bucket with produced 1,1 has 2 gaps');
  const tally = new EventTally(g);
  tally.addObject('a', body([...ev(0, 0, 3), ...ev(0, 6, 8), ...ev(1, 0, 4)]));
  t.equal(tally.counters([8, 4]).gaps, 3);
  t.equal(tally.counters([10, 6], { settled: true }).gaps, 3 + 2 + 2, 'holes 3-5, tails 8-9 and 4-5');
  t.same(tally.figures([10, 6], { settled: true }).map((f) => f.gaps), [5, 2]);
  t.equal(tally.counters([8, 4], { settled: true }).gaps, 3, 'everything produced committed but the hole: no tail');
  const clean = new EventTally(g);
  clean.addObject('a', body([...ev(0, 0, 5), ...ev(1, 0, 2)]));
  t.strictSame(clean.counters([5, 2], { settled: true }), { duplicates: 0, gaps: 0, foreign: 0, corrupted: 0, mutations: 0, pastProduced: 0 }, 'a clean settled run still reads 0');
  t.equal(clean.counters([5, 2], { settled: true, }).pastProduced, 0);
  t.equal(clean.counters([4, 2], { settled: true }).pastProduced, 1, 'past produced is not a gap');
  t.equal(clean.counters([4, 2], { settled: true }).gaps, 0);
});
