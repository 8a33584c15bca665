/**
 * A worker's fault points (engine/clink/worker.ts workerFaultPoints): a named point kills the
 * whole process, so it must not land inside another subtask's CompleteMultipartUpload, which
 * the pinned MinIO can lose (finding F-1). Two real s3_2pc_sinks of one worker (subtasks 0 and
 * 3, as worker-1 hosts them on the local rig) against an in-process store that holds a
 * completion (test/helpers/mini-s3.ts): subtask 3 reaches sink.after-commit, armed to kill,
 * while subtask 0's completion is held; the kill comes only once that completion has been answered.
 * (The kill table of a fresh-clone `./clink-qual test` met exactly this at 4431f3c: the control
 * run lost subtask 0's checkpoint 29; docs/findings/minio-complete-cancel.md.)
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { createS3Sink } from '../../../../engine/clink/sink/s3-2pc-sink.ts';
import { completionsInFlight } from '../../../../engine/clink/sink/completions.ts';
import type { SinkContext } from '../../../../engine/clink/sink/sink-api.ts';
import { COMPLETION_WAIT_BEFORE_KILL_MS, workerFaultPoints } from '../../../../engine/clink/worker.ts';
import { MiniS3 } from '../../../helpers/mini-s3.ts';

t.test("a named point armed to kill waits for a sibling subtask's completion in flight", async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'clink-worker-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const faults = workerFaultPoints(dir, 'worker-1');
  t.equal(faults.beforeKill?.maxWaitMs, COMPLETION_WAIT_BEFORE_KILL_MS, 'the default bound');
  const kills: { inFlight: number; objects: string[] }[] = [];
  const logged: string[] = [];
  const store = new MiniS3();
  faults.kill = () => void kills.push({ inFlight: completionsInFlight(), objects: [...store.objects.keys()] });
  faults.log = (l) => void logged.push(l);
  const sinkOf = (subtask: number) => {
    const ctx: SinkContext = {
      subtask,
      bucket: 'bkt',
      prefix: 'run-1/',
      checkpointIntervalMs: 6000,
      s3: { endpoint: 'http://unused', region: 'us-east-1', accessKeyId: 'x', secretAccessKey: 'y' },
      journalPath: path.join(dir, 'journal.jsonl'),
      log: () => undefined,
      faultPoint: (point, info) => faults.reachAsync(point, info),
    };
    return createS3Sink(ctx, { client: store, partSize: 8, backoffBaseMs: 1, backoffCapMs: 4 });
  };
  const s0 = sinkOf(0);
  const s3 = sinkOf(3);
  await s0.open();
  await s3.open();
  s0.write('{"line":"of subtask 0"}');
  s3.write('{"line":"of subtask 3"}');
  const h0 = await s0.prepare(29, 18);
  const h3 = await s3.prepare(29, 18);
  mkdirSync(path.dirname(faults.armedFile), { recursive: true });
  writeFileSync(faults.armedFile, JSON.stringify({ 'sink.after-commit': 1 }));
  store.holdComplete = /subtask=0\//;
  void s0.commit(29, 18, h0);
  while (!store.completing.some((k) => k.includes('subtask=0/'))) await new Promise((r) => setImmediate(r));
  t.equal(completionsInFlight(), 1, "subtask 0's completion is in flight");
  // Subtask 3 completes and reaches its armed point: its commit never settles (the kill).
  void s3.commit(29, 18, h3);
  await new Promise((r) => setTimeout(r, 100));
  t.same(kills, [], "no kill while subtask 0's completion is in flight");
  t.ok([...store.objects.keys()].some((k) => k.includes('subtask=3/')), "subtask 3's object is committed: it is at sink.after-commit");
  store.releaseComplete();
  await new Promise((r) => setTimeout(r, 100));
  t.equal(kills.length, 1, 'the kill, once the completion was answered');
  t.equal(kills[0]!.inFlight, 0, 'nothing in flight at the kill');
  t.ok(kills[0]!.objects.some((k) => k.includes('subtask=0/')), "subtask 0's object was committed before the kill");
  t.match(logged.join('\n'), /clink fault point sink\.after-commit: pid \d+ waited \d+ ms for 1 CompleteMultipartUpload request\(s\) in flight in this process before its kill/);
  const fired = JSON.parse(readFileSync(faults.firedFile, 'utf8').trim());
  t.match(fired, { point: 'sink.after-commit', host: 'worker-1', checkpointId: 29, epoch: 18 });
});
