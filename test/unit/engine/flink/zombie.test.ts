import t from 'tap';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { flinkZombieTrail } from '../../../../engine/flink/zombie.ts';

// Lines from campaigns/flink-zombie.yaml's run of 2026-12-05 (f003: TaskManager worker-1,
// pid 2947, SIGSTOPped 05:37:34.021, SIGCONT 05:38:49.325), cut to those the reader uses.
const dir = path.join(import.meta.dirname, '../../../fixtures/flink-zombie');
const logs = [
  { host: 'worker-1', path: 'worker-1/flink-taskmanager.out.log', text: readFileSync(path.join(dir, 'taskmanager.log'), 'utf8') },
  { host: 'coordinator', path: 'coordinator/flink-jobmanager.out.log', text: readFileSync(path.join(dir, 'jobmanager.log'), 'utf8') },
];
const w = { faultId: 'f003', kind: 'process-pause' as const, host: 'worker-1', pid: 2947, stoppedAt: '2026-12-05T05:37:34.021Z', resumedAt: '2026-12-05T05:38:49.325Z' };

t.test('a TaskManager stopped 75 s: declared lost by its ResourceID, the job restarted on new attempts, and on waking it fails its own tasks', async (t) => {
  const z = flinkZombieTrail(w, logs);
  t.match(z.declaredLost?.line, /The heartbeat of TaskManager with id 10\.231\.0\.11:35471-d3661d timed out/);
  t.match(z.replacedBy?.line, /switched from state RUNNING to RESTARTING/);
  t.same(z.token, { before: 'attempt #1', after: 'attempt #2' });
  t.ok(z.fences.some((f) => /heartbeat of JobManager with id .* timed out/.test(f.line)), 'it saw the JobManager gone on waking');
  t.ok(z.fences.some((f) => /Attempting to fail task externally .*\(3\/4\)#1/.test(f.line)), 'and failed its attempt-#1 tasks');
  t.equal(z.attempts.length, 0, 'nothing it tried shows in the logs');
  t.equal(z.outcome, 'no-attempt');
});

t.test('a pause shorter than the heartbeat timeout: not lost', async (t) => {
  const z = flinkZombieTrail({ ...w, stoppedAt: '2026-12-05T05:38:40.000Z' }, logs);
  t.equal(z.declaredLost, null);
  t.equal(z.outcome, 'not-lost');
});
