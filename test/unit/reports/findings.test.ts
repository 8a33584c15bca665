import t from 'tap';
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { renderReport, writeReports } from '../../../reports/report.ts';
import { writeFindings, type Finding } from '../../../oracle/findings.ts';

const FIXTURE = path.join(import.meta.dirname, '../../fixtures/run-fail');

const planted: Finding[] = [
  {
    counter: 'duplicates',
    n: 1,
    total: 3,
    event: { p: 2, seq: 4100 },
    range: { from: 4100, to: 4103 },
    objects: [
      { key: 'runs/q/subtask=1/epoch=1/chk=7.jsonl', line: 12, subtask: 1, epoch: 1, checkpoint: 7, firstSeen: null },
      { key: 'runs/q/subtask=1/epoch=2/chk=9.jsonl', line: 1, subtask: 1, epoch: 2, checkpoint: 9, firstSeen: '2026-08-21T10:16:40.000Z' },
    ],
    detail: 'event (2, 4100) and the next 2 committed in runs/q/subtask=1/epoch=1/chk=7.jsonl and again in runs/q/subtask=1/epoch=2/chk=9.jsonl',
    cause: {
      checkpoint: { id: 9, at: '2026-08-21T10:16:30.000Z', epoch: 2 },
      faults: [{ faultId: 'f002', kind: 'partition', target: 'worker-3', landed: '2026-08-21T10:16:10.000Z', recovered: '2026-08-21T10:16:25.000Z', beforeCheckpointS: 20 }],
      epochChange: { epoch: 2, previousEpoch: 1, firstCheckpoint: 9, at: '2026-08-21T10:16:30.000Z' },
    },
  },
];

t.test('the report gets a Findings section and junit the sentence, from a planted findings.jsonl', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cq-rep-findings-'));
  cpSync(FIXTURE, dir, { recursive: true });
  t.notMatch(renderReport(dir), /## Findings\n\nThe first anomalies/, 'no findings.jsonl: no table');
  writeFindings(path.join(dir, 'findings.jsonl'), planted);
  writeReports(dir);
  const md = readFileSync(path.join(dir, 'report.md'), 'utf8');
  t.match(md, /## Findings/);
  t.match(md, /\| duplicates 1\/3 \| \(2, 4100\) … 4102 \| runs\/q\/subtask=1\/epoch=1\/chk=7\.jsonl:12 \(epoch 1, chk 7, subtask 1\) and runs\/q\/subtask=1\/epoch=2\/chk=9\.jsonl:1 \(epoch 2, chk 9, subtask 1\) \| f002 partition worker-3, 20 s before chk 9 \| epoch 2 \(from 1\) from chk 9 \|/);
  t.match(md, /- duplicates = 3 \(1 finding kept\): first, event \(2, 4100\).* nearest fault before its checkpoint 9 completed is f002 \(partition on worker-3\), landed 20 s earlier/);
  const junit = readFileSync(path.join(dir, 'junit.xml'), 'utf8');
  t.match(junit, /<testcase name="duplicates"[^>]*>\s*<failure message="duplicates = 3 \(1 finding kept\): first, event \(2, 4100\)[^"]*f002 \(partition on worker-3\)/);
  t.match(junit, /<testcase name="gaps"[^>]*>\s*<system-out>recount 0[^<]*<\/system-out>\s*<\/testcase>/, 'a zero counter still passes');
});

