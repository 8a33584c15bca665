/**
 * The oracle's store view: which keys a downstream consumer reads. Hidden names (a last
 * path segment starting with `_` or `.`, the Hadoop convention) are a writer's staging
 * files, such as the unfinished tail Flink's S3 RecoverableWriter puts beside a part that
 * spans checkpoints, and are left unjudged; everything else under the prefix is output.
 */
import t from 'tap';
import { isHiddenKey } from '../../../oracle/store.ts';
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
