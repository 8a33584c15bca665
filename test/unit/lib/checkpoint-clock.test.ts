/** Where the timeline puts a checkpoint: the engine's stamp when the harness's sighting agrees with it, else the sighting. */
import t from 'tap';
import { checkpointHarnessMs, checkpointTimes, SEEN_WINDOW_MS } from '../../../lib/checkpoint-clock.ts';

const T = Date.parse('2026-12-03T07:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();

t.test('a stamp that agrees with when the harness saw the checkpoint is used as it is', async (t) => {
  t.same(checkpointHarnessMs({ at: iso(T - 1500), seenAt: iso(T) }), { ms: T - 1500, clock: 'engine stamp' });
  t.same(checkpointHarnessMs({ at: iso(T + 800), seenAt: iso(T) }), { ms: T + 800, clock: 'engine stamp' }, 'up to 1 s ahead of the sighting (hosts differ a little)');
});

t.test("a stepped engine clock: the harness's sighting instead", async (t) => {
  t.same(checkpointHarnessMs({ at: iso(T - 120_000), seenAt: iso(T) }), { ms: T, clock: 'harness saw it' }, '120 s back');
  t.same(checkpointHarnessMs({ at: iso(T + 5000), seenAt: iso(T) }), { ms: T, clock: 'harness saw it' }, 'ahead of the sighting');
  t.same(checkpointHarnessMs({ at: iso(T - SEEN_WINDOW_MS - 1), seenAt: iso(T) }).clock, 'harness saw it');
});

t.test('evidence without seenAt falls back to the engine stamp and says so', async (t) => {
  const r = checkpointTimes([{ at: iso(T) }, { at: iso(T + 8000), seenAt: iso(T + 9000) }, { at: 'garbage' }]);
  t.same(r.ms, [T, T + 8000]);
  t.same(r.byClock, { 'engine stamp': 1, 'harness saw it': 0, 'engine clock, unchecked': 1 });
});
