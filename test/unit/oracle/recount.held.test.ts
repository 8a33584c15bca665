/**
 * oracle/recount.ts's held pass against a real MinIO on loopback (the pinned build from the
 * install cache; skipped when it is not installed), single drive: one committed object's data
 * rotted on disk as store-bitrot rots it (a bit in the second half of the xl.meta that inlines
 * a small object, MinIO frozen meanwhile). The verdict's recount fails on it; the held pass
 * records it with the store's answer instead, and records an object whose ETag differs from
 * the judged one (the store's own error code read by a client that does not check the
 * response's CRC32, as the AWS SDK's default does); once the byte is written back, the held pass records the watched object's
 * intact bytes. No rig is touched: MinIO runs as this test's own child process.
 */
import t from 'tap';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import os from 'node:os';
import path from 'node:path';
import { CreateBucketCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { planBitrot } from '../../../chaos/store-bitrot.ts';
import { Generator } from '../../../oracle/generator.ts';
import { recount } from '../../../oracle/recount.ts';
import { readManifest } from '../../../rig/install.ts';
import type { HeldRecount } from '../../../lib/evidence.ts';

let bin: string | undefined;
try {
  bin = readManifest().components.find((c) => c.name === 'minio')?.path;
} catch {
  bin = undefined;
}
if (!bin || !existsSync(bin)) {
  t.plan(0, "skipped: MinIO is not in the install cache ('rig install' puts it there)");
  process.exit(0);
}

const SPEC = { seed: 'recount-held-seed', partitions: 1, keys: 100 };
const gen = new Generator(SPEC);
const lines = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => gen.line(0, from + i) + '\n').join('');
const dir = mkdtempSync(path.join(os.tmpdir(), 'cq-recount-held-'));
const data = path.join(dir, 'data');
const port = 20_000 + (process.pid % 5000) * 2;
const endpoint = `http://127.0.0.1:${port}`;
const credentials = { accessKeyId: 'recount-held', secretAccessKey: `p-${process.pid}-${Date.now()}` };
const bucket = 'held';
const prefix = 'run/';
const server: ChildProcess = spawn(bin, ['server', data, '--address', `127.0.0.1:${port}`, '--console-address', `127.0.0.1:${port + 1}`, '--quiet'], {
  env: { ...process.env, MINIO_ROOT_USER: credentials.accessKeyId, MINIO_ROOT_PASSWORD: credentials.secretAccessKey, MINIO_UPDATE: 'off' },
  stdio: 'ignore',
});
t.teardown(() => {
  server.kill('SIGCONT');
  server.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});
