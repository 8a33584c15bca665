/**
 * `verify RUN_DIR` and a store that no longer holds the run: with judged objects in the
 * ledger, an empty prefix or a missing bucket stops the recount (which would call every
 * one of them a mutation) with a message saying what happened and what to do.
 */
import t from 'tap';
import { objectsGone } from '../../../../bin/commands/verify.ts';

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
