/**
 * A subtask's timing counters (engine/clink/subtask-timing.ts): prepare, commit and idle
 * wall time, counted when the call fails too; the log line and its parse.
 */
import t from 'tap';
import { SubtaskTiming, parseTimingLine } from '../../../../engine/clink/subtask-timing.ts';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

t.test('prepare, commit and idle: counts and wall time, a failed call counted too', async (t) => {
  const timing = new SubtaskTiming();
  t.equal(await timing.timed('prepare', async () => (await sleep(30), 'handles')), 'handles', 'the result passes through');
  await t.rejects(timing.timed('commit', async () => (await sleep(20), Promise.reject(new Error('store down')))), /store down/, 'the error passes through');
  await timing.timed('commit', async () => undefined);
  await timing.idle(sleep(40));
  t.equal(timing.prepares, 1);
  t.equal(timing.commits, 2);
  t.ok(timing.prepareMs >= 25 && timing.prepareMs < 1000, `prepare ${timing.prepareMs} ms`);
  t.ok(timing.commitMs >= 15 && timing.commitMs < 1000, `commit ${timing.commitMs} ms`);
  t.ok(timing.idleMs >= 35 && timing.idleMs < 1000, `idle ${timing.idleMs} ms`);
});

t.test('the line and its parse', async (t) => {
  const timing = new SubtaskTiming(1000);
  timing.idleMs = 2500.4;
  timing.prepares = 3;
  timing.prepareMs = 812.6;
  const line = timing.line(2, 5, 123_456, { fetches: 40, fetchMs: 900, queueFullMs: 0 }, 11_000);
  t.equal(line, 'clink worker: subtask 2 epoch 5 timing: readingMs=10000 records=123456 idleMs=2500 prepares=3 prepareMs=813 commits=0 commitMs=0 fetches=40 fetchMs=900 queueFullMs=0');
  t.same(parseTimingLine(`2026-12-05T07:00:00.000Z ${line}`), { subtask: 2, epoch: 5, readingMs: 10_000, records: 123_456, idleMs: 2500, prepares: 3, prepareMs: 813, commits: 0, commitMs: 0, fetches: 40, fetchMs: 900, queueFullMs: 0 }, 'read back, with a timestamp before it');
  t.match(timing.line(0, 1, 0, {}, 1000), /fetches=0 fetchMs=0 queueFullMs=0$/, 'a source without counters: zeros');
  t.equal(parseTimingLine('clink worker: subtask 2 epoch 5 reading partition 2 from offset 0'), null);
  t.equal(parseTimingLine(line.replace(' commitMs=0', '')), null, 'a field missing');
  t.equal(parseTimingLine(line.replace('idleMs=2500', 'idleMs=x')), null, 'a field not a number');
});
