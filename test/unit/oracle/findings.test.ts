import t from 'tap';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FindingsCollector, attributeCauses, describeCounter, findingsPathFor, readFindings, unplaced, verifyOutPath, writeFindings } from '../../../oracle/findings.ts';
import { zeroCounters, type Counters } from '../../../lib/evidence.ts';
import type { BodyJudgement } from '../../../oracle/tally.ts';
import { clinkPlaceOfObject } from '../../../engine/clink/tamper.ts';

const body = (runs: number[], extra: Partial<BodyJudgement> = {}): BodyJudgement => {
  let events = 0;
  for (let i = 2; i < runs.length; i += 3) events += runs[i]!;
  return { lines: events, events, foreign: 0, unparsable: 0, corrupted: false, runs, ...extra };
};
const counters = (o: Partial<Counters>): Counters => ({ ...zeroCounters(), ...o });
const K = (s: number, e: number, c: number) => `runs/x/subtask=${s}/epoch=${e}/chk=${c}.jsonl`;

t.test('place of an object: as the engine reads its key (Clink here); without an engine, nothing is placed', async (t) => {
  const placed = new FindingsCollector(5, clinkPlaceOfObject);
  const bare = new FindingsCollector(5);
  for (const c of [placed, bare]) {
    c.add(K(2, 3, 41), body([0, 0, 2]));
    c.add('out/part-0001.jsonl', body([0, 1, 1]));
  }
  const dup = (c: FindingsCollector) => c.finish(counters({ duplicates: 1 }), [2])[0]!.objects;
  t.same(dup(placed).map(({ subtask, epoch, checkpoint }) => ({ subtask, epoch, checkpoint })), [
    { subtask: 2, epoch: 3, checkpoint: 41 },
    { subtask: null, epoch: null, checkpoint: null },
  ]);
  t.same(dup(bare).map(({ subtask, epoch, checkpoint }) => ({ subtask, epoch, checkpoint })), [
    { subtask: null, epoch: null, checkpoint: null },
    { subtask: null, epoch: null, checkpoint: null },
  ], 'the oracle reads no engine\'s keys by itself');
  t.same(unplaced(K(2, 3, 41)), { subtask: null, epoch: null, checkpoint: null });
});

t.test('planted duplicates, a gap, a past-produced tail, a foreign line and a mutation are found where they are', async (t) => {
  const c = new FindingsCollector(5, clinkPlaceOfObject);
  // Partition 0: 0..9 in chk 1, 10..19 in chk 2; chk 5 (epoch 2) re-commits 15..24: 15..19 are duplicates.
  c.add(K(0, 1, 1), body([0, 0, 10]));
  c.add(K(0, 1, 2), body([0, 10, 10]));
  c.add(K(0, 2, 5), body([0, 15, 10]));
  // Partition 1: 0..4 then 8..11: 5..7 missing; produced 11 so seq 11 is past produced. Mixed with partition 0 lines.
  c.add(K(1, 1, 1), body([1, 0, 5, 0, 25, 2, 1, 8, 4]));
  c.add('runs/x/stray.jsonl', body([], { lines: 3, events: 0, foreign: 3, firstProblem: 'runs/x/stray.jsonl line 2: foreign (no p)' }));
  c.addMutation(K(0, 1, 2), 'mutation: gone');
  const total = counters({ duplicates: 5, gaps: 3, pastProduced: 1, foreign: 3, mutations: 1 });
  const fs = c.finish(total, [27, 11], new Map([[K(0, 2, 5), '2026-12-03T07:00:00.000Z']]));
  const dup = fs.filter((f) => f.counter === 'duplicates');
  t.equal(dup.length, 1);
  t.same(dup[0]!.event, { p: 0, seq: 15 });
  t.same(dup[0]!.range, { from: 15, to: 20 });
  t.same(dup[0]!.objects.map((o) => [o.key, o.line, o.epoch, o.checkpoint, o.subtask]), [[K(0, 1, 2), 6, 1, 2, 0], [K(0, 2, 5), 1, 2, 5, 0]]);
  t.equal(dup[0]!.objects[1]!.firstSeen, '2026-12-03T07:00:00.000Z');
  t.equal(dup[0]!.total, 5);
  const gap = fs.filter((f) => f.counter === 'gaps');
  t.same(gap.map((g) => [g.event, g.range]), [[{ p: 1, seq: 5 }, { from: 5, to: 8 }]]);
  t.same(gap[0]!.objects.map((o) => [o.key, o.line]), [[K(1, 1, 1), 5], [K(1, 1, 1), 8]], 'the lines on either side of the hole (after 2 lines of partition 0)');
  const past = fs.filter((f) => f.counter === 'pastProduced');
  t.same(past.map((f) => [f.event, f.objects[0]!.line]), [[{ p: 1, seq: 11 }, 11]]);
  t.same(fs.filter((f) => f.counter === 'foreign').map((f) => [f.objects[0]!.key, f.objects[0]!.line]), [['runs/x/stray.jsonl', 2]]);
  t.same(fs.filter((f) => f.counter === 'mutations').map((f) => f.objects[0]!.checkpoint), [2]);
  t.equal(fs.filter((f) => f.counter === 'corrupted').length, 0);
});

