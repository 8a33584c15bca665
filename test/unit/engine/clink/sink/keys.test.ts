/** engine/clink/sink/keys.ts: the key a commit gets and the place read back from it. */
import t from 'tap';
import { clinkObjectKey, parseClinkKey } from '../../../../../engine/clink/sink/keys.ts';

t.test('build and parse: a round trip; other layouts are null', async (t) => {
  const place = { subtask: 2, epoch: 3, checkpointId: 41 };
  t.equal(clinkObjectKey('runs/r1/', place), 'runs/r1/subtask=2/epoch=3/chk=41.jsonl');
  t.same(parseClinkKey(clinkObjectKey('runs/r1/', place)), place);
  t.same(parseClinkKey(clinkObjectKey('', { subtask: 0, epoch: 0, checkpointId: 0 })), { subtask: 0, epoch: 0, checkpointId: 0 });
  t.equal(parseClinkKey('runs/r1/part-0001.jsonl'), null, 'the keys-reused mutant\'s layout');
  t.equal(parseClinkKey('runs/r1/subtask=2/epoch=3/chk=41.jsonl.tmp'), null);
  t.equal(parseClinkKey('runs/r1/subtask=x/epoch=3/chk=41.jsonl'), null);
});
