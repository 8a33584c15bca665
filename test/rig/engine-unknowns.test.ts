/**
 * The fault kinds QUAL-03 called "Unknown", landed on Clink through their chaos packages
 * (the same code a campaign runs), each with its landing and healing evidence, and what the
 * engine must do under each:
 *  - clock-step: the coordinator's wall clock jumps back 90 s; checkpoints go on completing
 *    during the step (intervals run on the monotonic clock) and after the step back;
 *  - process-pause: a worker is SIGSTOPped past the worker-loss timeout (a zombie), then
 *    resumed; the job recovers and nothing is committed twice;
 *  - disk-full: the coordinator's state filesystem fills mid-run; the coordinator stops
 *    loudly (its log says why), the heal restarts it, and the checkpoint log holds no torn
 *    record: a later restart resumes from the last completed checkpoint, never an older one.
 * Then every record is committed exactly once.
 *
 * CLINK_QUAL_TEST_MUTANT=torn-log-append runs the same file against the old durable-log
 * behaviour (partial appends kept, the log read up to the tear): the disk-full test then
 * fails, which is the reproduction of that bug.
 */
import t from 'tap';
import { clockStep } from '../../chaos/clock-step.ts';
import { diskFull } from '../../chaos/disk-full.ts';
import type { FaultContext, LandedFault } from '../../chaos/fault.ts';
import { processPause } from '../../chaos/process-pause.ts';
import { parseLog } from '../../engine/clink/durable-log.ts';
import { clinkDir, clinkEngine } from '../../engine/clink/plug.ts';
import { LineProducer, createTopic, rigKit, sleep, waitAllCommitted } from '../helpers/rig-kit.ts';
import type { PlannedFault } from '../../lib/evidence.ts';
import { clockFile, probeClockOffset } from '../../rig/clock.ts';
import { serviceDir, shQuote, signalService, waitPidGone } from '../../rig/process.ts';
import { faultCtx, restartDead, waitCheckpointAfter as waitCheckpointAfterOf } from '../helpers/clink-rig.ts';

const mutant = process.env.CLINK_QUAL_TEST_MUTANT || undefined;
const kit = rigKit();
const runId = `eng-unknowns-${Date.now()}`;
const topic = `clink-${runId}`;
const prefix = `${runId}/`;
const engine = clinkEngine();
const producer = new LineProducer(kit.bootstrap, topic, 4);
const coord = kit.state.hosts.find((h) => h.roles.includes('coordinator'))!;
const ctx = faultCtx(kit, engine, { checkpointIntervalMs: 3000 });
const active: LandedFault[] = [];

t.teardown(async () => {
  for (const f of active) await f.heal().catch(() => undefined);
  await engine.stop().catch(() => undefined);
  await producer.close().catch(() => undefined);
  await kit.close();
});

async function lastCompleted(): Promise<number> {
  return (await engine.health()).lastCompletedCheckpointId ?? 0;
}

const waitCheckpointAfter = (id: number): Promise<number> => waitCheckpointAfterOf(engine, id);

function fault(id: string, f: Omit<PlannedFault, 'id' | 'atS'>): PlannedFault {
  return { id, atS: 0, ...f };
}

/** Lands a fault, keeps producing while it is held, and returns it landed (registered for teardown). */
async function land(t: { comment(...a: unknown[]): void }, pkg: { inject(f: PlannedFault, c: FaultContext): Promise<LandedFault> }, f: PlannedFault): Promise<LandedFault> {
  const landed = await pkg.inject(f, ctx(t));
  active.push(landed);
  return landed;
}

async function heal(landed: LandedFault): Promise<Record<string, unknown>> {
  const ev = await landed.heal();
  active.splice(active.indexOf(landed), 1);
  return ev;
}

