import t from 'tap';
import { PendingCheckpoint, assignSubtasks, recoverState, supersedes, tasksFromCheckpoint, type LogRecord } from '../../../../engine/clink/assign.ts';
import { seamsFor } from '../../../../engine/clink/mutants/index.ts';
import type { UploadHandle } from '../../../../engine/clink/sink/sink-api.ts';

const handle = (subtask: number, checkpointId: number, epoch: number): UploadHandle => ({
  bucket: 'b',
  key: `p/subtask=${subtask}/epoch=${epoch}/chk=${checkpointId}.jsonl`,
  uploadId: `u${subtask}-${checkpointId}`,
  parts: [{ partNumber: 1, etag: 'e', size: 10 }],
  bytes: 10,
  records: 1,
  token: 't',
  expectedEtag: 'x-1',
  subtask,
  checkpointId,
  epoch,
});

t.test('4 subtasks over 3 workers, then 2, then 1', async (t) => {
  t.same([...assignSubtasks(4, ['worker-3', 'worker-1', 'worker-2'])], [['worker-1', [0, 3]], ['worker-2', [1]], ['worker-3', [2]]]);
  t.same([...assignSubtasks(4, ['worker-2', 'worker-3'])], [['worker-2', [0, 2]], ['worker-3', [1, 3]]]);
  t.same([...assignSubtasks(4, ['worker-1'])], [['worker-1', [0, 1, 2, 3]]]);
  t.same([...assignSubtasks(4, [])], []);
});

t.test('a pending checkpoint completes only with every subtask of its id and epoch', async (t) => {
  const p = new PendingCheckpoint(5, 2, 4);
  t.notOk(p.add({ checkpointId: 4, epoch: 2, subtask: 0, offset: 1, handles: [] }), 'older id refused');
  t.notOk(p.add({ checkpointId: 5, epoch: 1, subtask: 0, offset: 1, handles: [] }), 'older epoch refused');
  for (let s = 0; s < 3; s++) t.ok(p.add({ checkpointId: 5, epoch: 2, subtask: s, offset: 10 + s, handles: [handle(s, 5, 2)] }));
  t.notOk(p.add({ checkpointId: 5, epoch: 2, subtask: 1, offset: 99, handles: [] }), 'duplicate snapshot refused');
  t.notOk(p.add({ checkpointId: 5, epoch: 2, subtask: 4, offset: 99, handles: [] }), 'unknown subtask refused');
  t.notOk(p.complete);
  t.ok(p.add({ checkpointId: 5, epoch: 2, subtask: 3, offset: 13, handles: [] }));
  t.ok(p.complete);
  const rec = p.toRecord('2026-01-01T00:00:00.000Z');
  t.same(rec.offsets, { 0: 10, 1: 11, 2: 12, 3: 13 });
  t.equal(rec.handles['1']![0]!.uploadId, 'u1-5');
  t.same(rec.handles['3'], []);
});

t.test('recovery from the log: highest epoch and id used, last completed checkpoint', async (t) => {
  const at = '2026-01-01T00:00:00.000Z';
  const cp1 = new PendingCheckpoint(1, 1, 2);
  cp1.add({ checkpointId: 1, epoch: 1, subtask: 0, offset: 100, handles: [handle(0, 1, 1)] });
  cp1.add({ checkpointId: 1, epoch: 1, subtask: 1, offset: 200, handles: [] });
  const records: LogRecord[] = [
    { t: 'epoch', epoch: 1, at },
    { t: 'barrier', id: 1, epoch: 1, at },
    cp1.toRecord(at),
    { t: 'barrier', id: 2, epoch: 1, at }, // abandoned
    { t: 'epoch', epoch: 2, at }, // a restore that never completed a checkpoint
    { t: 'barrier', id: 3, epoch: 2, at },
  ];
  const st = recoverState(records);
  t.equal(st.maxEpoch, 2);
  t.equal(st.maxCheckpointId, 3, 'the next id is above every id ever used, completed or not');
  t.equal(st.lastCompleted?.id, 1);
  t.equal(st.completedCount, 1);
  const tasks = tasksFromCheckpoint(2, st.lastCompleted);
  t.same(tasks.map((x) => [x.subtask, x.partition, x.startOffset, x.restoredHandles.length]), [
    [0, 0, 100, 1],
    [1, 1, 200, 0],
  ]);
  t.same(tasksFromCheckpoint(2, null).map((x) => x.startOffset), [null, null], 'no checkpoint: from the log start');
});

t.test('the latest completed checkpoint is the last in the log, whatever its wall-clock time', async (t) => {
  const mk = (id: number, at: string) => {
    const p = new PendingCheckpoint(id, 1, 1);
    p.add({ checkpointId: id, epoch: 1, subtask: 0, offset: id * 10, handles: [] });
    return p.toRecord(at);
  };
  // The coordinator's clock stepped back 90 s between checkpoint 5 and 6.
  const records: LogRecord[] = [mk(4, '2026-01-01T00:01:00.000Z'), mk(5, '2026-01-01T00:01:08.000Z'), mk(6, '2026-01-01T00:00:16.000Z'), mk(7, '2026-01-01T00:00:24.000Z')];
  t.equal(recoverState(records).lastCompleted?.id, 7, 'the correct coordinator restores checkpoint 7');
  t.equal(recoverState(records, seamsFor('latest-by-wallclock')).lastCompleted?.id, 5, 'MUTANT latest-by-wallclock restores checkpoint 5, taken before the step');
  t.ok(supersedes(records[3] as never, records[1] as never), 'a newer record supersedes whatever its time');
  t.notOk(supersedes(records[3] as never, records[1] as never, seamsFor('latest-by-wallclock')), 'the mutant compares times');
});
