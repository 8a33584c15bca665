/**
 * Clink meets an object at its key that it did not write. The store-tamper fault (the same
 * package a campaign runs) tampers with the newest committed object of a subtask, the one
 * the engine re-completes on its next recovery; the coordinator is then killed and started
 * again, so the recovery re-completes that key: NoSuchUpload, then HEAD shows an object that
 * is not the engine's. The correct reaction is a loud integrity stop (the coordinator stops
 * the job, says why in its log and status, and nothing completes after), never taking the
 * object as its own. The heal restores the original (same ETag) and restarts what stopped;
 * the recovery then re-completes against the restored object and every record is committed
 * exactly once.
 *
 * One case per variant: foreign-put (other bytes, no engine metadata), overwrite (other
 * bytes, the engine's token kept: only the ETag differs), delete.
 *
 * CLINK_QUAL_TEST_MUTANT=trust-existing-object runs it against the mutant that accepts any
 * object at its key: the fault's evidence then reads 'accepted' and the test fails.
 */
import t from 'tap';
import type { LandedFault } from '../../chaos/fault.ts';
import { storeTamper } from '../../chaos/store-tamper.ts';
import { COORDINATOR_SERVICE, clinkEngine } from '../../engine/clink/plug.ts';
import { LineProducer, createTopic, rigKit, waitAllCommitted } from '../helpers/rig-kit.ts';
import type { PlannedFault, TamperVariant } from '../../lib/evidence.ts';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { poll } from '../../lib/retry.ts';
import { serviceLogTail, signalService, waitFor, waitPidGone } from '../../rig/process.ts';
import { faultCtx } from '../helpers/clink-rig.ts';

const mutant = process.env.CLINK_QUAL_TEST_MUTANT || undefined;
const kit = rigKit();
const runId = `eng-tamper-${Date.now()}`;
const topic = `clink-${runId}`;
const prefix = `${runId}/`;
const engine = clinkEngine();
const producer = new LineProducer(kit.bootstrap, topic, 4);
const coord = kit.state.hosts.find((h) => h.roles.includes('coordinator'))!;
// Long enough that the tamper and the coordinator kill land before the next checkpoint.
const INTERVAL_MS = 8000;
const ctx = faultCtx(kit, engine, { checkpointIntervalMs: INTERVAL_MS, prefix });
const active: LandedFault[] = [];

t.teardown(async () => {
  for (const f of active) await f.heal().catch(() => undefined);
  await engine.stop().catch(() => undefined);
  await producer.close().catch(() => undefined);
  await kit.close();
});

async function keysOfCheckpoint(id: number): Promise<string[]> {
  const out: string[] = [];
  let token: string | undefined;
  do {
    const r = await kit.s3.send(new ListObjectsV2Command({ Bucket: kit.state.store.bucket, Prefix: prefix, ContinuationToken: token }));
    for (const o of r.Contents ?? []) if (o.Key?.endsWith(`/chk=${id}.jsonl`)) out.push(o.Key);
    token = r.IsTruncated ? r.NextContinuationToken : undefined;
  } while (token);
  return out;
}

/** Produces until a checkpoint with data completed and its objects are visible; returns its id. */
async function freshDataCheckpoint(t: { comment(...a: unknown[]): void }): Promise<number> {
  for (let round = 0; round < 6; round++) {
    const before = (await engine.health()).lastCompletedCheckpointId ?? 0;
    await producer.produce(2000);
    let id = before;
    await waitFor('the next completed checkpoint', async () => ((id = (await engine.health()).lastCompletedCheckpointId ?? 0) > before), 60_000, 200);
    if (await poll(async () => (await keysOfCheckpoint(id)).length > 0, { deadlineMs: 3000, intervalMs: 200 })) return id;
    t.comment(`checkpoint ${id} committed no object (idle); producing again`);
  }
  throw new Error('no checkpoint with data completed');
}

function fault(id: string, variant: TamperVariant): PlannedFault {
  return { id, kind: 'store-tamper', atS: 0, target: kit.state.store.host, variant };
}