t.test("a finding on an object the harness's own store-tamper touched is named as the harness's, not the engine's", async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cq-rep-findings-tamper-'));
  cpSync(FIXTURE, dir, { recursive: true });
  const key = 'runs/q/subtask=0/epoch=3/chk=11.jsonl';
  const mutation: Finding = {
    counter: 'mutations',
    n: 1,
    total: 1,
    event: null,
    objects: [{ key, line: null, subtask: 0, epoch: 3, checkpoint: 11, firstSeen: null }],
    detail: `mutation: ${key} was judged as ETag a; now b`,
  };
  writeFindings(path.join(dir, 'findings.jsonl'), [planted[0]!, mutation]);
  const vPath = path.join(dir, 'verdict.json');
  const v = JSON.parse(readFileSync(vPath, 'utf8'));
  v.tamper = { reactions: [{ faultId: 'f004', variant: 'overwrite', keys: [key], reaction: 'not-met' }], harnessMutations: { oracle: 1, recount: 1 }, acceptedForeign: 0 };
  writeFileSync(vPath, JSON.stringify(v));
  const md = renderReport(dir);
  t.match(md, /\| mutations 1\/1 \| — \| runs\/q\/subtask=0\/epoch=3\/chk=11\.jsonl \(epoch 3, chk 11, subtask 0\) \| the harness's own f004 store-tamper \(overwrite\) on this object: reported apart, not the engine's \|/);
  t.match(md, /- mutations = 1 .*\(every finding kept on an object the harness's own store-tamper faults touched/);
  t.match(md, /\| duplicates 1\/3 \|[^\n]*\| f002 partition worker-3, 20 s before chk 9 \|/, "the engine's finding keeps its cause");
  t.match(md, /and 1 mutated object that the harness's own store-tamper faults changed, reported apart/);
});

t.test('a FAIL explains itself: findings right after the verdict, before the lead; the shape they share', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cq-rep-findings-order-'));
  cpSync(FIXTURE, dir, { recursive: true });
  const second: Finding = { ...planted[0]!, n: 2, event: { p: 2, seq: 5200 }, range: { from: 5200, to: 5201 } };
  writeFindings(path.join(dir, 'findings.jsonl'), [planted[0]!, second]);
  const md = renderReport(dir);
  const verdictAt = md.indexOf('**Verdict: FAIL');
  const findingsAt = md.indexOf('## Findings');
  t.ok(verdictAt > 0 && findingsAt > verdictAt, 'the findings follow the verdict');
  t.ok(findingsAt < md.indexOf('This run FAILED'), 'and come before the lead');
  t.ok(findingsAt < md.indexOf('## Provenance') && findingsAt < md.indexOf('## Measured outcome'), 'and before the measured outcome');
  t.match(md, /What the 2 kept findings of duplicates \(of 3 in all; findings\.jsonl keeps the first 2\) share: all on partition 2; all in objects of subtask 1; every one on the first line of the first object after an epoch change/);
  t.notMatch(md, /The store lost data/, 'no F-1 signature in these logs: nothing said about the store');
});

t.test("the store's own loss (F-1) is named in the findings when the collected logs show its signature; the verdict stays", async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cq-rep-findings-f1-'));
  cpSync(FIXTURE, dir, { recursive: true });
  writeFindings(path.join(dir, 'findings.jsonl'), planted);
  const log = path.join(dir, 'logs/worker-3/worker.log');
  writeFileSync(log, readFileSync(log, 'utf8') + '2026-08-21T10:17:00.000Z worker-3 s3_2pc_sink integrity error: subtask=1 checkpoint=9 epoch=2: staged parts missing or changed (InvalidPart) 20 times and no object at runs/q/subtask=1/epoch=2/chk=9.jsonl: the checkpointed records are LOST\n');
  const md = renderReport(dir);
  const section = md.slice(md.indexOf('## Findings'), md.indexOf('\n## ', md.indexOf('## Findings') + 3));
  t.match(section, /\*\*The store lost data\.\*\* 1 line of the logs collected from worker-3 shows a re-commit answered InvalidPart with no object at the key/);
  t.match(section, 'consistent with the store defect F-1 (docs/findings/minio-complete-cancel.md)');
  t.match(md, /\*\*Verdict: FAIL \(safety\)\.\*\*/, 'the verdict is unchanged');
  t.notMatch(md, /every finding above \(if any\) is the engine's/);
});
