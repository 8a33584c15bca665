/**
 * The oracle's store view: which keys a downstream consumer reads. Hidden names (a last
 * path segment starting with `_` or `.`, the Hadoop convention) are a writer's staging
 * files, such as the unfinished tail Flink's S3 RecoverableWriter puts beside a part that
 * spans checkpoints, and are left unjudged; everything else under the prefix is output.
 * forEachPaged runs over a paginated listing as its pages arrive, at a bounded concurrency.
 */
import t from 'tap';
import { forEachPaged, isHiddenKey } from '../../../oracle/store.ts';
import { clinkObjectKey } from '../../../engine/clink/sink/keys.ts';

t.test('hidden: the last path segment starts with _ or .', async (t) => {
  t.ok(isHiddenKey('runs/r1/_part-3f2a-0.jsonl_tmp_9c1e7d2a-1b2c-4d5e-8f90-123456789abc'), "Flink's S3 RecoverableWriter tail of an open part");
  t.ok(isHiddenKey('runs/r1/.part-3f2a-0.jsonl.inprogress.1234'), "a local/HDFS writer's in-progress file");
  t.ok(isHiddenKey('runs/r1/_SUCCESS'), 'a marker file');
  t.ok(isHiddenKey('_tmp'), 'a key without a slash is its own name');
});

t.test('visible: every other key, whatever its directories are called', async (t) => {
  t.notOk(isHiddenKey('runs/r1/part-3f2a-0.jsonl'), "Flink's committed part");
  t.notOk(isHiddenKey(clinkObjectKey('runs/r1/', { subtask: 0, epoch: 1, checkpointId: 12 })), "Clink's object (its own key builder): Clink writes no hidden name");
  t.notOk(isHiddenKey('runs/_r1/part-0.jsonl'), 'a hidden directory name does not hide the object: only the name counts');
  t.notOk(isHiddenKey('runs/r1/a_b.jsonl'), 'an underscore inside the name does not hide it');
  t.notOk(isHiddenKey('runs/r1/'), 'an empty name (a directory marker) is not hidden by this rule');
});

t.test('forEachPaged: starts on the first page before the last has come, never more than the concurrency in flight', async (t) => {
  let releaseLast!: () => void;
  const lastPage = new Promise<void>((r) => (releaseLast = r));
  const started: number[] = [];
  async function* pages(): AsyncGenerator<number[]> {
    yield [1, 2, 3];
    await lastPage; // held until an item of the first page has run
    yield [4, 5];
  }
  let inFlight = 0;
  let most = 0;
  const n = await forEachPaged(pages(), 2, async (i) => {
    started.push(i);
    inFlight++;
    most = Math.max(most, inFlight);
    releaseLast();
    await new Promise((r) => setTimeout(r, 5));
    inFlight--;
  });
  t.equal(n, 5);
  t.strictSame([...started].sort(), [1, 2, 3, 4, 5], 'every item once');
  t.equal(most, 2, 'the concurrency, no more');
});

t.test("forEachPaged: the first failure, of an item or of the pages, is thrown after those in flight end", async (t) => {
  const seen: number[] = [];
  async function* pages(): AsyncGenerator<number[]> {
    yield [1, 2, 3, 4, 5, 6];
  }
  const err = await forEachPaged(pages(), 1, async (i) => {
    seen.push(i);
    if (i === 2) throw new Error('item 2 failed');
  }).catch((e: unknown) => e);
  t.match((err as Error).message, 'item 2 failed');
  t.strictSame(seen, [1, 2], 'no new item after the failure');
  async function* broken(): AsyncGenerator<number[]> {
    yield [1];
    throw new Error('listing failed');
  }
  const err2 = await forEachPaged(broken(), 2, async () => {}).catch((e: unknown) => e);
  t.match((err2 as Error).message, 'listing failed');
});
