/**
 * The pure parts of the store-tamper fault (chaos/store-tamper.ts): which object it picks,
 * the foreign bytes it writes, and how it reads the engine's reaction from its health.
 */
import t from 'tap';
import { chooseTamperTarget, foreignBytes, judgeReaction, reactionDeadlineMs } from '../../../chaos/store-tamper.ts';
import { clinkEngine } from '../../../engine/clink/plug.ts';
import { flinkEngine } from '../../../engine/flink/plug.ts';
import type { EngineStoreTamper } from '../../../engine/engine.ts';
import { flinkIntegrityStop } from '../../../engine/flink/tamper.ts';

const clink = clinkEngine();
const noHealth = { checkpoints: [], lastCompletedCheckpointId: null };

t.test('Clink: the target is the newest committed object of a subtask: highest checkpoint, then lowest subtask', async (t) => {
  const objs = [
    { key: 'p/subtask=0/epoch=1/chk=9.jsonl', size: 10 },
    { key: 'p/subtask=3/epoch=2/chk=12.jsonl', size: 10 },
    { key: 'p/subtask=1/epoch=2/chk=12.jsonl', size: 10 },
    { key: 'p/subtask=2/epoch=1/chk=11.jsonl', size: 10 },
    { key: 'p/subtask=0/epoch=2/chk=13.jsonl', size: 0 },
  ];
  const got = chooseTamperTarget(objs, clink, noHealth);
  t.equal(got?.key, 'p/subtask=1/epoch=2/chk=12.jsonl', 'checkpoint 12 (13 is empty), subtask 1 before 3');
  t.equal(got?.checkpointId, 12);
  t.equal(got?.subtask, 1);
  t.equal(chooseTamperTarget([], clink, noHealth), null);
  t.equal(chooseTamperTarget([{ key: 'p/subtask=0/epoch=1/chk=1.jsonl', size: 0 }], clink, noHealth), null, 'only empty objects: nothing to tamper with');
});

t.test('an engine that cannot say what it re-commits: the newest by LastModified, without a checkpoint', async (t) => {
  const objs = [
    { key: 'p/a.jsonl', size: 5, lastModified: '2026-12-03T06:00:00.000Z' },
    { key: 'p/b.jsonl', size: 5, lastModified: '2026-12-03T06:00:05.000Z' },
  ];
  const unknowing: EngineStoreTamper = {};
  const got = chooseTamperTarget(objs, unknowing, noHealth);
  t.equal(got?.key, 'p/b.jsonl');
  t.equal(got?.checkpointId, undefined);
  t.equal(chooseTamperTarget(objs, clink, noHealth)?.checkpointId, undefined, "Clink's plug does not place keys of another layout");
});

t.test('a non-Clink engine (Flink): the part file committed after its latest checkpoint, placed in that checkpoint', async (t) => {
  const flink = flinkEngine();
  const part = (uuid: string, n: number) => `runs/r/part-${uuid}-${n}.jsonl`;
  const A = '0b7e3f8a-1c2d-4e5f-8a9b-0c1d2e3f4a5b';
  const B = '9f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a';
  const objs = [
    { key: part(A, 6), size: 900, lastModified: '2026-12-04T10:00:16.050Z' },
    { key: part(B, 6), size: 800, lastModified: '2026-12-04T10:00:16.080Z' },
    { key: part(A, 7), size: 900, lastModified: '2026-12-04T10:00:24.040Z' },
    { key: part(B, 7), size: 800, lastModified: '2026-12-04T10:00:24.060Z' },
    { key: part(A, 8), size: 0, lastModified: '2026-12-04T10:00:24.070Z' },
    { key: 'runs/r/stray.jsonl', size: 10, lastModified: '2026-12-04T10:00:25.000Z' },
  ];
  const health = {
    lastCompletedCheckpointId: 7,
    checkpoints: [
      { id: 6, epoch: 0, at: '2026-12-04T10:00:16.000Z' },
      { id: 7, epoch: 0, at: '2026-12-04T10:00:24.000Z' },
    ],
  };
  const got = chooseTamperTarget(objs, flink, health);
  t.equal(got?.key, part(B, 7), 'the newest non-empty part committed after checkpoint 7 completed (not the stray object, not the empty part)');
  t.equal(got?.checkpointId, 7);
  const between = chooseTamperTarget(objs.slice(0, 2), flink, health);
  t.equal(between?.key, part(B, 6), 'no part committed after 7 yet: the newest object, unplaced');
  t.equal(between?.checkpointId, undefined, 'so its acceptance is not judged');
});

t.test('the reaction deadline is at least the campaign recovery deadline', async (t) => {
  t.equal(reactionDeadlineMs(8000), 48_000, 'six checkpoints when that is longer than 45 s');
  t.equal(reactionDeadlineMs(2000), 45_000);
  t.equal(reactionDeadlineMs(8000, 120_000), 120_000, "Flink's campaigns give 120 s to recover");
  t.equal(reactionDeadlineMs(8000, 30_000), 48_000);
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
  const flinkKey = 'runs/r/part-0b7e3f8a-1c2d-4e5f-8a9b-0c1d2e3f4a5b-7.jsonl';
  const flinkStop = flinkIntegrityStop({ exceptionHistory: { entries: [{ stacktrace: `java.io.IOException: Recovering commit failed for object ${flinkKey}. Object does not exist and MultiPart Upload u1 is not valid.`, timestamp: 5 }] } });
  t.equal(judgeReaction(flinkKey, { epoch: 0, lastCompletedCheckpointId: 7, keyCheckpointId: 7 }, { checkpoints: [], integrityStop: flinkStop! }), 'integrity-stop', "Flink's refusal, read from its exception history");
  t.equal(
    judgeReaction(key, { ...at, lastCompletedCheckpointId: 13 }, { checkpoints: [{ id: 14, epoch: 3, at: 'z' }] }),
    'not-met',
    'the key was not in the restore set at the tamper',
  );
});
