/**
 * The input audit's counting without Kafka (InputAuditTally): the four anomalies, and what
 * a tail that re-opens its stream may deliver again (counted once) or past the end (not
 * part of the audit). The Kafka side, tailing through a broker restart, is in
 * test/rig/oracle-input-audit.test.ts.
 */
import t from 'tap';
import { Generator } from '../../../oracle/generator.ts';
import { InputAuditTally } from '../../../oracle/input-audit.ts';

const spec = { seed: 'input-audit-unit', partitions: 2, keys: 100 };
const g = new Generator(spec);

t.test('a clean input: every offset holds its own event, read up to the end offsets', async (t) => {
  const tally = new InputAuditTally(spec);
  for (let s = 0; s < 50; s++) tally.add(0, s, g.line(0, s));
  for (let s = 0; s < 30; s++) tally.add(1, s, g.line(1, s));
  t.ok(tally.caughtUp([50, 30]));
  t.notOk(tally.caughtUp([51, 30]), 'one record short of partition 0 is not caught up');
  const a = tally.result('topic', [50, 30]);
  t.equal(a.records, 80);
  t.strictSame([a.duplicates, a.holes, a.mismatched, a.misplaced], [0, 0, 0, 0]);
  t.ok(a.clean, a.findings.join('; '));
  t.strictSame(a.perPartition.map((p) => [p.records, p.endOffset]), [[50, 50], [30, 30]]);
});

t.test('the anomalies planted in the rig test, counted the same without Kafka', async (t) => {
  // Ten events, then seq 5..9 again (a producer that did not resume), garbage, then seq 20.
  const one = { ...spec, partitions: 1 };
  const g1 = new Generator(one);
  const tally = new InputAuditTally(one);
  const values = [...Array.from({ length: 10 }, (_, s) => g1.line(0, s)), ...[5, 6, 7, 8, 9].map((s) => g1.line(0, s)), 'not an event', g1.line(0, 20)];
  values.forEach((v, offset) => tally.add(0, offset, v));
  const a = tally.result('bad', [17]);
  t.equal(a.records, 17);
  t.equal(a.duplicates, 5);
  t.equal(a.mismatched, 1);
  t.equal(a.holes, 10, 'seq 10..19 never appeared below seq 20');
  t.equal(a.misplaced, 6, 'five repeats and seq 20 are not at their own offset');
  t.notOk(a.clean);
  t.match(a.findings.join('\n'), /partition 0 offset 15: not a generated event/);
});

t.test("another partition's event is mismatched, not counted as this partition's", async (t) => {
  const tally = new InputAuditTally(spec);
  tally.add(0, 0, g.line(0, 0));
  tally.add(0, 1, g.line(1, 1));
  const a = tally.result('t', [2, 0]);
  t.equal(a.mismatched, 1);
  t.equal(a.holes, 0, 'partition 0 holds seq 0 only: nothing missing below it');
  t.notOk(a.clean, 'a mismatched record makes the input unclean');
});

t.test('a re-opened stream delivering offsets again is counted once; a skipped offset is not hidden', async (t) => {
  const tally = new InputAuditTally(spec);
  for (let s = 0; s < 20; s++) tally.add(0, s, g.line(0, s));
  // The stream re-opened at offset 20, but the broker delivered from 15 (a batch's start).
  for (let s = 15; s < 40; s++) tally.add(0, s, g.line(0, s));
  let a = tally.result('t', [40, 0]);
  t.equal(a.records, 40, 'offsets 15..19 are not counted twice');
  t.equal(a.duplicates, 0, 'and are no duplicates');
  t.ok(a.clean);
  // An offset the tail never delivered (it jumped from 39 to 41): the input is not clean.
  tally.add(0, 41, g.line(0, 41));
  a = tally.result('t', [42, 0]);
  t.equal(a.records, 41);
  t.equal(a.holes, 1, 'seq 40 missing below 41');
  t.notOk(a.clean, 'a record short of the end offset is reported');
  t.match(a.findings.join('\n'), /read 41 records, end offset 42/);
});

t.test('with a limit, records at or past the end offsets are not part of the audit', async (t) => {
  const tally = new InputAuditTally(spec, [10, 10]);
  for (let s = 0; s < 15; s++) tally.add(0, s, g.line(0, s));
  for (let s = 0; s < 10; s++) tally.add(1, s, g.line(1, s));
  t.equal(tally.read, 20);
  const a = tally.result('t', [10, 10]);
  t.ok(a.clean, a.findings.join('; '));
  t.equal(a.records, 20);
});

t.test('a partition outside the spec is ignored (a topic with more partitions than the campaign)', async (t) => {
  const tally = new InputAuditTally(spec);
  tally.add(2, 0, 'anything');
  t.equal(tally.read, 0);
});