t.test('the cap keeps at most N per counter while every line carries the total', async (t) => {
  const c = new FindingsCollector(3, clinkPlaceOfObject);
  for (let i = 0; i < 10; i++) c.add(K(0, 1, i + 1), body([0, 0, 2]));
  const fs = c.finish(counters({ duplicates: 18 }), [2]);
  t.equal(fs.length, 3);
  t.same(fs.map((f) => [f.n, f.total]), [[1, 18], [2, 18], [3, 18]]);
});

t.test('causes: the faults that landed before the checkpoint, nearest first, and the epoch change', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cq-findings-'));
  writeFileSync(path.join(dir, 'checkpoints.jsonl'), [
    { id: 1, epoch: 1, at: '2026-12-03T07:00:06.000Z' },
    { id: 2, epoch: 1, at: '2026-12-03T07:00:12.000Z' },
    { id: 5, epoch: 2, at: '2026-12-03T07:00:40.000Z' },
  ].map((x) => JSON.stringify(x)).join('\n') + '\n');
  writeFileSync(path.join(dir, 'chaos.jsonl'), [
    { t: '2026-12-03T07:00:01.000Z', faultId: 'f001', kind: 'worker-kill', target: 'worker-1', phase: 'landed' },
    { t: '2026-12-03T07:00:05.000Z', faultId: 'f001', kind: 'worker-kill', target: 'worker-1', phase: 'recovered' },
    { t: '2026-12-03T07:00:20.000Z', faultId: 'f002', kind: 'partition', target: 'worker-2', phase: 'landed' },
    { t: '2026-12-03T07:00:30.000Z', faultId: 'f002', kind: 'partition', target: 'worker-2', phase: 'healed' },
    { t: '2026-12-03T07:00:50.000Z', faultId: 'f003', kind: 'store-outage', target: 'store', phase: 'landed' },
  ].map((x) => JSON.stringify(x)).join('\n') + '\n');
  const c = new FindingsCollector(undefined, clinkPlaceOfObject);
  c.add(K(0, 1, 2), body([0, 0, 10]));
  c.add(K(0, 2, 5), body([0, 5, 10]));
  const fs = attributeCauses(c.finish(counters({ duplicates: 5 }), [15]), dir);
  const cause = fs[0]!.cause!;
  t.same(cause.checkpoint, { id: 5, at: '2026-12-03T07:00:40.000Z', epoch: 2 });
  t.same(cause.faults.map((f) => [f.faultId, f.beforeCheckpointS, f.recovered]), [['f002', 20, '2026-12-03T07:00:30.000Z'], ['f001', 39, '2026-12-03T07:00:05.000Z']], 'f003 landed after the checkpoint: not a cause');
  t.same(cause.epochChange, { epoch: 2, previousEpoch: 1, firstCheckpoint: 5, at: '2026-12-03T07:00:40.000Z' });
  t.match(describeCounter('duplicates', fs), /duplicates = 5 .*nearest fault before its checkpoint 5 .* f002 \(partition on worker-2\), landed 20 s earlier.*epoch 2, which began at checkpoint 5/);
  const file = path.join(dir, 'findings.jsonl');
  writeFindings(file, fs);
  t.same(readFindings(file), fs, 'round trip through findings.jsonl');
});

t.test('verify RUN_DIR never overwrites a stored recount; findings go beside the recount', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cq-findings-'));
  t.equal(verifyOutPath(dir), path.join(dir, 'recount.json'), 'the runner\'s first recount');
  writeFileSync(path.join(dir, 'recount.json'), '{}');
  const now = new Date('2026-12-03T07:30:00.000Z');
  const p = verifyOutPath(dir, now);
  t.equal(p, path.join(dir, 'recount.verify-20261203T073000.json'));
  writeFileSync(p, '{}');
  t.equal(verifyOutPath(dir, now), path.join(dir, 'recount.verify-20261203T073000-2.json'));
  t.equal(findingsPathFor(path.join(dir, 'recount.json')), path.join(dir, 'findings.jsonl'));
  t.equal(findingsPathFor(p), path.join(dir, 'findings.verify-20261203T073000.jsonl'));
});