t.test('setup: clink under a controlled clock', async (t) => {
  await createTopic(kit.bootstrap, topic, 4, 3);
  // An engine start keeps a clock file it finds: one a crashed earlier run left stepped goes.
  for (const h of kit.state.hosts.filter((x) => x.roles.includes('coordinator') || x.roles.includes('worker'))) await kit.remote(h.name).exec(`rm -f ${shQuote(clockFile(h))}`);
  await engine.deploy(kit.ctx(runId, (l) => t.comment(l)), {
    topic,
    partitions: 4,
    bucket: kit.state.store.bucket,
    prefix,
    checkpointIntervalMs: 3000,
    controlledClock: true,
    ...(mutant ? { mutant } : {}),
  });
  await engine.start();
  const probe = await probeClockOffset(kit.remote(coord.name));
  t.ok(Math.abs(probe.offsetS) <= 2 && probe.spec === '+0', `the coordinator starts on the real clock (${probe.spec}, ${probe.offsetS} s)`);
  await producer.produce(4000);
  t.ok((await waitCheckpointAfter(0)) > 0, 'a first checkpoint completed');
});

t.test('clock-step: the coordinator clock jumps back 90 s; checkpoints go on', async (t) => {
  const before = await lastCompleted();
  const landed = await land(t, clockStep, fault('u-clock', { kind: 'clock-step', target: coord.name, offsetS: -90 }));
  t.equal(landed.evidence.host, coord.name);
  t.ok(Math.abs(Number(landed.evidence.probeOffsetS) + 90) <= 2, `a process under the coordinator host's clock reads ${landed.evidence.probeOffsetS} s`);
  // Input while the clock is back, until two checkpoints have completed under it (at most 15 s).
  for (let i = 0; i < 6 && (i < 2 || (await lastCompleted()) < before + 2); i++) {
    await producer.produce(500);
    await sleep(2500);
  }
  const during = await lastCompleted();
  t.ok(during >= before + 2, `checkpoints completed while the clock was 90 s behind: ${before} → ${during}`);
  const h = await engine.health();
  t.ok(h.lastCompletedAt && Date.parse(h.lastCompletedAt) < Date.now() - 60_000, `the coordinator stamps records with its stepped clock (${h.lastCompletedAt})`);
  const healed = await heal(landed);
  t.ok(Math.abs(Number(healed.probeOffsetS)) <= 2, `after the heal the probe reads ${healed.probeOffsetS} s`);
  await producer.produce(1000);
  t.ok((await waitCheckpointAfter(await lastCompleted())) > during, 'checkpoints complete after the clock stepped forward again');
});

t.test('process-pause: a worker frozen past the loss timeout, then resumed', async (t) => {
  const epochBefore = (await engine.health()).epoch;
  const target = (await engine.activeWorkers())[0]!;
  const landed = await land(t, processPause, fault('u-pause', { kind: 'process-pause', target }));
  t.equal(landed.evidence.stateAfter, 'T', `${target} pid ${landed.evidence.pid} is stopped (state T)`);
  // Input while it sleeps, until the job has been restored without it (at most 10 s).
  for (let i = 0; i < 5 && (i < 2 || (await engine.health()).epoch <= epochBefore); i++) {
    await producer.produce(500);
    await sleep(2000);
  }
  const during = await engine.health();
  t.ok(during.epoch > epochBefore, `the job was restored without it while it slept (epoch ${epochBefore} → ${during.epoch})`);
  const healed = await heal(landed);
  t.ok(healed.samePid === true || typeof healed.restartedPid === 'number', `resumed: ${JSON.stringify(healed)}`);
  await producer.produce(1000);
  await waitCheckpointAfter(await lastCompleted());
  t.ok((await engine.health()).running, 'the job runs after the zombie woke up');
});

