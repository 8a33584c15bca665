/** What the store-tamper fault and the findings read of Clink's keys (engine/clink/tamper.ts). */
import t from 'tap';
import { clinkPlaceOfObject, clinkRecommitTarget } from '../../../../engine/clink/tamper.ts';
import { NO_PLACE } from '../../../../engine/engine.ts';

t.test('the place of a Clink key; another key has none', async (t) => {
  t.same(clinkPlaceOfObject('runs/x/subtask=2/epoch=3/chk=41.jsonl'), { subtask: 2, epoch: 3, checkpoint: 41 });
  t.same(clinkPlaceOfObject('runs/x/part-0001.jsonl'), NO_PLACE);
});

t.test('the object re-completed at the next recovery: highest checkpoint, then lowest subtask, non-empty', async (t) => {
  const got = clinkRecommitTarget([
    { key: 'p/subtask=0/epoch=1/chk=9.jsonl', size: 10 },
    { key: 'p/subtask=3/epoch=2/chk=12.jsonl', size: 10 },
    { key: 'p/subtask=1/epoch=2/chk=12.jsonl', size: 10 },
    { key: 'p/subtask=0/epoch=2/chk=13.jsonl', size: 0 },
    { key: 'p/other.jsonl', size: 10 },
  ]);
  t.same(got, { key: 'p/subtask=1/epoch=2/chk=12.jsonl', size: 10, checkpointId: 12, subtask: 1 });
  t.equal(clinkRecommitTarget([{ key: 'p/other.jsonl', size: 10 }]), null);
});