t.test('an object of a checkpoint with no recorded completion is timed by the next completed one', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cq-findings-'));
  writeFileSync(path.join(dir, 'checkpoints.jsonl'), [{ id: 3, epoch: 1, at: '2026-12-03T07:00:10.000Z' }, { id: 6, epoch: 2, at: '2026-12-03T07:00:30.000Z' }].map((x) => JSON.stringify(x)).join('\n') + '\n');
  writeFileSync(path.join(dir, 'chaos.jsonl'), JSON.stringify({ t: '2026-12-03T07:00:20.000Z', faultId: 'f001', kind: 'partition', target: 'worker-1', phase: 'landed' }) + '\n');
  const c = new FindingsCollector(undefined, clinkPlaceOfObject);
  c.add(K(0, 1, 3), body([0, 0, 10]));
  c.add(K(0, 1, 4), body([0, 5, 10]));
  const [f] = attributeCauses(c.finish(counters({ duplicates: 5 }), [15]), dir);
  t.same(f!.cause!.checkpoint, { id: 4, at: '2026-12-03T07:00:30.000Z', epoch: 1, timeOf: 6, timedBy: 'next checkpoint' });
  t.same(f!.cause!.faults.map((w) => [w.faultId, w.beforeCheckpointS, w.recovered]), [['f001', 10, null]]);
  t.match(describeCounter('duplicates', [f!]), /checkpoint 4 \(not recorded as completed; timed by checkpoint 6\) completed is f001 .* and never recovered/);
});

t.test('a zombie commit (an invented checkpoint id, no later completion) is timed by the oracle\'s first sight of the object', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cq-findings-'));
  writeFileSync(path.join(dir, 'checkpoints.jsonl'), JSON.stringify({ id: 3, epoch: 1, at: '2026-12-03T07:00:10.000Z' }) + '\n');
  writeFileSync(path.join(dir, 'chaos.jsonl'), [
    { t: '2026-12-03T07:00:20.000Z', faultId: 'f001', kind: 'partition', target: 'worker-1', phase: 'landed' },
    { t: '2026-12-03T07:00:50.000Z', faultId: 'f002', kind: 'worker-kill', target: 'worker-2', phase: 'landed' },
  ].map((x) => JSON.stringify(x)).join('\n') + '\n');
  const zombie = K(0, 1, 1_000_000_007);
  const c = new FindingsCollector(undefined, clinkPlaceOfObject);
  c.add(K(0, 1, 3), body([0, 0, 10]));
  c.add(zombie, body([0, 5, 10]));
  const [f] = attributeCauses(c.finish(counters({ duplicates: 5 }), [15], new Map([[zombie, '2026-12-03T07:00:35.000Z']])), dir);
  t.same(f!.cause!.checkpoint, { id: 1_000_000_007, at: '2026-12-03T07:00:35.000Z', epoch: 1, timedBy: 'oracle first sight' });
  t.same(f!.cause!.faults.map((w) => w.faultId), ['f001'], 'the kill after the object appeared is not a suspect');
  t.match(describeCounter('duplicates', [f!]), /timed by the oracle's first sight of the object\) completed is f001 \(partition on worker-1\), landed 15 s earlier/);
});

t.test('causes are timed on the harness clock: a checkpoint stamped by a stepped engine clock is placed where the harness saw it', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cq-findings-'));
  // The coordinator's clock was stepped an hour ahead: its stamps are 07:59:xx, the harness saw them at 07:00:xx.
  writeFileSync(path.join(dir, 'checkpoints.jsonl'), [
    { id: 1, epoch: 1, at: '2026-12-03T07:00:06.000Z', seenAt: '2026-12-03T07:00:07.000Z' },
    { id: 5, epoch: 2, at: '2026-12-03T07:59:40.000Z', seenAt: '2026-12-03T07:00:41.000Z' },
  ].map((x) => JSON.stringify(x)).join('\n') + '\n');
  writeFileSync(path.join(dir, 'chaos.jsonl'), [
    { t: '2026-12-03T07:00:20.000Z', faultId: 'f001', kind: 'partition', target: 'worker-2', phase: 'landed' },
    { t: '2026-12-03T07:00:50.000Z', faultId: 'f002', kind: 'store-outage', target: 'store', phase: 'landed' },
  ].map((x) => JSON.stringify(x)).join('\n') + '\n');
  const c = new FindingsCollector(undefined, clinkPlaceOfObject);
  c.add(K(0, 1, 1), body([0, 0, 10]));
  c.add(K(0, 2, 5), body([0, 5, 10]));
  const [f] = attributeCauses(c.finish(counters({ duplicates: 5 }), [15]), dir);
  t.equal(f!.cause!.checkpoint.at, '2026-12-03T07:00:41.000Z', 'the harness sighting, not the stepped stamp');
  t.same(f!.cause!.faults.map((w) => [w.faultId, w.beforeCheckpointS]), [['f001', 21]], 'f002 landed after the checkpoint on the harness clock: not a suspect (on the engine stamp it would be)');
  t.equal(f!.cause!.epochChange!.at, '2026-12-03T07:00:41.000Z');
});