t.test('disk-full: the coordinator state filesystem fills; it stops loudly and resumes from an intact log', async (t) => {
  const before = await engine.health();
  const landed = await land(t, diskFull, fault('u-disk', { kind: 'disk-full', target: coord.name }));
  t.match(String(landed.evidence.probeError), /No space left on device/, 'a write on the full filesystem fails with ENOSPC');
  t.ok(Number(landed.evidence.ballastBytes) > 0, `ballast of ${landed.evidence.ballastBytes} bytes`);
  // Input while the disk is full, until the coordinator has met ENOSPC and (the correct one) stopped on it (at most 20 s).
  const coordOut = async () => (await kit.remote(coord.name).exec(`cat ${serviceDir(kit.remote(coord.name), 'clink-coordinator')}/out.log`)).stdout;
  for (let i = 0; i < 8; i++) {
    await producer.produce(500);
    await sleep(2500);
    const o = await coordOut();
    if (i >= 1 && /ENOSPC|no space left/i.test(o) && (mutant === 'torn-log-append' || /FATAL: the checkpoint log could not be appended/.test(o))) break;
  }
  const out = { stdout: await coordOut() };
  const fatal = /FATAL: the checkpoint log could not be appended/.test(out.stdout);
  const failedAppend = /ENOSPC|no space left/i.test(out.stdout);
  t.ok(fatal || mutant === 'torn-log-append', `the coordinator stopped loudly on ENOSPC (its log: ${fatal ? 'FATAL line present' : 'no FATAL line'})`);
  t.ok(failedAppend, 'the coordinator met ENOSPC while the disk was full');
  const healed = await heal(landed);
  t.equal(healed.probeError, null, 'the filesystem takes writes again after the heal');
  t.comment(`heal: ${JSON.stringify(healed)}`);
  await producer.produce(1000);
  const afterHeal = await waitCheckpointAfter(await lastCompleted());
  t.ok(afterHeal > (before.lastCompletedCheckpointId ?? 0), `checkpoint ${afterHeal} completed after the heal`);

  const log = await kit.remote(coord.name).exec(`cat ${clinkDir(coord)}/checkpoints.log`);
  const parsed = parseLog(log.stdout);
  t.equal(parsed.recordsAfterTear, 0, `no good record follows a torn one in the checkpoint log (${parsed.records.length} records, ${parsed.tornBytes} torn bytes)`);

  // A restart must resume from the newest durable checkpoint, never an older one.
  const h0 = await engine.health();
  const pid = await signalService(kit.remote(coord.name), 'clink-coordinator', 'KILL');
  await waitPidGone(kit.remote(coord.name), pid!, 10_000);
  await restartDead(engine);
  await producer.produce(1000);
  const id = await waitCheckpointAfter(h0.lastCompletedCheckpointId ?? 0);
  const h1 = await engine.health();
  t.ok(h1.epoch > h0.epoch, `epoch raised after the restart (${h0.epoch} → ${h1.epoch})`);
  t.ok(h1.completedCheckpoints > h0.completedCheckpoints || id > (h0.lastCompletedCheckpointId ?? 0), `the restarted coordinator went on from checkpoint ${h0.lastCompletedCheckpointId} (now ${id}), with its history intact`);
  const restartLine = (await kit.remote(coord.name).exec(`grep 'log has' ${serviceDir(kit.remote(coord.name), 'clink-coordinator')}/out.log | tail -n 1`)).stdout.trim();
  const m = /last completed (\d+|none)/.exec(restartLine);
  t.equal(Number(m?.[1]), h0.lastCompletedCheckpointId, `the restart read the last completed checkpoint from the log: "${restartLine.slice(0, 200)}"`);
});

t.test('exactly once after all of it', async (t) => {
  await producer.produce(2000);
  const count = await waitAllCommitted(kit.s3, kit.state.store.bucket, prefix, producer.seq, 120_000, (l) => t.comment(l));
  t.equal(count.missing, 0, 'no gaps');
  t.equal(count.duplicates, 0, 'no duplicates');
  t.equal(count.foreign, 0, 'no foreign lines');
  t.equal(count.distinct, producer.produced, `all ${producer.produced} committed`);
});