for (let i = 0; ; i++) {
  const live = await fetch(`${endpoint}/minio/health/live`).then((r) => r.status === 200).catch(() => false);
  if (live) break;
  if (i > 300) throw new Error('the loopback MinIO did not start');
  await new Promise((r) => setTimeout(r, 100));
}
const s3 = new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials, maxAttempts: 1 });
t.teardown(() => s3.destroy());
await s3.send(new CreateBucketCommand({ Bucket: bucket }));
const objects = [
  { key: `${prefix}a.jsonl`, body: lines(0, 40) },
  { key: `${prefix}b.jsonl`, body: lines(40, 80) },
  { key: `${prefix}c.jsonl`, body: lines(80, 120) },
];
const etags = new Map<string, string>();
for (const o of objects) etags.set(o.key, (await s3.send(new PutObjectCommand({ Bucket: bucket, Key: o.key, Body: o.body }))).ETag!.replace(/"/g, ''));
const md5 = (s: string) => createHash('md5').update(s).digest('hex');
const rotten = objects[1]!;

// The ledger the oracle wrote: every object judged, c.jsonl as another version than the store holds now.
const ledgerPath = path.join(dir, 'ledger.jsonl');
writeFileSync(
  ledgerPath,
  objects.map((o) => JSON.stringify({ key: o.key, etag: o.key.endsWith('c.jsonl') ? '0123456789abcdef0123456789abcdef' : etags.get(o.key), size: Buffer.byteLength(o.body), lines: 40, firstSeen: '2026-12-05T00:00:00.000Z' })).join('\n') + '\n',
);

/** Flips (or flips back) the bit store-bitrot would in the rotten object's xl.meta, MinIO frozen meanwhile. */
function flip(): { file: string; offset: number } {
  const file = path.join(data, bucket, rotten.key, 'xl.meta');
  t.notOk(readdirSync(path.dirname(file)).some((e) => e !== 'xl.meta'), 'a small object: inlined in its xl.meta, no part file');
  server.kill('SIGSTOP');
  try {
    const bytes = readFileSync(file);
    const plan = planBitrot(bytes.length, 'f001', 'xl.meta')!;
    bytes[plan.offset] = bytes[plan.offset]! ^ plan.mask;
    writeFileSync(file, bytes);
    return { file, offset: plan.offset };
  } finally {
    server.kill('SIGCONT');
  }
}

const settings = { ...SPEC, bucket, prefix, endpoint, region: 'us-east-1' };
const watch = [{ faultId: 'f001', key: rotten.key, originalMd5: md5(rotten.body) }];
flip();

t.test("the verdict's recount fails on an object the store will not serve", async (t) => {
  await t.rejects(recount({ settings, credentials, produced: [120], ledgerPath, attempts: 1, judgeWorkers: 0 }), { message: new RegExp(`get s3://${bucket}/${rotten.key}`) });
});

t.test('the held pass records it with the store\'s answer, and the object whose ETag differs from the judged one, instead of failing', async (t) => {
  const r = await recount({ settings, credentials, produced: [120], ledgerPath, attempts: 2, judgeWorkers: 0, held: { watch } });
  const answers = r.storeAnswers!;
  t.same(answers.map((a) => a.key), [rotten.key, objects[2]!.key], 'the rotten object and the differing one; the intact, judged one is not listed');
  const refused = answers[0]!;
  t.match(refused, { key: rotten.key, faultId: 'f001', why: ['unreadable', 'held'], answered: 'error' });
  t.equal(refused.httpStatus, 503, `MinIO refuses the rotten object: ${refused.name} ${refused.message}`);
  t.equal(refused.name, 'SlowDownRead', "named by the store's own error code (docs/findings/minio-bitrot.md), read without the CRC32 check");
  t.match(refused.recountError, new RegExp(`get s3://${bucket}/${rotten.key}`), "the recount's own read's error kept beside it");
  t.match(answers[1], { key: objects[2]!.key, why: ['differs'], answered: 'bytes', etag: etags.get(objects[2]!.key), judged: { etag: '0123456789abcdef0123456789abcdef' }, matchesJudged: false, md5: md5(objects[2]!.body) });
  t.notOk('faultId' in answers[1]!, 'no held fault rotted it');
  t.equal(r.recount.objects, 2, 'the two served objects were judged; the refused one was not');
});

t.test('verify RUN_DIR --held (what the campaign runner spawns) writes recount-held.json from the held faults in chaos.jsonl, and no recount.json', async (t) => {
  const run = path.join(dir, 'run');
  mkdirSync(run);
  writeFileSync(path.join(run, 'campaign.resolved.json'), JSON.stringify({ oracle: settings }));
  writeFileSync(path.join(run, 'produced.json'), JSON.stringify({ perPartition: [120] }));
  writeFileSync(path.join(run, 'ledger.jsonl'), readFileSync(ledgerPath));
  const landed = { t: '2026-12-05T00:00:00.000Z', faultId: 'f001', kind: 'store-bitrot', phase: 'landed', evidence: { variant: 'committed', key: rotten.key, originalMd5: md5(rotten.body), heldThroughRecount: true } };
  writeFileSync(path.join(run, 'chaos.jsonl'), JSON.stringify(landed) + '\n');
  const cli = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'bin', 'clink-qual.ts');
  const r = spawnSync(process.execPath, [cli, 'verify', run, '--held', '--json'], { encoding: 'utf8', timeout: 120_000, env: { ...process.env, AWS_ACCESS_KEY_ID: credentials.accessKeyId, AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey } });
  t.equal(r.status, 0, r.stderr);
  const held = JSON.parse(readFileSync(path.join(run, 'recount-held.json'), 'utf8')) as HeldRecount;
  t.same(held.held, [{ faultId: 'f001', key: rotten.key }]);
  t.match(held.answers.find((a) => a.key === rotten.key), { faultId: 'f001', answered: 'error', name: 'SlowDownRead', httpStatus: 503 });
  t.notOk(existsSync(path.join(run, 'recount.json')), "the verdict's recount.json is not the held pass's to write");
});

t.test('once healed, the held pass records the watched object with its intact bytes', async (t) => {
  flip(); // the bit flipped back: the fault's heal
  const r = await recount({ settings, credentials, produced: [120], ledgerPath, attempts: 2, judgeWorkers: 0, held: { watch } });
  t.match(r.storeAnswers![0], { key: rotten.key, faultId: 'f001', why: ['held'], answered: 'bytes', md5: md5(rotten.body), matchesOriginal: true, matchesJudged: true });
  const plain = await recount({ settings, credentials, produced: [120], ledgerPath, attempts: 1, judgeWorkers: 0 });
  t.equal(plain.recount.distinctEvents, 120, "the verdict's recount reads every event again");
  t.notOk('storeAnswers' in plain, 'only the held pass records store answers');
});
