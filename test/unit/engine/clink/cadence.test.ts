import t from 'tap';
import { CheckpointCadence } from '../../../../engine/clink/cadence.ts';

/**
 * Walks the coordinator's looks from `from` to `to`, a barrier whenever one is due and none is
 * pending. A look comes 250 ms after the previous one plus `late(i)` ms (Node's setInterval
 * is rescheduled from when its callback ran, so under load each look is a little late).
 */
function looks(c: CheckpointCadence, from: number, to: number, pendingUntil: (at: number) => number = (at) => at, late: (i: number) => number = () => 0): number[] {
  const fired: number[] = [];
  let busyUntil = -1;
  for (let now = from, i = 0; now <= to; now += 250 + late(i++)) {
    if (now < busyUntil) continue;
    if (c.due(now)) {
      fired.push(now);
      busyUntil = pendingUntil(now);
    }
  }
  return fired;
}

t.test('before the job first runs nothing is due', async (t) => {
  const c = new CheckpointCadence(8000);
  t.equal(c.nextAt, Infinity);
  t.notOk(c.due(1e9));
});

t.test('the first barrier comes one interval after the job first runs, then on the grid', async (t) => {
  const c = new CheckpointCadence(8000);
  c.running(1000);
  t.equal(c.nextAt, 9000);
  t.notOk(c.due(8999));
  t.ok(c.due(9000));
  t.equal(c.nextAt, 17000);
});

t.test('late looks do not make the interval drift: 2 h at 8 s gives 900 barriers', async (t) => {
  const late = (i: number) => i % 5; // 0 to 4 ms late, 2 ms on average
  const end = 130 + 2 * 3600 * 1000 + 300; // the last slot, and the look that meets it
  const c = new CheckpointCadence(8000);
  c.running(130);
  const fired = looks(c, 250, end, undefined, late);
  t.equal(fired.length, 900, 'one barrier per slot');
  const gaps = fired.slice(1).map((at, i) => at - fired[i]!);
  t.ok(Math.max(...gaps) < 8260 && Math.min(...gaps) > 7740, `every gap within a look of 8 s (${Math.min(...gaps)} to ${Math.max(...gaps)} ms)`);
  // The rule it replaces (one interval after the previous trigger, seen at the next look) drifts.
  let last = 130;
  let old = 0;
  for (let now = 250, i = 0; now <= end; now += 250 + late(i++))
    if (now - last >= 8000) {
      last = now;
      old++;
    }
  t.ok(old < fired.length, `the rule it replaces fired ${old} times in the same 2 h`);
});

t.test('a checkpoint pending past its slot: the slot is skipped, not made up in a burst', async (t) => {
  const c = new CheckpointCadence(8000);
  c.running(0);
  // Each checkpoint takes 10 s to settle: the next is due at the first look after it settles.
  const fired = looks(c, 0, 40_000, (at) => at + 10_000);
  t.same(fired, [8000, 18000, 28000, 38000]);
  t.equal(c.nextAt, 40000, 'back on the grid');
});

t.test('after a recovery the next barrier is the first slot at least the minimum pause away', async (t) => {
  const c = new CheckpointCadence(8000, 1000);
  c.running(0);
  t.ok(c.due(8000));
  c.running(21_500); // the job ran again after a recovery
  t.equal(c.nextAt, 24000, 'slot 24 s, 2.5 s later, not a whole interval later');
  c.running(23_500);
  t.equal(c.nextAt, 32000, 'slot 24 s is only 0.5 s away: the next one');
  c.running(31_000);
  t.equal(c.nextAt, 32000, 'exactly the minimum pause away counts');
});

t.test('a non-positive interval is refused', async (t) => {
  t.throws(() => new CheckpointCadence(0), RangeError);
});
