/**
 * `verify RUN_DIR` and a store that no longer holds the run: with judged objects in the
 * ledger, an empty prefix or a missing bucket stops the recount (which would call every
 * one of them a mutation) with a message saying what happened and what to do; so does a run
 * recorded on one store when the rig runs the other.
 */
import t from 'tap';
import { heldFaultsOf, objectsGone, otherStore } from '../../../../bin/commands/verify.ts';
import type { ChaosRecord } from '../../../../lib/evidence.ts';

t.test('the objects are gone: the ledger has objects, the prefix is empty or the bucket missing', async (t) => {
  const empty = objectsGone(3688, 0, 's3://clink-qual/run-1/');
  t.match(empty, /^the run's objects are gone: its ledger lists 3688 judged objects, and s3:\/\/clink-qual\/run-1\/ is empty\./);
  t.match(empty, /nothing was written into the run/);
  t.match(empty, /rig up/, 'says what to do');
  t.match(objectsGone(1, 'no bucket', 's3://clink-qual/run-1/'), /1 judged object, and s3:\/\/clink-qual\/run-1\/ is in no bucket/);
});

t.test('a recount goes ahead when there is something to judge, or nothing was judged', async (t) => {
  t.equal(objectsGone(3688, 1, 'p'), undefined, 'some objects listed: recount (a missing one is a mutation)');
  t.equal(objectsGone(0, 0, 'p'), undefined, 'an empty ledger: nothing to lose');
  t.equal(objectsGone(0, 'no bucket', 'p'), undefined);
});

t.test("a run on one store is not recounted against the other (each keeps its own data)", async (t) => {
  t.equal(otherStore('seaweedfs', 'seaweedfs'), undefined);
  t.equal(otherStore('minio', 'minio'), undefined);
  t.equal(otherStore(undefined, 'minio'), undefined, 'a run from before stores were named ran on MinIO');
  const msg = otherStore('seaweedfs', 'minio');
  t.match(msg, /^the run ran on seaweedfs and the rig runs minio/);
  t.match(msg, /rig up --store seaweedfs/, 'says what to do');
  t.match(otherStore(undefined, 'seaweedfs'), /the run ran on minio and the rig runs seaweedfs/);
  t.equal(otherStore('minio', 'minio', 4, 4), undefined, 'the same MinIO layout');
  t.match(otherStore('minio', 'minio', 4, 1), /the run ran on MinIO on 4 drives and the rig's MinIO runs on one drive: .*drives: 4/, "MinIO's other drive layout keeps other data");
  t.match(otherStore(undefined, 'minio', 1, 4), /ran on MinIO on one drive and the rig's MinIO runs on 4 drives/, 'a run from before layouts ran on one drive');
});

t.test('heldFaultsOf: the faults landed held through the recount and not healed yet, with their object and original MD5', async (t) => {
  const rec = (faultId: string, phase: ChaosRecord['phase'], evidence?: Record<string, unknown>): ChaosRecord => ({ t: '2026-12-05T00:00:00.000Z', faultId, kind: 'store-bitrot', phase, ...(evidence ? { evidence } : {}) });
  const chaos = [
    rec('f1', 'landed', { variant: 'committed', key: 'k1', originalMd5: 'm1', heldThroughRecount: true }),
    rec('f2', 'landed', { variant: 'read', key: 'k2', originalMd5: 'm2' }),
    rec('f2', 'healed', {}),
    rec('f3', 'landed', { variant: 'committed', key: 'k3', originalMd5: null, heldThroughRecount: true }),
    rec('f4', 'landed', { variant: 'committed', key: 'k4', originalMd5: 'm4', heldThroughRecount: true }),
    rec('f4', 'healed', { afterHeldRecount: true }),
  ];
  t.same(heldFaultsOf(chaos), [
    { faultId: 'f1', key: 'k1', originalMd5: 'm1' },
    { faultId: 'f3', key: 'k3', originalMd5: null },
  ], 'not the read rot (never held), not one already healed');
  t.same(heldFaultsOf([]), []);
});
