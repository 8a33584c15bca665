import t from 'tap';
import { describeShape, findingShapes, showingObject } from '../../../reports/finding-shape.ts';
import type { ChaosRecord } from '../../../lib/evidence.ts';
import type { Finding } from '../../../oracle/findings.ts';
import type { CheckpointSeen } from '../../../reports/evidence.ts';

const T = (s: number) => new Date(Date.UTC(2026, 7, 21, 10, 0, s)).toISOString();
const obj = (subtask: number, epoch: number, checkpoint: number, line: number) => ({ key: `runs/q/subtask=${subtask}/epoch=${epoch}/chk=${checkpoint}.jsonl`, line, subtask, epoch, checkpoint, firstSeen: null });
/** A one-event gap on partition p before the object (subtask, epoch, chk) at `line`. */
const gap = (n: number, total: number, p: number, seq: number, after: ReturnType<typeof obj>): Finding => ({
  counter: 'gaps', n, total, event: { p, seq }, objects: [obj(after.subtask!, after.epoch! - 1, after.checkpoint! - 1, 40), after], detail: `event (${p}, ${seq}) missing`,
});
// Epochs 1..4: epoch e begins at checkpoint 10e; each checkpoint i completes at T(i).
const checkpoints: CheckpointSeen[] = [1, 2, 3, 4].flatMap((e) => [0, 1, 2].map((k) => ({ id: 10 * e + k, epoch: e, at: T(10 * e + k) })));
const chaos: ChaosRecord[] = [2, 3, 4].flatMap((e) => [
  { t: T(10 * e - 2), faultId: `f${e}`, kind: 'worker-kill' as const, phase: 'landed' as const, target: 'worker-1' },
  { t: T(10 * e - 1), faultId: `f${e}`, kind: 'worker-kill' as const, phase: 'recovered' as const },
]);

t.test('sixteen-style gaps: one event each, one partition, each on the first line after an epoch change, after a worker kill', async (t) => {
  const fs = [2, 3, 4].map((e, i) => gap(i + 1, 16, 2, 100 * e, obj(1, e, 10 * e, 1)));
  const [s] = findingShapes(fs, checkpoints, chaos);
  t.equal(s!.kept, 3);
  t.equal(s!.oneEvent, true);
  t.same([...s!.partitions], [[2, 3]]);
  t.equal(s!.firstLineAfterEpochChange, 3);
  t.same([...s!.faultBefore], [['worker-kill', 3]]);
  const words = describeShape(s!)!;
  t.match(words, /^What the 3 kept findings of gaps \(of 16 in all; findings\.jsonl keeps the first 3\) share: each is one event; all on partition 2; all in objects of subtask 1; every one on the first line of the first object after an epoch change/);
  t.match(words, /the last fault to land before each one's checkpoint completed was a worker-kill\.$/);
});

t.test('findings that share less say only what they share, with counts', async (t) => {
  const fs: Finding[] = [
    gap(1, 2, 0, 5, obj(0, 2, 20, 1)), // first line, first checkpoint of epoch 2
    { ...gap(2, 2, 3, 9, obj(2, 3, 31, 7)), range: { from: 9, to: 12 } }, // mid-object, not an epoch's first checkpoint
  ];
  const [s] = findingShapes(fs, checkpoints, chaos);
  t.equal(s!.oneEvent, false);
  t.equal(s!.firstLineAfterEpochChange, 1);
  const words = describeShape(s!)!;
  t.notMatch(words, /each is one event/);
  t.match(words, /on partitions 0 \(1\), 3 \(1\)/);
  t.match(words, /1 of 2 in the first checkpoint of a new epoch/);
  t.match(words, /1 of 2 on the first line of its object/);
});

t.test("the epoch change comes from checkpoints.jsonl when the finding has no cause; a single finding has no shape to tell", async (t) => {
  const f = gap(1, 1, 1, 7, obj(0, 3, 30, 1));
  t.equal(f.cause, undefined);
  t.equal(findingShapes([f], checkpoints, chaos)[0]!.firstOfEpoch, 1);
  t.equal(describeShape(findingShapes([f], checkpoints, chaos)[0]!), null);
  t.equal(findingShapes([gap(1, 1, 1, 7, obj(0, 3, 31, 1))], checkpoints, chaos)[0]!.firstOfEpoch, 0, 'the second checkpoint of an epoch is no epoch change');
});

t.test('the object where a finding shows: the one after the hole, the later copy, else the first', async (t) => {
  const g = gap(1, 1, 0, 1, obj(0, 2, 20, 1));
  t.equal(showingObject(g)!.checkpoint, 20);
  t.equal(showingObject({ ...g, counter: 'corrupted' })!.checkpoint, 19);
});

t.test('findings that share nothing say so', async (t) => {
  const other = (n: number, key: string): Finding => ({ counter: 'corrupted', n, total: 2, event: null, objects: [{ key, line: null, subtask: null, epoch: null, checkpoint: null, firstSeen: null }], detail: `${key}: zero bytes` });
  const [s] = findingShapes([other(1, 'a/x.jsonl'), other(2, 'b/y.jsonl')], checkpoints, chaos);
  t.equal(describeShape(s!), 'The 2 kept findings of corrupted share no partition, position or preceding fault kind.');
});
