/**
 * Clink on the rig under outages: the store paused (SIGSTOP) while a worker is killed
 * (recovery must re-complete handles against a store that does not answer, then converge
 * once it resumes), and a worker partitioned from the coordinator (its tasks move; it
 * fences itself; after healing nothing is duplicated). Every fault is healed in teardown.
 */
import t from 'tap';
import { clinkEngine } from '../../engine/clink/plug.ts';
import { LineProducer, createTopic, rigKit, sleep, waitAllCommitted } from '../helpers/rig-kit.ts';
import { serviceLogTail, signalService, waitFor, waitPidGone } from '../../rig/process.ts';

const kit = rigKit();
const runId = `eng-outage-${Date.now()}`;
const topic = `clink-${runId}`;
const prefix = `${runId}/`;
const engine = clinkEngine();
const producer = new LineProducer(kit.bootstrap, topic, 4);
const store = kit.state.hosts.find((h) => h.roles.includes('store'))!;
const coord = kit.state.hosts.find((h) => h.roles.includes('coordinator'))!;
const TAG = 'clink-qual:test';

const heals: (() => Promise<void>)[] = [];
t.teardown(async () => {
  for (const heal of heals.reverse()) await heal().catch(() => undefined);
  await engine.stop().catch(() => undefined);
  await producer.close().catch(() => undefined);
  await kit.close();
});

async function status(): Promise<{ running: boolean; epoch: number; lastCompletedCheckpointId: number | null; workers: { id: string; pid: number; subtasks: number[] }[] }> {
  const r = await kit.remote(coord.name).exec(`cat ${coord.dataDir}/state/clink/status.json`);
  return JSON.parse(r.stdout);
}

async function waitCheckpointAfter(id: number | null, timeoutMs: number, cond: (s: Awaited<ReturnType<typeof status>>) => boolean = () => true): Promise<void> {
  await waitFor(`a completed checkpoint after ${id}`, async () => {
    const s = await status();
    return s.running && (s.lastCompletedCheckpointId ?? 0) > (id ?? 0) && cond(s);
  }, timeoutMs, 500);
}

t.test('setup', async (t) => {
  await createTopic(kit.bootstrap, topic, 4, 3);
  await engine.deploy(kit.ctx(runId, (l) => t.comment(l)), { topic, partitions: 4, bucket: kit.state.store.bucket, prefix, checkpointIntervalMs: 3000 });
  await engine.start();
  await producer.produce(4000);
  await waitCheckpointAfter(null, 60_000);
});

t.test('store paused while a worker is killed → converges after resume', async (t) => {
  const s0 = await status();
  const victim = (await engine.activeWorkers())[0]!;
  await producer.produce(4000);
  await sleep(1500);
  const minioPid = await signalService(kit.remote(store.name), 'minio', 'STOP');
  t.ok(minioPid, `store paused (pid ${minioPid})`);
  heals.push(async () => void (await signalService(kit.remote(store.name), 'minio', 'CONT')));
  const atPause = await status();
  const killed = await signalService(kit.remote(victim), 'clink-worker', 'KILL');
  t.ok(killed, `worker ${victim} (pid ${killed}) killed`);
  await waitPidGone(kit.remote(victim), killed!, 10_000);
  await producer.produce(4000);
  await sleep(8000);
  const during = await status();
  t.ok(during.epoch > s0.epoch, `a new epoch ${during.epoch} while the store is down`);
  t.ok((during.lastCompletedCheckpointId ?? 0) <= (atPause.lastCompletedCheckpointId ?? 0) + 1, 'no checkpoint completes against a paused store (one in flight at most)');
  await engine.restart(victim, 'worker');
  await sleep(3000);
  const resumed = await signalService(kit.remote(store.name), 'minio', 'CONT');
  heals.pop();
  t.equal(resumed, minioPid, 'the paused store process got SIGCONT');
  await waitCheckpointAfter(during.lastCompletedCheckpointId, 120_000, (s) => s.workers.length === 3);
  await producer.produce(2000);
  const count = await waitAllCommitted(kit.s3, kit.state.store.bucket, prefix, producer.seq, 120_000, (l) => t.comment(l));
  t.equal(count.missing, 0, 'no gaps');
  t.equal(count.duplicates, 0, 'no duplicates');
  t.equal(count.distinct, producer.produced, `all ${producer.produced} committed`);
});

t.test('a worker partitioned from the coordinator: tasks move, it fences, no duplicate after healing', async (t) => {
  const s0 = await status();
  const victim = s0.workers.find((w) => w.subtasks.length > 0)!.id;
  const r = kit.remote(victim);
  const rules = [`INPUT -s ${coord.address} -m comment --comment ${TAG} -j DROP`, `OUTPUT -d ${coord.address} -m comment --comment ${TAG} -j DROP`];
  const heal = async (): Promise<void> => {
    for (const rule of rules) await r.exec(`while iptables -D ${rule} 2>/dev/null; do :; done`, { check: false });
  };
  heals.push(heal);
  for (const rule of rules) await r.exec(`iptables -A ${rule}`);
  for (const rule of rules) t.equal((await r.exec(`iptables -C ${rule}`, { check: false })).code, 0, `in place on ${victim}: ${rule}`);
  await producer.produce(4000);
  // The coordinator loses it (6 s) and restores its subtasks on the other workers.
  await waitCheckpointAfter(s0.lastCompletedCheckpointId, 60_000, (s) => s.epoch > s0.epoch && !s.workers.some((w) => w.id === victim));
  const moved = await status();
  t.same(moved.workers.map((w) => w.id).sort(), s0.workers.map((w) => w.id).filter((w) => w !== victim).sort(), 'the victim is no longer a member');
  t.equal(moved.workers.reduce((a, w) => a + w.subtasks.length, 0), 4, 'all 4 subtasks run on the other workers');
  const log = await serviceLogTail(r, 'clink-worker', 200);
  t.match(log, /fencing \(stopping/, 'the cut-off worker fenced itself');
  await producer.produce(4000);
  await sleep(4000);
  await heal();
  heals.pop();
  t.notMatch((await r.exec('iptables -S')).stdout, TAG, `no tagged rule left on ${victim}`);
  await waitCheckpointAfter(moved.lastCompletedCheckpointId, 60_000, (s) => s.workers.length === 3);
  await producer.produce(2000);
  const count = await waitAllCommitted(kit.s3, kit.state.store.bucket, prefix, producer.seq, 120_000, (l) => t.comment(l));
  t.equal(count.missing, 0, 'no gaps');
  t.equal(count.duplicates, 0, 'no duplicates');
  t.equal(count.distinct, producer.produced, `all ${producer.produced} committed`);
});
