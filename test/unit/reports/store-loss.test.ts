import t from 'tap';
import { storeLossSignature } from '../../../reports/store-loss.ts';

t.test("F-1's signature: a re-commit answered InvalidPart with no object at the key, in Clink's and Flink's words", async (t) => {
  const clink = '2026-12-03T23:36:00Z worker-3 s3_2pc_sink integrity error: subtask=1 checkpoint=42 epoch=3: staged parts missing or changed (InvalidPart) 20 times and no object at runs/x/subtask=1/epoch=3/chk=42.jsonl: the checkpointed records are LOST (InvalidPart)';
  const flink = 'java.io.IOException: Recovering commit failed for object runs/x/part-94d2-14.jsonl. Object does not exist and MultiPart Upload 3f2a is not valid.';
  const s = storeLossSignature([
    { path: 'logs/worker-3/worker.log', text: `started\n${clink}\nother\n` },
    { path: 'logs/worker-2/taskmanager.log', text: `${flink}\n${flink}\n` },
  ]);
  t.same(s, { lines: 3, hosts: ['worker-2', 'worker-3'], example: clink });
});

t.test('no signature: InvalidPart resolved (the object is there), NoSuchUpload after a finished completion, no logs', async (t) => {
  t.equal(storeLossSignature([{ path: 'logs/worker-1/worker.log', text: 'completion refused (InvalidPart); the object at k is ours: resolved\nNoSuchUpload: object present with the expected ETag\n' }]), null);
  t.equal(storeLossSignature([]), null);
});

t.test("a refusal of an object the harness itself deleted (a store-tamper fault's key) is the engine's reaction, not the store's loss", async (t) => {
  const key = 'runs/r1/part-9c568b2b-ef5b-4b89-9e8b-e3bca27ee64e-0.jsonl';
  const line = `java.io.IOException: Recovering commit failed for object ${key}. Object does not exist and MultiPart Upload MWVj is not valid.`;
  const other = 'java.io.IOException: Recovering commit failed for object runs/r1/part-aaaa-1.jsonl. Object does not exist and MultiPart Upload Zm9v is not valid.';
  const logs = [{ path: 'logs/worker-2/taskmanager.log', text: `${line}\n` }];
  t.ok(storeLossSignature(logs), 'without the tamper, the line is the signature');
  t.equal(storeLossSignature(logs, [key]), null, "with the tampered key, it is not counted");
  const both = storeLossSignature([{ path: 'logs/worker-2/taskmanager.log', text: `${line}\n${other}\n` }], [key]);
  t.equal(both?.lines, 1, 'a loss of another object still counts');
  t.match(both?.example ?? '', 'part-aaaa-1');
});
