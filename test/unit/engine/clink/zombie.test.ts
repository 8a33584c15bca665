import t from 'tap';
import { clinkZombieTrail } from '../../../../engine/clink/zombie.ts';
import type { EngineLogFile, ZombieWindow } from '../../../../engine/zombie-trail.ts';

// Lines as Clink writes them (a process-pause of worker-1 in the unknowns run of 2026-12-04,
// with the lines this revision adds for a worker paused at sink.after-prepare).
const worker = `2026-12-04T22:17:25.327Z clink worker worker-1 pid 31843 starting; coordinator 10.231.0.20:7070
2026-12-04T22:17:45.488Z clink worker worker-1: epoch 23: deploy subtasks [0,3] (cancelled 2 of epoch 22)
2026-12-04T22:19:43.900Z clink fault point sink.after-prepare: pid 31843 stopping itself (SIGSTOP) at epoch 23, checkpoint 61
2026-12-04T22:19:56.100Z clink fault point sink.after-prepare: pid 31843 resumed after 12200 ms stopped at epoch 23, checkpoint 61; going on from the point
2026-12-04T22:19:56.101Z clink worker worker-1: not sent, no connection to the coordinator: snapshot of checkpoint 61 (epoch 23, subtask 0, 1 staged upload, first runs/x/p0/e23-c61.jsonl)
2026-12-04T22:19:56.168Z clink worker worker-1: coordinator connection closed; reconnecting (attempt 1)
2026-12-04T22:19:56.668Z clink worker worker-1: connected to coordinator
2026-12-04T22:19:56.987Z clink worker worker-1: epoch 25: deploy subtasks [0,3] (cancelled 2 of epoch 23)
2026-12-04T22:20:30.000Z clink worker worker-1 pid 40000 starting; coordinator 10.231.0.20:7070
2026-12-04T22:20:31.000Z clink worker worker-1: not sent, no connection to the coordinator: snapshot of checkpoint 70 (epoch 26, subtask 0, 1 staged upload)
`;
const coordinator = `2026-12-04T22:19:50.131Z clink coordinator: worker worker-1 lost (no heartbeat for 6244 ms)
2026-12-04T22:19:50.433Z clink coordinator: epoch 24: deploying from checkpoint 58 over [worker-2, worker-3]: worker-2=[0,2] worker-3=[1,3]
2026-12-04T22:19:56.900Z clink coordinator: ignored a snapshot of checkpoint 61 (epoch 23, subtask 0, 1 staged upload) from worker worker-1: the current epoch is 25
2026-12-04T22:19:57.000Z clink coordinator: ignored a snapshot of checkpoint 62 (epoch 24, subtask 1) from worker worker-2: the current epoch is 25
`;
const logs: EngineLogFile[] = [
  { host: 'worker-1', path: 'worker-1/out.log', text: worker },
  { host: 'coordinator', path: 'coordinator/out.log', text: coordinator },
];
const window: ZombieWindow = { faultId: 'f002', kind: 'protocol-point', host: 'worker-1', pid: 31843, point: 'sink.after-prepare', stoppedAt: '2026-12-04T22:19:43.900Z', resumedAt: '2026-12-04T22:19:56.050Z' };

