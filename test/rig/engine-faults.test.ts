/**
 * Clink on the rig under its protocol fault points and a coordinator SIGKILL: each
 * mandatory point fires once (the process records it and kills itself), the process is
 * restarted, the job recovers with a new epoch, and in the end every record is committed
 * exactly once. A killed coordinator comes back to the same worker processes.
 */
import t from 'tap';
import { clinkEngine } from '../../engine/clink/plug.ts';
import { LineProducer, createTopic, rigKit, sleep, waitAllCommitted } from '../helpers/rig-kit.ts';
import { poll } from '../../lib/retry.ts';
import { signalService, waitPidGone } from '../../rig/process.ts';
import { restartDead, waitCheckpointAfter } from '../helpers/clink-rig.ts';

const kit = rigKit();
const runId = `eng-faults-${Date.now()}`;
const topic = `clink-${runId}`;
const prefix = `${runId}/`;
const engine = clinkEngine();
const producer = new LineProducer(kit.bootstrap, topic, 4);

t.teardown(async () => {
  await engine.disarmFaultPoints().catch(() => undefined);
  await engine.stop().catch(() => undefined);
  await producer.close().catch(() => undefined);
  await kit.close();
});

t.test('setup', async (t) => {
  await createTopic(kit.bootstrap, topic, 4, 3);
  await engine.deploy(kit.ctx(runId, (l) => t.comment(l)), { topic, partitions: 4, bucket: kit.state.store.bucket, prefix, checkpointIntervalMs: 3000 });
  await engine.start();
  await producer.produce(4000);
  await waitCheckpointAfter(engine, null, 60_000);
});

for (const point of engine.mandatoryFaultPoints) {
  t.test(`fault point ${point}`, async (t) => {
    const before = (await engine.firedFaultPoints()).length;
    const epochBefore = (await engine.health()).epoch;
    await engine.armFaultPoint(point);
    // Keep input flowing so there is something to prepare and commit.
    const fired =
      (await poll(
        async () => {
          const f = await engine.firedFaultPoints();
          if (f.length !== before) return f;
          await producer.produce(1000);
          return null;
        },
        { deadlineMs: 60_000, intervalMs: 1000 },
      )) ?? (await engine.firedFaultPoints());
    t.equal(fired.length, before + 1, `${point} fired once`);
    const f = fired[fired.length - 1]!;
    t.equal(f.point, point);
    t.equal(f.role, point.startsWith('coordinator.') ? 'coordinator' : 'worker');
    t.ok(typeof f.pid === 'number' && f.pid > 0, 'the firing records its pid');
    const host = kit.state.hosts.find((h) => h.name === f.host)!;
    await waitPidGone(kit.remote(host.name), f.pid, 10_000);
    const restarted = await restartDead(engine);
    t.ok(restarted.some((r) => r.host === f.host), `restarted ${restarted.map((r) => `${r.role}@${r.host}`).join(', ')}`);
    const h0 = await engine.health();
    await waitCheckpointAfter(engine, h0.lastCompletedCheckpointId, 90_000);
    const h = await engine.health();
    t.ok(h.epoch > epochBefore, `new epoch ${h.epoch} > ${epochBefore}`);
  });
}

t.test('coordinator SIGKILL: same worker processes, checkpoints resume', async (t) => {
  const workersBefore = (await engine.processes()).filter((p) => p.role === 'worker').map((p) => `${p.host}:${p.pid}`);
  const h0 = await engine.health();
  await producer.produce(2000);
  const coord = kit.state.hosts.find((h) => h.roles.includes('coordinator'))!;
  const pid = await signalService(kit.remote(coord.name), 'clink-coordinator', 'KILL');
  t.ok(pid, `coordinator ${pid} killed`);
  await waitPidGone(kit.remote(coord.name), pid!, 10_000);
  await sleep(2000);
  await engine.restart(coord.name, 'coordinator');
  await producer.produce(2000);
  const id = await waitCheckpointAfter(engine, h0.lastCompletedCheckpointId, 90_000);
  const h = await engine.health();
  t.ok(h.epoch > h0.epoch, `epoch raised ${h0.epoch} → ${h.epoch}`);
  t.ok(id > (h0.lastCompletedCheckpointId ?? 0), `checkpoint ${id} completed after the restart`);
  const workersAfter = (await engine.processes()).filter((p) => p.role === 'worker').map((p) => `${p.host}:${p.pid}`);
  t.same(workersAfter, workersBefore, 'worker PIDs unchanged');
});

t.test('exactly once after all of it', async (t) => {
  await engine.disarmFaultPoints();
  await producer.produce(2000);
  const count = await waitAllCommitted(kit.s3, kit.state.store.bucket, prefix, producer.seq, 120_000, (l) => t.comment(l));
  t.equal(count.missing, 0, 'no gaps');
  t.equal(count.duplicates, 0, 'no duplicates');
  t.equal(count.foreign, 0, 'no foreign lines');
  t.equal(count.zeroByte, 0, 'no zero-byte objects');
  t.equal(count.distinct, producer.produced, `all ${producer.produced} committed`);
  const fired = await engine.firedFaultPoints();
  t.same([...new Set(fired.map((f) => f.point))].sort(), [...engine.mandatoryFaultPoints].sort(), 'every mandatory point fired');
});
