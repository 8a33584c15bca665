/**
 * Clink on the rig, steady state: the job deploys on the coordinator and 3 workers, each
 * worker logs the sink's open-time line, checkpoints complete, and every input record is
 * committed exactly once.
 */
import t from 'tap';
import { clinkEngine } from '../../engine/clink/plug.ts';
import { LineProducer, createTopic, rigKit, sleep, waitAllCommitted } from '../helpers/rig-kit.ts';

const kit = rigKit();
const runId = `eng-steady-${Date.now()}`;
const topic = `clink-${runId}`;
const prefix = `${runId}/`;
const engine = clinkEngine();
const producer = new LineProducer(kit.bootstrap, topic, 4);

t.teardown(async () => {
  await engine.stop().catch(() => undefined);
  await producer.close().catch(() => undefined);
  await kit.close();
});

t.test('deploy, start, commit every record exactly once', async (t) => {
  await createTopic(kit.bootstrap, topic, 4, 3);
  await engine.deploy(kit.ctx(runId, (l) => t.comment(l)), { topic, partitions: 4, bucket: kit.state.store.bucket, prefix, checkpointIntervalMs: 3000 });
  await engine.start();
  const procs = await engine.processes();
  t.equal(procs.filter((p) => p.role === 'worker' && p.pid !== null).length, 3, 'three worker processes');
  t.equal(procs.filter((p) => p.role === 'coordinator' && p.pid !== null).length, 1, 'one coordinator');

  const lines = await engine.sinkOpenLines();
  t.same([...new Set(lines.map((l) => l.host))].sort(), ['worker-1', 'worker-2', 'worker-3'], 'every worker logged the sink open line');
  t.ok(lines.every((l) => l.line.includes('family=s3_2pc_sink')), 'the open lines name s3_2pc_sink');

  for (let i = 0; i < 5; i++) {
    await producer.produce(4000);
    await sleep(1000);
  }
  const count = await waitAllCommitted(kit.s3, kit.state.store.bucket, prefix, producer.seq, 90_000, (l) => t.comment(l));
  t.equal(count.missing, 0, 'no gaps');
  t.equal(count.duplicates, 0, 'no duplicates');
  t.equal(count.foreign, 0, 'no foreign lines');
  t.equal(count.zeroByte, 0, 'no zero-byte objects');
  t.equal(count.distinct, 20_000, 'all 20,000 committed');

  const h = await engine.health();
  t.ok(h.running, 'running');
  t.ok(h.completedCheckpoints >= 2, `completed checkpoints: ${h.completedCheckpoints}`);
  t.ok((h.checkpoints ?? []).length === h.completedCheckpoints, 'health lists the checkpoints');
  const uploads = await engine.startedUploads();
  t.ok(uploads.length >= count.objects, `journal lists the uploads (${uploads.length} ≥ ${count.objects} objects)`);
  t.same(await engine.firedFaultPoints(), [], 'no fault point fired');
});