t.test('a worker lost while stopped, replaced under a new epoch, its late snapshot fenced', async (t) => {
  const z = clinkZombieTrail(window, logs);
  t.equal(z.outcome, 'fenced');
  t.match(z.declaredLost?.line, /worker worker-1 lost \(no heartbeat/);
  t.match(z.replacedBy?.line, /epoch 24: deploying from checkpoint 58/);
  t.same(z.token, { before: 'epoch 23', after: 'epoch 24' });
  t.equal(z.attempts.length, 3, "the resume, its snapshot that went nowhere, and the one the coordinator ignored (not worker-2's, nor the restarted process's)");
  t.match(z.attempts[0]?.line, /sink\.after-prepare: pid 31843 resumed after 12200 ms/);
  t.match(z.attempts[1]?.line, /not sent, no connection to the coordinator: snapshot of checkpoint 61 \(epoch 23/);
  t.match(z.attempts[2]?.line, /ignored a snapshot of checkpoint 61 \(epoch 23.* from worker worker-1: the current epoch is 25/);
  t.ok(z.fences.some((f) => /cancelled 2 of epoch 23/.test(f.line)), 'the new epoch cancelled its old tasks');
  t.ok(z.fences.some((f) => /the current epoch is 25/.test(f.line)), "the coordinator's epoch check");
  t.notOk([...z.attempts, ...z.fences].some((l) => /checkpoint 70|pid 40000/.test(l.line)), 'the restarted process is not the zombie');
});

t.test('a pause shorter than the loss timeout: not lost', async (t) => {
  const z = clinkZombieTrail({ ...window, stoppedAt: '2026-12-04T22:19:51.000Z' }, logs);
  t.equal(z.declaredLost, null);
  t.equal(z.outcome, 'not-lost');
});

t.test('lost and replaced, but nothing tried after the resume: no-attempt', async (t) => {
  const quiet = [{ ...logs[0]!, text: worker.split('\n').filter((l) => !/resumed after|not sent/.test(l)).join('\n') }, { ...logs[1]!, text: coordinator.split('\n').filter((l) => !/ignored/.test(l)).join('\n') }];
  const z = clinkZombieTrail(window, quiet);
  t.equal(z.outcome, 'no-attempt');
  t.ok(z.fences.length > 0, 'the cancellation is still there');
});

t.test('the lines of a real run (zombie.yaml, 2026-12-05): stopped at sink.after-prepare, lost, epoch 5 without it, fenced by its lease and the dropped connection', async (t) => {
  const w1 = `2026-12-05T05:23:23.795Z clink worker worker-1: epoch 4: deploy subtasks [0,3] (cancelled 1 of epoch 3)
2026-12-05T05:24:12.014Z clink fault point sink.after-prepare: pid 8550 stopping itself (SIGSTOP) at epoch 4, checkpoint 17
2026-12-05T05:24:27.228Z clink fault point sink.after-prepare: pid 8550 resumed after 15214 ms stopped at epoch 4, checkpoint 17; going on from the point
2026-12-05T05:24:27.229Z clink worker worker-1: late snapshot, nothing heard from the coordinator for 15250 ms: snapshot of checkpoint 17 (epoch 4, subtask 0, 1 staged upload)
2026-12-05T05:24:27.237Z clink worker worker-1: coordinator connection closed; reconnecting (attempt 1)
2026-12-05T05:24:27.237Z clink worker worker-1: no word from the coordinator for 15257 ms: fencing (stopping 2 tasks of epoch 4)
2026-12-05T05:24:27.739Z clink worker worker-1: connected to coordinator
2026-12-05T05:24:28.046Z clink worker worker-1: epoch 6: deploy subtasks [0,3] (cancelled 0)
`;
  const co = `2026-12-05T05:24:17.741Z clink coordinator: worker worker-1 lost (no heartbeat for 6101 ms)
2026-12-05T05:24:18.042Z clink coordinator: epoch 5: deploying from checkpoint 16 over [worker-2, worker-3]: worker-2=[0,2] worker-3=[1,3]
2026-12-05T05:24:27.739Z clink coordinator: worker worker-1 (pid 8550) registered
2026-12-05T05:24:28.040Z clink coordinator: epoch 6: deploying from checkpoint 18 over [worker-1, worker-2, worker-3]: worker-1=[0,3] worker-2=[1] worker-3=[2]
`;
  const z = clinkZombieTrail(
    { faultId: 'f002', kind: 'protocol-point', host: 'worker-1', pid: 8550, point: 'sink.after-prepare', stoppedAt: '2026-12-05T05:24:12.014Z', resumedAt: '2026-12-05T05:24:27.300Z' },
    [
      { host: 'worker-1', path: 'worker-1/out.log', text: w1 },
      { host: 'coordinator', path: 'coordinator/out.log', text: co },
    ],
  );
  t.equal(z.outcome, 'fenced');
  t.same(z.token, { before: 'epoch 4', after: 'epoch 5' });
  t.same(z.attempts.map((a) => a.at), ['2026-12-05T05:24:27.228Z', '2026-12-05T05:24:27.229Z'], 'the resume and its late snapshot of checkpoint 17');
  t.same(z.fences.map((f) => f.at), ['2026-12-05T05:24:27.237Z', '2026-12-05T05:24:27.237Z'], 'the dropped connection and its own lease');
});

// A partition as Clink logged it: the quick-seaweedfs run of 2026-12-05, f002, worker-3 cut
// off from the coordinator and reconnected (healed 02:13:58.590), lines copied whole up to
// 02:14:05 (at 02:14:08 another fault, a coordinator point, begins). Its landing was
// recorded at 02:13:48.333, after the probes that showed the cut; by the worker's own line it
// last heard from the coordinator at 02:13:44.144 (48.230 less 4086 ms), where a cutAt-stamped
// landing would open the window.
const cutWorker = `2026-12-05T02:13:07.203Z clink worker worker-3 pid 25658 starting; coordinator 10.231.0.20:7070
2026-12-05T02:13:15.613Z clink worker worker-3: epoch 3: deploy subtasks [2] (cancelled 2)
2026-12-05T02:13:48.230Z clink worker worker-3: no word from the coordinator for 4086 ms: fencing (stopping 1 tasks of epoch 3)
2026-12-05T02:13:48.231Z clink worker worker-3: coordinator connection closed; reconnecting (attempt 1)
2026-12-05T02:13:59.236Z clink worker worker-3: connected to coordinator
2026-12-05T02:13:59.539Z clink worker worker-3: epoch 5: deploy subtasks [2] (cancelled 0)
2026-12-05T02:13:59.540Z clink sink open: family=s3_2pc_sink subtask=2 bucket=clink-qual prefix=runs/quick-seaweedfs-20261205T021305-e678/ checkpointIntervalMs=6000 mutant=none
2026-12-05T02:13:59.594Z clink worker: subtask 2 epoch 5 reading partition 2 from offset 3562 (restored 1 handles)
`;
const cutCoordinator = `2026-12-05T02:13:50.406Z clink coordinator: worker worker-3 lost (no heartbeat for 6179 ms)
2026-12-05T02:13:50.707Z clink coordinator: epoch 4: deploying from checkpoint 9 over [worker-1, worker-2]: worker-1=[0,2] worker-2=[1,3]
2026-12-05T02:13:50.750Z clink coordinator: epoch 4: job running (4 subtasks)
2026-12-05T02:13:59.236Z clink coordinator: worker worker-3 (pid 25658) registered
2026-12-05T02:13:59.538Z clink coordinator: epoch 5: deploying from checkpoint 11 over [worker-1, worker-2, worker-3]: worker-1=[0,3] worker-2=[1] worker-3=[2]
`;
const cutLogs: EngineLogFile[] = [
  { host: 'worker-3', path: 'worker-3/out.log', text: cutWorker },
  { host: 'coordinator', path: 'coordinator/out.log', text: cutCoordinator },
];
const cutWindow: ZombieWindow = { faultId: 'f002', kind: 'partition', host: 'worker-3', stoppedAt: '2026-12-05T02:13:44.144Z', resumedAt: '2026-12-05T02:13:58.590Z' };

t.test('a worker cut off: declared lost and replaced under epoch 4 while it ran on, having fenced itself by its lease', async (t) => {
  const z = clinkZombieTrail(cutWindow, cutLogs);
  t.match(z.declaredLost?.line, /worker worker-3 lost \(no heartbeat for 6179 ms\)/);
  t.match(z.replacedBy?.line, /epoch 4: deploying from checkpoint 9/);
  t.same(z.token, { before: 'epoch 3', after: 'epoch 4' });
  t.equal(z.pid, 25658, "the PID from the worker's own start line (the coordinator's registration names the same)");
  t.ok(z.fences.some((f) => f.at === '2026-12-05T02:13:48.230Z' && /fencing \(stopping 1 tasks of epoch 3\)/.test(f.line)), 'while cut off, its lease stopped its tasks');
  t.ok(z.fences.some((f) => /coordinator connection closed/.test(f.line)));
  t.equal(z.attempts.length, 0, 'it sent nothing late: its tasks were stopped before the coordinator declared it lost');
  t.equal(z.outcome, 'no-attempt');
  // Read as a pause (nothing before the resume counts), the fence it met while cut off would be missed.
  t.same(clinkZombieTrail({ ...cutWindow, kind: 'process-pause', pid: 25658 }, cutLogs).fences, []);
});

t.test('a partition window opened at the landing record (a run before cutAt): the lease fence before it is not counted, the rest is', async (t) => {
  const z = clinkZombieTrail({ ...cutWindow, stoppedAt: '2026-12-05T02:13:48.333Z' }, cutLogs);
  t.match(z.declaredLost?.line, /worker worker-3 lost/);
  t.same(z.fences, []);
  t.equal(z.outcome, 'no-attempt');
});

t.test('a partition window on a host whose start line is gone: no PID', async (t) => {
  const z = clinkZombieTrail(cutWindow, [{ ...cutLogs[0]!, text: cutWorker.split('\n').slice(1).join('\n') }, cutLogs[1]!]);
  t.notOk('pid' in z);
});
