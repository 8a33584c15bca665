/**
 * The pure parts of the store-tamper fault (chaos/store-tamper.ts): which object it picks,
 * the foreign bytes it writes, and how it reads the engine's reaction from its health.
 */
import t from 'tap';
import { chooseTamperTarget, foreignBytes, judgeReaction } from '../../../chaos/store-tamper.ts';

t.test('the target is the newest committed object of a subtask: highest checkpoint, then lowest subtask', async (t) => {
  const objs = [
    { key: 'p/subtask=0/epoch=1/chk=9.jsonl', size: 10 },
    { key: 'p/subtask=3/epoch=2/chk=12.jsonl', size: 10 },
    { key: 'p/subtask=1/epoch=2/chk=12.jsonl', size: 10 },
    { key: 'p/subtask=2/epoch=1/chk=11.jsonl', size: 10 },
    { key: 'p/subtask=0/epoch=2/chk=13.jsonl', size: 0 },
  ];
  const got = chooseTamperTarget(objs);
  t.equal(got?.key, 'p/subtask=1/epoch=2/chk=12.jsonl', 'checkpoint 12 (13 is empty), subtask 1 before 3');
  t.equal(got?.checkpointId, 12);
  t.equal(got?.subtask, 1);
  t.equal(chooseTamperTarget([]), null);
  t.equal(chooseTamperTarget([{ key: 'p/subtask=0/epoch=1/chk=1.jsonl', size: 0 }]), null, 'only empty objects: nothing to tamper with');
});

t.test('another key layout: the newest by LastModified', async (t) => {
  const got = chooseTamperTarget([
    { key: 'p/a.jsonl', size: 5, lastModified: '2026-12-03T06:00:00.000Z' },
    { key: 'p/b.jsonl', size: 5, lastModified: '2026-12-03T06:00:05.000Z' },
  ]);
  t.equal(got?.key, 'p/b.jsonl');
  t.equal(got?.checkpointId, undefined);
});

t.test('foreign bytes: same size, other bytes', async (t) => {
  for (const s of ['{"seq":1}\n{"seq":2}\n{"seq":3}\n', 'one line\n', 'abc', 'aba', 'a\na\n']) {
    const b = Buffer.from(s);
    const f = foreignBytes(b);
    t.equal(f.length, b.length, `${JSON.stringify(s)}: same size`);
    t.notOk(f.equals(b), `${JSON.stringify(s)}: other bytes`);
  }
  t.equal(foreignBytes(Buffer.from('{"seq":1}\n{"seq":2}\n')).toString(), '{"seq":2}\n{"seq":1}\n', 'lines reversed when that changes the bytes');
});

t.test('judgeReaction', async (t) => {
  const key = 'p/subtask=1/epoch=2/chk=12.jsonl';
  const at = { epoch: 2, lastCompletedCheckpointId: 12, keyCheckpointId: 12 };
  t.equal(judgeReaction(key, at, { checkpoints: [{ id: 12, epoch: 2, at: 'x' }] }), null, 'undecided: nothing after 12 yet');
  t.equal(
    judgeReaction(key, at, { checkpoints: [{ id: 12, epoch: 2, at: 'x' }], integrityStop: { at: 'y', message: `object at ${key} is not ours` } }),
    'integrity-stop',
  );
  t.equal(judgeReaction(key, at, { checkpoints: [], integrityStop: { at: 'y', message: 'another key' } }), null, 'a stop naming another key is not this reaction');
  t.equal(judgeReaction(key, at, { checkpoints: [{ id: 12, epoch: 2, at: 'x' }, { id: 14, epoch: 3, at: 'z' }] }), 'accepted', 'recovered from 12 in a new epoch and went on');
  t.equal(judgeReaction(key, at, { checkpoints: [{ id: 13, epoch: 2, at: 'z' }, { id: 15, epoch: 3, at: 'z' }] }), 'not-met', 'checkpoint 13 completed first: the key left the restore set');
  t.equal(
    judgeReaction(key, { ...at, lastCompletedCheckpointId: 13 }, { checkpoints: [{ id: 14, epoch: 3, at: 'z' }] }),
    'not-met',
    'the key was not in the restore set at the tamper',
  );
});
