/**
 * What the store-tamper fault reads of Flink (engine/flink/tamper.ts): its part-file keys,
 * which part a restore will commit again (by commit time against the latest checkpoint's
 * completion), and a refusal of an object in the job's exception history.
 */
import t from 'tap';
import { flinkIntegrityStop, flinkRecommitTarget, parseFlinkPartKey } from '../../../../engine/flink/tamper.ts';

const U = '3f2a1b0c-9d8e-4f7a-8b6c-5d4e3f2a1b0c';
const V = 'aa11bb22-cc33-4d44-8e55-ff6600778899';
const part = (uuid: string, n: number) => `runs/r1/part-${uuid}-${n}.jsonl`;

t.test('part-file keys: the writer instance and its part counter; other keys do not parse', async (t) => {
  t.same(parseFlinkPartKey(part(U, 12)), { writer: U, part: 12 });
  t.same(parseFlinkPartKey(`part-${V}-0.jsonl`), { writer: V, part: 0 }, 'no prefix');
  t.equal(parseFlinkPartKey('runs/r1/subtask=0/epoch=1/chk=3.jsonl'), null, "Clink's layout");
  t.equal(parseFlinkPartKey(`runs/r1/.part-${U}-3.jsonl.inprogress.x`), null, 'an in-progress name');
  t.equal(parseFlinkPartKey(`runs/r1/part-${U}-3.json`), null, 'another suffix');
  t.equal(parseFlinkPartKey(`runs/r1/part-not-a-uuid-3.jsonl`), null);
});

t.test('the part committed after the latest completed checkpoint is the one a restore commits again', async (t) => {
  const health = {
    lastCompletedCheckpointId: 21,
    checkpoints: [
      { id: 20, epoch: 1, at: '2026-12-04T10:00:00.000Z' },
      { id: 21, epoch: 1, at: '2026-12-04T10:00:06.000Z' },
    ],
  };
  const objects = [
    { key: part(U, 4), size: 500, lastModified: '2026-12-04T10:00:00.030Z' },
    { key: part(V, 4), size: 500, lastModified: '2026-12-04T10:00:00.040Z' },
    { key: part(U, 5), size: 500, lastModified: '2026-12-04T10:00:06.020Z' },
    { key: part(V, 5), size: 700, lastModified: '2026-12-04T10:00:06.020Z' },
    { key: 'runs/r1/foreign.jsonl', size: 9, lastModified: '2026-12-04T10:00:07.000Z' },
  ];
  const got = flinkRecommitTarget(objects, health);
  t.same(got, { key: part(U, 5), size: 500, lastModified: '2026-12-04T10:00:06.020Z', checkpointId: 21 }, 'the newest after 21 completed; a tie goes to the first key; a non-part object is never the target');
  t.equal(flinkRecommitTarget(objects.slice(0, 2), health), null, "21's commits have not landed: parts committed before 21 completed are not placed");
  t.equal(flinkRecommitTarget([{ ...objects[2]!, size: 0 }], health), null, 'an empty part is skipped');
  t.equal(flinkRecommitTarget([{ key: part(U, 5), size: 500 }], health), null, 'no LastModified: not placed');
  t.equal(flinkRecommitTarget(objects, { lastCompletedCheckpointId: null, checkpoints: [] }), null, 'no completed checkpoint');
  t.equal(flinkRecommitTarget(objects, { lastCompletedCheckpointId: 21 }), null, 'no checkpoint times');
  t.equal(flinkRecommitTarget([{ key: part(U, 5), size: 500, lastModified: '2026-12-04T10:00:06.000Z' }], health), null, 'committed at the completion instant: not after it, not placed');
});

t.test("a refusal of an object in the job's exception history is an integrity stop naming the key", async (t) => {
  const key = part(U, 5);
  const lengths = `java.io.IOException: Inconsistent result for object ${key}: conflicting lengths. Recovered committer for upload abc indicates 500 bytes, present object is 499 bytes\n\tat org.apache.flink.fs.s3.common.writer.S3Committer.commitAfterRecovery(S3Committer.java:120)`;
  const missing = `org.apache.flink.runtime.JobException: Recovery is suppressed\nCaused by: java.io.IOException: Recovering commit failed for object ${key}. Object does not exist and MultiPart Upload abc is not valid.\n\tat org.apache.flink.fs.s3.common.writer.S3Committer.commitAfterRecovery(S3Committer.java:131)`;
  const kill = 'org.apache.flink.runtime.jobmaster.JobMasterException: TaskManager with id tm-1 is no longer reachable.';
  t.same(
    flinkIntegrityStop({ exceptionHistory: { entries: [{ exceptionName: 'java.io.IOException', stacktrace: lengths, timestamp: Date.parse('2026-12-04T10:01:00Z') }] } }),
    { at: '2026-12-04T10:01:00.000Z', message: `java.io.IOException: Inconsistent result for object ${key}: conflicting lengths. Recovered committer for upload abc indicates 500 bytes, present object is 499 bytes` },
  );
  const stop = flinkIntegrityStop({
    exceptionHistory: {
      entries: [
        { stacktrace: kill, timestamp: Date.parse('2026-12-04T10:03:00Z') },
        { stacktrace: kill, timestamp: Date.parse('2026-12-04T10:00:00Z'), concurrentExceptions: [{ stacktrace: missing, timestamp: Date.parse('2026-12-04T10:02:00Z') }] },
      ],
    },
  });
  t.equal(stop?.at, '2026-12-04T10:02:00.000Z', 'found among concurrent exceptions');
  t.match(stop?.message, `Recovering commit failed for object ${key}.`, 'the message names the key');
  t.equal(flinkIntegrityStop({ exceptionHistory: { entries: [{ stacktrace: kill, timestamp: 1 }] } }), null, 'a lost TaskManager is no refusal');
  t.equal(flinkIntegrityStop({}), null, 'no history');
  t.equal(flinkIntegrityStop({ 'root-exception': missing, timestamp: Date.parse('2026-12-04T10:05:00Z') })?.at, '2026-12-04T10:05:00.000Z', 'the older root-exception field is read too');
});
