import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { PendingCheckpoint, assignSubtasks, recoverState, supersedes, tasksFromCheckpoint, type LogRecord } from '../../../../engine/clink/assign.ts';
import { seamsFor } from '../../../../engine/clink/mutants/index.ts';
import { checkpointRequestPath } from '../../../../engine/clink/checkpoint-request.ts';
import { Coordinator } from '../../../../engine/clink/coordinator.ts';
import { readLines, send, type CoordinatorMessage } from '../../../../engine/clink/protocol.ts';
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

/**
 * A real Coordinator on 127.0.0.1 with one fake worker speaking the wire protocol: a checkpoint
 * asked for through the request file (checkpoint-request.ts) starts a barrier at once, long
 * before the periodic one (an interval of 10 min here), and completes like any other; a request
 * made while one is pending, or left from before the start, starts nothing.
 */
t.test('the coordinator serves a checkpoint request at its next look, through the ordinary barrier', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cq-coord-request-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(checkpointRequestPath(dir), 'stale\n');
  const port = await new Promise<number>((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(p));
    });
  });
  const lines: string[] = [];
  const coord = new Coordinator(
    {
      host: 'coordinator',
      clinkDir: dir,
      coordinator: { address: '127.0.0.1', port },
      kafka: { bootstrap: [] },
      topic: 't',
      partitions: 1,
      bucket: 'b',
      prefix: 'p/',
      checkpointIntervalMs: 600_000,
      s3: { endpoint: 'http://127.0.0.1:1', region: 'r', credentialsFile: '/nonexistent' },
      expectedWorkers: ['w1'],
    },
    { log: (l) => lines.push(l), fatal: () => {} },
  );
  await coord.start();
  t.teardown(() => coord.stop());
  t.notOk(existsSync(checkpointRequestPath(dir)), 'a request left from before the start is dropped at the start');
  t.match(lines.join('\n'), /checkpoint request from before this start dropped/);

  const got: CoordinatorMessage[] = [];
  const sock = net.connect(port, '127.0.0.1');
  t.teardown(() => sock.destroy());
  readLines(sock, (m) => {
    const msg = m as CoordinatorMessage;
    if (msg.type === 'ping') return;
    got.push(msg);
    if (msg.type === 'deploy') for (const task of msg.tasks) send(sock, { type: 'ready', epoch: msg.epoch, subtask: task.subtask });
  });
  await new Promise<void>((r) => sock.once('connect', () => r()));
  send(sock, { type: 'hello', workerId: 'w1', pid: 1, epoch: 0 });
  const heartbeat = setInterval(() => send(sock, { type: 'heartbeat', workerId: 'w1', epoch: 0 }), 200);
  t.teardown(() => clearInterval(heartbeat));
  const until = async (what: string, f: () => boolean, ms = 5000) => {
    const end = Date.now() + ms;
    while (!f()) {
      if (Date.now() > end) throw new Error(`not seen within ${ms} ms: ${what}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  };
  await until('job running', () => coord.status().running);
  const barriers = () => got.filter((m): m is Extract<CoordinatorMessage, { type: 'barrier' }> => m.type === 'barrier');

  await new Promise((r) => setTimeout(r, 600));
  t.equal(barriers().length, 0, 'no barrier without a request (the periodic one is 10 min away)');
  const asked = Date.now();
  writeFileSync(checkpointRequestPath(dir), '{}\n');
  await until('a barrier after the request', () => barriers().length === 1, 3000);
  t.ok(Date.now() - asked < 3000, `the barrier came ${Date.now() - asked} ms after the request (a look every 250 ms), not at the periodic slot`);
  t.notOk(existsSync(checkpointRequestPath(dir)), 'the request was taken');
  const b = barriers()[0]!;
  t.match(lines.join('\n'), new RegExp(`checkpoint ${b.checkpointId} \\(epoch ${b.epoch}\\) triggered on request`), 'one line says so');

  // While it is pending, another request is taken and dropped.
  writeFileSync(checkpointRequestPath(dir), '{}\n');
  await until('the second request taken', () => !existsSync(checkpointRequestPath(dir)), 2000);
  await new Promise((r) => setTimeout(r, 600));
  t.equal(barriers().length, 1, 'no second barrier for a request made while one was pending');

  send(sock, { type: 'snapshot', checkpointId: b.checkpointId, epoch: b.epoch, subtask: 0, offset: 42, handles: [] });
  await until('the checkpoint completed', () => got.some((m) => m.type === 'complete'));
  t.equal(coord.status().completedCheckpoints, 1, 'a real completed checkpoint, in the log and the status');
  t.equal(coord.status().lastCompletedCheckpointId, b.checkpointId);
  await new Promise((r) => setTimeout(r, 600));
  t.equal(barriers().length, 1, 'the dropped request was not remembered');
  t.equal(lines.filter((l) => /triggered on request/.test(l)).length, 1, 'one line for the one requested checkpoint');
});
