import t from 'tap';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { flinkZombieTrail } from '../../../../engine/flink/zombie.ts';

/** A fixture's two collected logs (test/fixtures/<name>/): the TaskManager's on `tmHost`, the JobManager's on the coordinator. */
function fixtureLogs(name: string, tmHost = 'worker-1') {
  const dir = path.join(import.meta.dirname, '../../../fixtures', name);
  return [
    { host: tmHost, path: `${tmHost}/flink-taskmanager.out.log`, text: readFileSync(path.join(dir, 'taskmanager.log'), 'utf8') },
    { host: 'coordinator', path: 'coordinator/flink-jobmanager.out.log', text: readFileSync(path.join(dir, 'jobmanager.log'), 'utf8') },
  ];
}

// Lines from campaigns/flink-zombie.yaml's run of 2026-12-05 (f003: TaskManager worker-1,
// pid 2947, SIGSTOPped 05:37:34.021, SIGCONT 05:38:49.325), cut to those the reader uses.
const logs = fixtureLogs('flink-zombie');
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

// Lines from the flink-qual03-seaweedfs run of 2026-12-05, f001: TaskManager worker-3
// (ResourceID 10.231.0.13:37927-17a17e, running subtask (1/4)#1) cut off from the coordinator
// 06:56:27.149 → 06:56:47.414 (landing → heal in chaos.jsonl), the process running on; cut
// to the lines from its start, its task's last line before the cut, and the window and the
// half minute after it (metric and state-backend chatter left out).
const plogs = fixtureLogs('flink-partition', 'worker-3');
const cut = { faultId: 'f001', kind: 'partition' as const, host: 'worker-3', stoppedAt: '2026-12-05T06:56:27.149Z', resumedAt: '2026-12-05T06:56:47.414Z' };

