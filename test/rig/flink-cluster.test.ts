/**
 * Apache Flink behind the engine plug, on the rig: a session cluster (ZooKeeper and the
 * JobManager on the coordinator host, a TaskManager on each worker host) runs the job from
 * engine/flink/job; checkpoints complete, the FileSink commits objects to MinIO, every
 * record lands exactly once; a TaskManager SIGKILL and a JobManager SIGKILL each land and
 * are followed by a completed checkpoint, and still every record lands exactly once; a
 * named protocol point armed through the Java agent (coordinator.after-complete-record)
 * halts the JobManager there, leaves its evidence, and the job recovers exactly once.
 *
 * Slow (JVMs on 2 cores, about 3-4 minutes): it runs only with CLINK_QUAL_FLINK=1
 * (docs/flink.md), e.g. `CLINK_QUAL_FLINK=1 ./clink-qual test test/rig/flink-cluster.test.ts`.
 */
import t from 'tap';
import { flinkEngine } from '../../engine/flink/plug.ts';
import { LineProducer, createTopic, rigKit, sleep, waitAllCommitted } from '../helpers/rig-kit.ts';
import { killService } from '../../rig/faults.ts';
import { pidAlive, serviceDir, waitFor } from '../../rig/process.ts';
import type { FaultPointFiring } from '../../engine/engine.ts';
import { FIRED_LINE } from '../../engine/flink/fault-points.ts';
import { JOBMANAGER_SERVICE, flinkFaultsDir } from '../../engine/flink/plug.ts';

