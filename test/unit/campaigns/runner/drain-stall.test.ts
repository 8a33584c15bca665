/**
 * The drain's early end (campaigns/runner/drain-stall.ts): only on a run with a counter above
 * zero, only when neither objects nor events moved for the rule's time, and only when the
 * engine completed the rule's checkpoints meanwhile. Anything that moves starts the wait over.
 */
import t from 'tap';
import { DrainStall, drainStallRule } from '../../../../campaigns/runner/drain-stall.ts';
import { zeroCounters } from '../../../../lib/evidence.ts';

const rule = { minS: 15, checkpoints: 3 };
const unsafe = { ...zeroCounters(), gaps: 3604 };
const s = (events: number, checkpoints: number | undefined, counters = unsafe, objects = 68) => ({ objects, events, counters, checkpoints });

t.test('the rule the drain uses: 2.5 checkpoint intervals and 3 checkpoints (15 s in mutants.yaml, 6 s intervals)', async (t) => {
  t.same(drainStallRule(6), { minS: 15, checkpoints: 3 });
  t.same(drainStallRule(8), { minS: 20, checkpoints: 3 });
});

t.test('an unsafe run frozen for 15 s over 3 checkpoints stalls; not a moment before', async (t) => {
  const d = new DrainStall(rule);
  t.equal(d.observe(s(25732, 18), 0), false, 'the first sample only starts the wait');
  t.equal(d.observe(s(25732, 20), 6_000), false);
  t.equal(d.observe(s(25732, 26), 14_999), false, '14.999 s is not 15 s');
  t.equal(d.observe(s(25732, 27), 15_000), true, '15 s and 9 checkpoints');
  t.equal(d.stillS(15_000), 15);
});

t.test('too few checkpoints in the time: no stall (the engine may not be running)', async (t) => {
  const d = new DrainStall(rule);
  d.observe(s(100, 10), 0);
  t.equal(d.observe(s(100, 12), 30_000), false, 'two checkpoints in 30 s');
  t.equal(d.observe(s(100, 13), 32_000), true, 'the third');
  const none = new DrainStall(rule);
  none.observe(s(100, undefined), 0);
  t.equal(none.observe(s(100, undefined), 60_000), false, 'an engine that does not tell its checkpoints never stalls');
});

t.test('a run with every counter at zero never stalls: it waits for the deadline', async (t) => {
  const d = new DrainStall(rule);
  d.observe(s(100, 10, zeroCounters()), 0);
  t.equal(d.observe(s(100, 50, zeroCounters()), 60_000), false);
});

t.test('a new event or a new object starts the wait over', async (t) => {
  const d = new DrainStall(rule);
  d.observe(s(100, 10), 0);
  t.equal(d.observe(s(101, 14), 16_000), false, 'an event moved');
  t.equal(d.observe(s(101, 18), 30_000), false, 'only 14 s since it moved');
  t.equal(d.observe(s(101, 19, unsafe, 69), 31_000), false, 'an object moved (a duplicate adds no distinct event)');
  t.equal(d.observe(s(101, 22, unsafe, 69), 46_000), true, '15 s and 3 checkpoints after the last move');
});