t.test('a TaskManager cut off 20 s: not declared lost, but it fenced itself while cut off (ZooKeeper gone, the leader lost, its task failed) and the JobManager discarded its execution', async (t) => {
  const z = flinkZombieTrail(cut, plogs);
  t.equal(z.declaredLost, null, 'the JobManager said nothing of it while it was cut off');
  t.equal(z.outcome, 'not-lost');
  t.notOk('pid' in z, 'no PID: the chaos log names none for a partition');
  t.same(z.token.before, 'attempt #1', 'the attempt it ran when cut off, from its task lines before the cut');
  const inside = z.fences.filter((f) => Date.parse(f.at) < Date.parse(cut.resumedAt));
  t.ok(inside.some((f) => /JobManager for job c10af0e22d0718c45ec69ba2714a741a with leader id .* lost leadership/.test(f.line)), 'while cut off it saw the leader gone');
  t.ok(inside.some((f) => /Attempting to fail task externally .*\(1\/4\)#1/.test(f.line)), 'and failed its own task');
  t.ok(z.fences.some((f) => f.host === 'coordinator' && /Discarding the results produced by task execution f736d5623ebb71580e255b78e5be455e_61252f73469d3ffba207c548d29a0267_0_1/.test(f.line)), "the JobManager discarded the zombie's execution, named only by its id");
  t.notOk([...z.fences, ...z.attempts].some((l) => /#2 \(/.test(l.line)), 'the attempt-#2 task deployed onto it after the heal is not the zombie');
  t.equal(z.attempts.length, 0);
});

t.test('a TaskManager cut off past the heartbeat timeout: declared lost by its ResourceID inside the window, the job restarted on attempt #2', async (t) => {
  // The same lines, with the window opened 75 s earlier and the declaration a 75 s cut brings:
  // the ResourceManager's line as flink-zombie's f003 has it (05:38:31.124), with worker-3's
  // ResourceID. No kept run cut a TaskManager off that long yet (campaigns/flink-zombie.yaml does).
  const declared = '2026-12-05T06:56:42.300Z INFO  org.apache.flink.runtime.resourcemanager.StandaloneResourceManager [] - The heartbeat of TaskManager with id 10.231.0.13:37927-17a17e timed out.\n';
  const logs75 = plogs.map((f) => (f.host === 'coordinator' ? { ...f, text: declared + f.text } : f));
  const z = flinkZombieTrail({ ...cut, stoppedAt: '2026-12-05T06:55:32.149Z' }, logs75);
  t.match(z.declaredLost?.line, /The heartbeat of TaskManager with id 10\.231\.0\.13:37927-17a17e timed out/);
  t.match(z.replacedBy?.line, /switched from state RUNNING to RESTARTING/);
  t.same(z.token, { before: 'attempt #1', after: 'attempt #2' });
  t.ok(z.fences.length > 0);
  t.equal(z.outcome, 'no-attempt', 'declared lost and replaced; nothing it tried shows in the logs');
  // Read as a pause (a stopped process logs nothing before its resume), the lines inside the window would not count.
  const asPause = flinkZombieTrail({ ...cut, kind: 'process-pause', pid: 1, stoppedAt: '2026-12-05T06:55:32.149Z' }, logs75);
  t.notOk(asPause.fences.some((f) => Date.parse(f.at) < Date.parse(cut.resumedAt) - 1000), 'a pause counts lines from its resume only');
});

t.test("a disconnection the TaskManager asked for once back in reach is not the JobManager declaring it lost", async (t) => {
  // f001's JobManager lines at 06:56:48.094 and .182 ("Closing TaskExecutor connection … because: ResourceManager leader
  // changed", "Disconnect TaskExecutor … because: Job leader … lost leadership."), inside a window stretched past them.
  const z = flinkZombieTrail({ ...cut, resumedAt: '2026-12-05T06:56:49.000Z' }, plogs);
  t.equal(z.declaredLost, null);
  // The JobMaster's shape of the heartbeat line (flink-zombie's run) and the unreachable one (flink-qual03's kills) do declare it.
  for (const line of [
    '2026-12-05T06:56:40.000Z INFO  org.apache.flink.runtime.jobmaster.JobMaster                 [] - Heartbeat of TaskManager with id 10.231.0.13:37927-17a17e timed out.',
    '2026-12-05T06:56:40.000Z INFO  org.apache.flink.runtime.resourcemanager.StandaloneResourceManager [] - Closing TaskExecutor connection 10.231.0.13:37927-17a17e because: TaskManager with id 10.231.0.13:37927-17a17e is no longer reachable.',
  ]) {
    const logs = plogs.map((f) => (f.host === 'coordinator' ? { ...f, text: `${line}\n${f.text}` } : f));
    t.equal(flinkZombieTrail(cut, logs).declaredLost?.line, line);
  }
});

// Lines from campaigns/flink-zombie.yaml's run of 2026-12-05 11:01 (f004: worker-1's TaskManager, pid 15504, stopped by the agent
// at sink.before-commit 11:11:14.226, resumed 11:12:30.017 by chaos.jsonl's heal), cut to those the reader uses. The agent's
// "resumed after" line is printed unstamped; the woken committer goes on to commit the completed checkpoint's parts, and
// the store answers that they were completed already (by the job's next attempt), before the TaskManager takes attempt #12.
const commitLogs = fixtureLogs('flink-zombie-commit');
const atCommit = { faultId: 'f004', kind: 'protocol-point' as const, host: 'worker-1', pid: 15504, point: 'sink.before-commit', stoppedAt: '2026-12-05T11:11:14.226Z', resumedAt: '2026-12-05T11:12:30.017Z' };

t.test('a TaskManager stopped 75 s at sink.before-commit: on waking it resumes at the point and tries the commit; the store says the parts were committed already', async (t) => {
  const z = flinkZombieTrail(atCommit, commitLogs);
  t.match(z.declaredLost?.line, /heartbeat of TaskManager with id 10\.231\.0\.11:41559-e60aea timed out/);
  t.match(z.attempts[0]?.line, /^clink-qual fault point sink\.before-commit: pid 15504 resumed after 75563 ms stopped/, "the agent's unstamped line, at the time of the line before it");
  t.equal(z.attempts[0]?.at, '2026-12-05T11:12:29.825Z');
  const commits = z.attempts.filter((a) => /Trying to commit after recovery/.test(a.line));
  t.equal(commits.length, 2, 'the woken committer tried its two parts (3/4 and 4/4 of attempt #2)');
  t.ok(commits.every((a) => a.at < '2026-12-05T11:12:32.872Z'), "not the commits of attempt #12, deployed onto the same TaskManager once it was back");
  t.equal(z.fences.filter((f) => /Failed to commit after recovery .* Checking if file was committed before/.test(f.line)).length, 2, 'each commit found its upload gone: completed already');
  t.ok(z.fences.some((f) => /heartbeat of JobManager with id .* timed out/.test(f.line)));
  t.equal(z.outcome, 'fenced');
});

// Lines from campaigns/flink-zombie.yaml's run at 0f951fb (f001: worker-1's TaskManager, pid 22713, stopped by the agent at
// sink.before-commit 12:50:13.587, resumed 12:51:28.909), cut to those the reader uses: woken, the committer sent both commits
// of its completed checkpoint (12:51:28.895, .898) a millisecond before its tasks failed, and nothing refused them; attempt #2,
// deployed onto the same TaskManager at 12:51:30.8, found both parts committed already.
const lateLogs = fixtureLogs('flink-zombie-late-commit');
const lateCommit = { faultId: 'f001', kind: 'protocol-point' as const, host: 'worker-1', pid: 22713, point: 'sink.before-commit', stoppedAt: '2026-12-05T12:50:13.587Z', resumedAt: '2026-12-05T12:51:28.909Z' };

t.test("a woken committer's commits that nothing refused: unfenced, though its tasks failed a millisecond later", async (t) => {
  const z = flinkZombieTrail(lateCommit, lateLogs);
  t.ok(z.declaredLost, 'declared lost');
  t.equal(z.attempts.filter((a) => /Trying to commit after recovery/.test(a.line)).length, 2, 'its two commits');
  t.ok(z.fences.some((f) => /Attempting to fail task externally/.test(f.line)), 'its tasks failed after them');
  t.notOk(z.fences.some((f) => /Failed to commit after recovery/.test(f.line)), "attempt #2's refusals are not the zombie's");
  t.equal(z.outcome, 'unfenced', 'a commit is judged by its own answer');
});

t.test('unrefusedCommits: a commit try is answered only by a later refusal of the same part', async (t) => {
  const { unrefusedCommits } = await import('../../../../engine/flink/zombie.ts');
  const l = (at: string, line: string) => ({ at, host: 'worker-1', line });
  const tryA = l('2026-12-05T00:00:01.000Z', 'x S3Committer [] - Trying to commit after recovery runs/r/part-a-3.jsonl with MPU ID QQ');
  const tryB = l('2026-12-05T00:00:01.001Z', 'x S3Committer [] - Committing runs/r/part-b-3.jsonl with MPU ID RR');
  const refusedA = l('2026-12-05T00:00:01.200Z', 'x S3Committer [] - Failed to commit after recovery runs/r/part-a-3.jsonl with MPU ID QQ. Checking if file was committed before...');
  const refusedEarlier = l('2026-12-05T00:00:00.500Z', 'x S3Committer [] - Failed to commit after recovery runs/r/part-b-3.jsonl with MPU ID RR. Checking if file was committed before...');
  t.same(unrefusedCommits([tryA, tryB], [tryA, tryB, refusedA, refusedEarlier]), [tryB], 'a refusal before the try answers nothing');
  t.same(unrefusedCommits([tryA], [tryA, refusedA]), []);
  t.same(unrefusedCommits([l('2026-12-05T00:00:01.000Z', 'clink-qual fault point sink.before-commit: pid 1 resumed after 75000 ms stopped')], []), [], 'not a commit');
});
