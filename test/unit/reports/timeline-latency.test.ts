/** Produce→visible latency per sample, from the produced and committed counts alone. */
import t from 'tap';
import { visibleLatency } from '../../../reports/timeline-latency.ts';

const T = Date.parse('2026-12-03T07:00:00.000Z');
const s = (sec: number, produced: number, events: number) => ({ t: new Date(T + sec * 1000).toISOString(), produced, events });

t.test('the time since the produced count first reached the committed count, interpolated between samples', async (t) => {
  // 100 events/s produced; commits lag 3 s behind until a stall from 20 s to 40 s.
  const samples = [s(0, 0, 0), s(10, 1000, 700), s(20, 2000, 1700), s(30, 3000, 1700), s(40, 4000, 1700), s(50, 5000, 4700)];
  const { points, leftOut } = visibleLatency(samples);
  t.same(
    points.map((p) => [(p.tMs - T) / 1000, p.latencyS]),
    [[10, 3], [20, 3], [30, 13], [40, 23], [50, 3]],
    'a stalled commit shows as latency growing one second a second',
  );
  t.equal(leftOut, 1, 'the first sample committed nothing');
});

t.test('left out: a count already reached at the first sample, a count above what was produced', async (t) => {
  const { points, leftOut } = visibleLatency([s(0, 500, 400), s(10, 1500, 1200), s(20, 2500, 2600)]);
  t.same(points.map((p) => p.latencyS), [3], 'only the middle sample: 1200 was reached at 7 s');
  t.equal(leftOut, 2);
});

t.test('a produced count that dips does not move the moment it was first reached', async (t) => {
  const { points } = visibleLatency([s(0, 0, 0), s(10, 1000, 0), s(20, 900, 500), s(30, 2000, 1000)]);
  t.same(points.map((p) => [(p.tMs - T) / 1000, p.latencyS]), [[20, 15], [30, 20]]);
});
