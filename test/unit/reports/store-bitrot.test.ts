/**
 * reports/store-bitrot.ts on a fixture run (run-pass, copied) given the chaos records of three
 * store-bitrot faults as chaos/store-bitrot.ts and the controller write them, and a
 * recount-held.json as the held pass writes it: the section names each object, file, offset
 * and byte, what the store answered right after, at the held pass and at the heal; without
 * store-bitrot faults there is no section.
 */
import t from 'tap';
import { appendFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { ChaosRecord, HeldRecount } from '../../../lib/evidence.ts';
import { renderReport } from '../../../reports/report.ts';
import { answerWords } from '../../../reports/store-bitrot.ts';
import { copyFixtureRun } from '../../helpers/fixture-run.ts';

const KEY = 'runs/x/subtask=1/epoch=3/chk=12.jsonl';
const FILE = `/h/store/minio-data/clink-qual/${KEY}/0f1e-uuid/part.1`;


const layout = { drives: 1, kind: 'single-drive' };
const records: ChaosRecord[] = [
  {
    t: '2026-08-21T10:20:00.000Z', faultId: 'b1', kind: 'store-bitrot', phase: 'landed',
    evidence: { host: 'store', variant: 'committed', layout, file: FILE, key: KEY, shaDir: null, offset: 4242, fileBytes: 90000, before: '7b', after: '7a', originalMd5: 'aa11', storeAnswer: { answered: 'error', name: 'SlowDown', httpStatus: 503, message: 'unreadable' }, heldThroughRecount: true },
  },
  { t: '2026-08-21T10:20:06.000Z', faultId: 'b1', kind: 'store-bitrot', phase: 'recovered', recoveryS: 6, evidence: { heldThroughRecount: true, from: 'landing' } },
  {
    t: '2026-08-21T10:21:00.000Z', faultId: 'b2', kind: 'store-bitrot', phase: 'landed',
    evidence: { host: 'store', variant: 'staged', layout, file: '/h/store/minio-data/.minio.sys/multipart/abcdef0123456789/u/d/part.1', key: null, shaDir: 'abcdef0123456789', offset: 77, fileBytes: 5000, before: '00', after: '10', originalMd5: null, storeAnswer: { answered: 'not read' } },
  },
  { t: '2026-08-21T10:21:01.000Z', faultId: 'b2', kind: 'store-bitrot', phase: 'healed', evidence: { restored: false, why: 'the byte at 77 is 00: the store repaired it itself' } },
  { t: '2026-08-21T10:29:00.000Z', faultId: 'b1', kind: 'store-bitrot', phase: 'healed', evidence: { host: 'store', file: FILE, key: KEY, restored: true, storeAnswer: { answered: 'bytes', size: 90000, md5: 'aa11', matchesOriginal: true }, afterHeldRecount: true } },
];
const held: HeldRecount = {
  t: '2026-08-21T10:28:50.000Z',
  held: [{ faultId: 'b1', key: KEY }],
  objects: 40,
  answers: [
    { key: KEY, faultId: 'b1', why: ['unreadable', 'held'], answered: 'error', name: 'SlowDownRead', httpStatus: 503, message: 'Resource requested is unreadable', recountError: 'get s3://clink-qual/x: Error: Checksum mismatch' },
    { key: 'runs/x/other.jsonl', why: ['differs'], answered: 'bytes', size: 10, etag: 'e2', md5: 'm2', judged: { etag: 'e1', size: 9 }, matchesJudged: false },
  ],
  durationS: 3.5,
};

t.test('the section names object, file, byte and the store\'s answers, right after, at the held pass and at the heal', async (t) => {
  const dir = copyFixtureRun(t, 'run-pass');
  t.notMatch(renderReport(dir), '### Store bitrot', 'no store-bitrot fault: no section');
  appendFileSync(path.join(dir, 'chaos.jsonl'), records.map((r) => JSON.stringify(r)).join('\n') + '\n');
  writeFileSync(path.join(dir, 'recount-held.json'), JSON.stringify(held, null, 2));
  const md = renderReport(dir);
  t.match(md, '### Store bitrot');
  const row = md.split('\n').find((l) => l.startsWith('| b1 |'))!;
  t.ok(row, 'a row for the committed rot');
  t.match(row, `| committed | single-drive, 1 drive | \`${KEY}\` |`);
  t.match(row, `\`${FILE}\` byte 4242: 7b → 7a`, 'the file, the offset and the byte before and after');
  t.match(row, '| MinIO refused it: HTTP 503 SlowDown |', 'right after the rot (the landing evidence)');
  t.match(row, '| MinIO refused it: HTTP 503 SlowDownRead |', 'at the held pass (recount-held.json)');
  t.match(row, 'after the held pass: byte written back; then MinIO served the intact bytes (MD5 matches the original) |');
  const staged = md.split('\n').find((l) => l.startsWith('| b2 |'))!;
  t.match(staged, 'staged upload (multipart dir `abcdef012345…`)');
  t.match(staged, '| not read (a staged part is read only once its upload is completed) | not held (healed during the run) | not written back: the byte at 77 is 00: the store repaired it itself |');
  t.match(md, '- `runs/x/other.jsonl` (differs): MinIO served 10 bytes (MD5 m2); judged as ETag e1, 9 bytes, now ETag e2, 10 bytes', 'the held pass\'s other findings');
  t.match(md, /\| `recount-held.json` \| [\d,]+ \| the recount's held pass/, 'listed among the raw evidence with what it holds');
});

t.test('a held rot without recount-held.json says so', async (t) => {
  const dir = copyFixtureRun(t, 'run-pass');
  appendFileSync(path.join(dir, 'chaos.jsonl'), records.slice(0, 2).map((r) => JSON.stringify(r)).join('\n') + '\n');
  const row = renderReport(dir).split('\n').find((l) => l.startsWith('| b1 |'))!;
  t.match(row, '| no held pass recorded (recount-held.json missing) | not healed |');
});

t.test('answerWords: erasure serving intact bytes, rotten bytes served, a refusal', async (t) => {
  t.equal(answerWords({ answered: 'bytes', md5: 'x', matchesOriginal: true }, 'MinIO'), 'MinIO served the intact bytes (MD5 matches the original)');
  t.equal(answerWords({ answered: 'bytes', md5: 'y', matchesOriginal: false }, 'MinIO'), '**MinIO served bytes that differ from the original** (MD5 y)');
  t.equal(answerWords({ answered: 'error', name: 'SlowDownRead', httpStatus: 503 }, 'MinIO'), 'MinIO refused it: HTTP 503 SlowDownRead');
  t.equal(answerWords(undefined, 'MinIO'), 'not recorded');
});
