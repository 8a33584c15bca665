import t from 'tap';
import { describeSampleErrorTiming, sampleErrorTiming } from '../../../reports/sample-errors.ts';
import type { RunEvidence } from '../../../reports/evidence.ts';
import type { FaultOutcome } from '../../../reports/faults.ts';
import type { Sample } from '../../../lib/evidence.ts';

const T0 = Date.parse('2026-12-01T10:00:00Z');
const at = (s: number) => new Date(T0 + s * 1000).toISOString();
const sample = (s: number, errors: number) => ({ t: at(s), errors }) as unknown as Sample;
const ev = (samples: Sample[]) => ({ samples }) as unknown as RunEvidence;
const window = (kind: FaultOutcome['kind'], from: number, to: number): FaultOutcome => ({ id: kind, kind, status: 'survived', landedAt: at(from), healedAt: at(to) });

t.test("each sample's errors are placed by the interval it covers: a store outage first, then other faults, else outside", async (t) => {
  const samples = [sample(0, 0), sample(10, 2), sample(20, 1), sample(30, 3), sample(40, 0), sample(50, 1)];
  const faults = [window('store-outage', 12, 18), window('partition', 15, 35)];
  const x = sampleErrorTiming(ev(samples), faults);
  // (0,10]: no window; (10,20]: the outage (and the partition: the outage wins); (20,30]: the partition; (40,50]: none.
  t.same(x, { errors: 7, samples: 4, byKind: [{ kind: 'store-outage', errors: 1 }, { kind: 'partition', errors: 3 }], outside: 3 });
  t.equal(describeSampleErrorTiming(x), '1 of 7 inside a store-outage window, 3 inside a partition window and 3 outside any fault window');
});

t.test('no errors, or all outside', async (t) => {
  t.equal(describeSampleErrorTiming(sampleErrorTiming(ev([sample(10, 0)]), [])), 'none');
  t.equal(describeSampleErrorTiming(sampleErrorTiming(ev([sample(0, 0), sample(10, 2)]), [window('store-outage', 30, 40)])), '2 of 2 outside any fault window');
});
