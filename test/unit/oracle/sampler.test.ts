/**
 * oracle/sampler.ts's periodic loop: a sample every interval; wake() starts the next one now
 * (the gate waits on it for the first committed objects); stop() ends the loop. A judge that
 * only counts its passes stands in for the store (judge.sampler-retry.test.ts drives a real
 * one against a loopback server).
 */
import t from 'tap';
import { Sampler } from '../../../oracle/sampler.ts';
import { sleep } from '../../../lib/sleep.ts';

function counting(): { passes: number; judge: never } {
  const c = { passes: 0, judge: undefined as never };
  c.judge = { pass: async () => void c.passes++, objects: 0, tally: { distinct: 0, counters: () => ({}) } } as never;
  return c;
}

t.test('wake(): the next sample at once, not at the interval', async (t) => {
  const c = counting();
  const s = new Sampler({ judge: c.judge, produced: () => [0], intervalMs: 60_000 });
  s.start();
  t.teardown(() => s.stop());
  await sleep(100);
  t.equal(c.passes, 1, 'the first sample at the start');
  await sleep(300);
  t.equal(c.passes, 1, 'then none until the interval ends');
  s.wake();
  await sleep(100);
  t.equal(c.passes, 2, 'woken: one more at once');
  await sleep(300);
  t.equal(c.passes, 2, 'and then the interval again');
  s.wake();
  s.wake();
  await sleep(100);
  t.equal(c.passes, 3, 'two wakes during one wait: one sample');
  await s.stop();
  s.wake();
  await sleep(100);
  t.equal(c.passes, 3, 'after stop(): nothing');
  t.equal(s.samples, 3);
});

t.test('wake() before start() changes nothing', async (t) => {
  const c = counting();
  const s = new Sampler({ judge: c.judge, produced: () => [0], intervalMs: 60_000 });
  s.wake();
  await sleep(50);
  t.equal(c.passes, 0);
});