if (process.env.CLINK_QUAL_FLINK !== '1') {
  t.plan(0, 'skipped: set CLINK_QUAL_FLINK=1 to run the Flink rig test (docs/flink.md)');
} else {
  const kit = rigKit();
  const runId = `flink-${Date.now()}`;
  const topic = `flink-${runId}`;
  const prefix = `${runId}/`;
  const engine = flinkEngine();
  const producer = new LineProducer(kit.bootstrap, topic, 4);

  t.teardown(async () => {
    await engine.stop().catch(() => undefined);
    await producer.close().catch(() => undefined);
    await kit.close();
  });

  /** Waits for a completed checkpoint with an id above `after`; returns its id. */
  const nextCheckpoint = async (after: number, what: string): Promise<number> => {
    let id = after;
    await waitFor(what, async () => {
      const h = await engine.health();
      id = h.lastCompletedCheckpointId ?? after;
      return h.running && id > after;
    }, 180_000, 1000);
    return id;
  };

  t.test('Flink deploys, checkpoints, commits every record once, survives a TaskManager and a JobManager SIGKILL', async (t) => {
    await createTopic(kit.bootstrap, topic, 4, 3);
    const t0 = Date.now();
    await engine.deploy(kit.ctx(runId, (l) => t.comment(l)), { topic, partitions: 4, bucket: kit.state.store.bucket, prefix, checkpointIntervalMs: 3000 });
    await engine.start();
    t.comment(`deploy + start: ${Date.now() - t0} ms`);
    const procs = await engine.processes();
    t.equal(procs.filter((p) => p.role === 'worker' && p.pid !== null).length, 3, 'three TaskManagers');
    t.equal(procs.filter((p) => p.role === 'coordinator' && p.pid !== null).length, 1, 'one JobManager');

    for (let i = 0; i < 4; i++) {
      await producer.produce(2500);
      await sleep(500);
    }
    let count = await waitAllCommitted(kit.s3, kit.state.store.bucket, prefix, producer.seq, 120_000, (l) => t.comment(l));
    t.equal(count.distinct, 10_000, 'all 10,000 committed');
    t.equal(count.duplicates, 0, 'no duplicates');
    t.equal(count.foreign + count.zeroByte, 0, 'no foreign lines, no zero-byte objects');
    t.ok(count.objects > 0, `${count.objects} committed objects`);

    const lines = await engine.sinkOpenLines();
    t.ok(lines.length >= 2, `open lines from ${lines.length} TaskManagers`);
    t.ok(lines.every((l) => l.line.includes('family=flink_filesink_s3') && l.line.includes('writer=org.apache.flink.fs.s3.common.writer.S3RecoverableWriter')), 'the open lines name the FileSink on the S3 RecoverableWriter');
    const h = await engine.health();
    t.ok(h.running, 'running');
    t.ok(h.completedCheckpoints >= 2, `completed checkpoints: ${h.completedCheckpoints}`);

    // TaskManager SIGKILL, then restart.
    const victim = 'worker-2';
    const killed = await killService(kit.remote(victim), 'flink-taskmanager');
    t.comment(`killed the TaskManager on ${victim} (pid ${killed.pid})`);
    const tKill = Date.now();
    await producer.produce(2500);
    const restarted = await engine.restart(victim, 'worker');
    t.ok(restarted.pid !== null && restarted.pid !== killed.pid, `TaskManager restarted (pid ${restarted.pid})`);
    const afterTm = await nextCheckpoint(h.lastCompletedCheckpointId ?? 0, 'a completed checkpoint after the TaskManager kill');
    t.comment(`checkpoint #${afterTm} completed ${Date.now() - tKill} ms after the TaskManager kill`);
    t.ok((await engine.health()).epoch >= 1, 'the job restarted (numRestarts >= 1)');

    // JobManager SIGKILL (ZooKeeper HA): the TaskManagers' PIDs must not change.
    const before = (await engine.processes()).filter((p) => p.role === 'worker').map((p) => `${p.host}:${p.pid}`).sort();
    const jm = await killService(kit.remote('coordinator'), 'flink-jobmanager');
    t.comment(`killed the JobManager (pid ${jm.pid})`);
    const tJm = Date.now();
    await producer.produce(2500);
    await engine.restart('coordinator', 'coordinator');
    const afterJm = await nextCheckpoint(afterTm, 'a completed checkpoint after the JobManager kill');
    t.comment(`checkpoint #${afterJm} completed ${Date.now() - tJm} ms after the JobManager kill`);
    const after = (await engine.processes()).filter((p) => p.role === 'worker').map((p) => `${p.host}:${p.pid}`).sort();
    t.same(after, before, 'TaskManager PIDs unchanged across the JobManager restart');

    await producer.produce(2500);
    count = await waitAllCommitted(kit.s3, kit.state.store.bucket, prefix, producer.seq, 120_000, (l) => t.comment(l));
    t.equal(count.distinct, 17_500, 'all 17,500 committed after both kills');
    t.equal(count.duplicates, 0, 'no duplicates after both kills');
    t.equal(count.foreign + count.zeroByte, 0, 'no foreign lines, no zero-byte objects');
    const pending = await engine.pendingUploads(kit.state.store, kit.credentials);
    t.comment(`pending multipart uploads under the prefix: ${pending.pending} (${pending.method})`);
    t.ok(pending.pending >= 0, 'pending uploads counted');

    // Memory with everything up: RSS of the rig's processes (Flink, Kafka, MinIO, sshd).
    const rss = await Promise.all(
      kit.state.hosts.map(async (host) => {
        const r = await kit.remote(host.name).exec(`for p in $(cat ${host.dataDir}/services/*/pid 2>/dev/null); do ps -o rss= -p $p 2>/dev/null; done | awk '{s+=$1} END {print s+0}'`, { check: false });
        return { host: host.name, kib: Number(r.stdout.trim()) || 0 };
      }),
    );
    const total = rss.reduce((a, b) => a + b.kib, 0);
    t.comment(`RSS of the rig services: ${rss.map((r) => `${r.host} ${Math.round(r.kib / 1024)} MiB`).join(', ')}; total ${Math.round(total / 1024)} MiB`);
    t.ok(total > 0, 'memory measured');
  });

  t.test('a named protocol point (the Java agent): coordinator.after-complete-record halts the JobManager there, and the job recovers exactly once', async (t) => {
    const fired0 = await engine.firedFaultPoints();
    const jmBefore = (await engine.processes()).find((p) => p.role === 'coordinator')!;
    const cpBefore = (await engine.health()).lastCompletedCheckpointId ?? 0;
    await engine.armFaultPoint('coordinator.after-complete-record', { times: 1 });
    await producer.produce(2500);
    let firing: FaultPointFiring | undefined;
    await waitFor('coordinator.after-complete-record fired', async () => {
      firing = (await engine.firedFaultPoints()).find((f) => f.point === 'coordinator.after-complete-record' && !fired0.some((g) => g.at === f.at && g.pid === f.pid));
      return firing !== undefined;
    }, 120_000, 500);
    t.equal(firing!.host, 'coordinator', 'fired on the coordinator host');
    t.equal(firing!.role, 'coordinator');
    t.equal(firing!.pid, jmBefore.pid, 'in the JobManager process');
    t.ok((firing!.checkpointId ?? 0) > cpBefore, `at checkpoint ${firing!.checkpointId}, after ${cpBefore}`);
    const r = kit.remote('coordinator');
    await waitFor('the halted JobManager gone', async () => !(await pidAlive(r, firing!.pid)), 30_000, 250);
    const line = await r.exec(`grep -h '${FIRED_LINE} point=coordinator.after-complete-record' ${serviceDir(r, JOBMANAGER_SERVICE)}/out.log | tail -n 1`, { check: false });
    t.match(line.stdout, new RegExp(`point=coordinator\\.after-complete-record host=coordinator role=coordinator pid=${firing!.pid} checkpoint=${firing!.checkpointId}`), 'the evidence line in the JobManager log');
    const armed = await r.exec(`cat ${flinkFaultsDir(kit.state.hosts.find((h) => h.name === 'coordinator')!)}/armed.json`, { check: false });
    t.same(JSON.parse(armed.stdout || '{}'), {}, 'the arming is used up');
    const tHalt = Date.now();
    await engine.restart('coordinator', 'coordinator');
    const after = await nextCheckpoint(firing!.checkpointId ?? cpBefore, 'a completed checkpoint after the JobManager halted at the point');
    t.comment(`checkpoint #${after} completed ${Date.now() - tHalt} ms after the halt`);
    const count = await waitAllCommitted(kit.s3, kit.state.store.bucket, prefix, producer.seq, 120_000, (l) => t.comment(l));
    t.equal(count.distinct, producer.produced, `all ${producer.produced} committed after the halt`);
    t.equal(count.duplicates, 0, 'no duplicates after the halt');
  });
}