t.test('setup', async (t) => {
  await createTopic(kit.bootstrap, topic, 4, 3);
  await engine.deploy(kit.ctx(runId, (l) => t.comment(l)), {
    topic,
    partitions: 4,
    bucket: kit.state.store.bucket,
    prefix,
    checkpointIntervalMs: INTERVAL_MS,
    ...(mutant ? { mutant } : {}),
  });
  await engine.start();
  t.ok((await freshDataCheckpoint(t)) > 0, 'a checkpoint with data completed');
});

for (const variant of ['foreign-put', 'overwrite', 'delete'] as const) {
  t.test(`store-tamper ${variant} on the key the recovery re-completes → integrity stop, then restored and recovered`, async (t) => {
    const chk = await freshDataCheckpoint(t);
    const landed = await storeTamper.inject(fault(`t-${variant}`, variant), ctx(t));
    active.push(landed);
    const ev = landed.evidence as { keys: string[]; inRestoreSet: boolean | null; before: { etag: string }; after: { etag: string } | null; at: string };
    const key = ev.keys[0]!;
    t.match(key, new RegExp(`/chk=${chk}\\.jsonl$`), `tampered ${key} (checkpoint ${chk})`);
    t.equal(ev.inRestoreSet, true, 'the key belongs to the last completed checkpoint (the recovery re-completes it)');
    if (variant === 'delete') t.equal(ev.after, null, 'the object is gone');
    else t.not(ev.after?.etag, ev.before.etag, `ETag ${ev.before.etag} → ${ev.after?.etag}`);

    // A recovery now: the coordinator killed and started again restores from checkpoint `chk`.
    const pid = await signalService(kit.remote(coord.name), COORDINATOR_SERVICE, 'KILL');
    t.ok(pid, `coordinator (pid ${pid}) killed`);
    await waitPidGone(kit.remote(coord.name), pid!, 10_000);
    await engine.restart(coord.name, 'coordinator');

    let stop: { at: string; message: string } | undefined;
    let running = false;
    try {
      await waitFor(
        'an integrity stop naming the tampered key',
        async () => {
          const h = await engine.health();
          stop = h.integrityStop;
          running = h.running;
          return !!stop;
        },
        40_000,
        500,
      );
    } catch {
      /* asserted below */
    }
    t.ok(stop, `the engine stopped loudly on ${key}${stop ? `: ${stop.message}` : ` (no integrity stop in 40 s; job running: ${running})`}`);
    t.match(stop?.message ?? '', key, 'the stop names the key');
    const h1 = await engine.health();
    t.equal(h1.lastCompletedCheckpointId, chk, `no checkpoint completed after the stop (last ${h1.lastCompletedCheckpointId})`);
    const coordLog = await serviceLogTail(kit.remote(coord.name), COORDINATOR_SERVICE, 200);
    t.comment(`coordinator log: ${coordLog.split('\n').filter((l) => /integrity/i.test(l)).slice(-2).join(' | ') || '(no integrity line)'}`);

    const healed = await landed.heal();
    active.splice(active.indexOf(landed), 1);
    t.equal(healed.restoredEtag, ev.before.etag, `restored with the original ETag ${ev.before.etag}`);
    t.equal(healed.reaction, 'integrity-stop', `the fault's evidence reads the reaction: ${String(healed.reaction)}`);
    await waitFor('a checkpoint after the heal', async () => {
      const h = await engine.health();
      return h.running && (h.lastCompletedCheckpointId ?? 0) > chk && !h.integrityStop;
    }, 90_000, 500);
  });
}

t.test('every record committed exactly once', async (t) => {
  await producer.produce(1000);
  const count = await waitAllCommitted(kit.s3, kit.state.store.bucket, prefix, producer.seq, 120_000, (l) => t.comment(l));
  t.equal(count.missing, 0, 'no gaps');
  t.equal(count.duplicates, 0, 'no duplicates');
  t.equal(count.distinct, producer.produced, `all ${producer.produced} committed`);
});
