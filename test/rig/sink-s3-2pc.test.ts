/**
 * Integration tests of s3_2pc_sink against the real S3 store (MinIO): the rig's store in CI,
 * or a loopback MinIO for development (CLINK_QUAL_S3_ENDPOINT etc., see
 * test/helpers/endpoints.ts). No fakes here.
 *
 * The store-pause cases SIGSTOP the store through test/helpers/store-pause.ts: the rig's
 * MinIO service over SSH in CI, or the loopback MinIO's own process in development.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  CreateBucketCommand,
  DeleteBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  ListPartsCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import t from 'tap';
import { createS3Client, createS3Sink, listPendingUploads, MIN_PART_SIZE, readJournal, SinkIntegrityError, stripQuotes } from '../../engine/clink/sink/s3-2pc-sink.ts';
import type { S3SinkOptions } from '../../engine/clink/sink/s3-2pc-sink.ts';
import type { Sink, SinkContext } from '../../engine/clink/sink/sink-api.ts';
import { testEndpoints } from '../helpers/endpoints.ts';
import type { ClinkMutant } from '../../engine/clink/mutants/index.ts';
import { storePause } from '../helpers/store-pause.ts';

const ep = testEndpoints();
const admin: S3Client = createS3Client(ep.s3, { requestTimeoutMs: 10_000 });
const dir = mkdtempSync(path.join(tmpdir(), 'sink-rig-'));
const runTag = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
let bucket = `sink-test-${runTag}`;
let ownBucket = true;
const prefix = `sink-test-${runTag}/`;

t.before(async () => {
  try {
    await admin.send(new CreateBucketCommand({ Bucket: bucket }));
  } catch (e) {
    // Not allowed to create buckets: use the rig's bucket under a unique prefix.
    t.comment(`cannot create ${bucket} (${(e as Error).name}); using ${ep.bucket}/${prefix}`);
    bucket = ep.bucket;
    ownBucket = false;
  }
});

t.teardown(async () => {
  try {
    let token: string | undefined;
    do {
      const r = await admin.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }));
      for (const o of r.Contents ?? []) await admin.send(new DeleteObjectCommand({ Bucket: bucket, Key: o.Key }));
      token = r.NextContinuationToken;
    } while (token);
    for (const e of await readJournalsQuiet()) {
      await admin.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: e.key, UploadId: e.uploadId })).catch(() => undefined);
    }
    if (ownBucket) await admin.send(new DeleteBucketCommand({ Bucket: bucket }));
  } finally {
    admin.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
});

const journals: string[] = [];
async function readJournalsQuiet(): Promise<{ key: string; uploadId: string }[]> {
  const out: { key: string; uploadId: string }[] = [];
  for (const j of journals) out.push(...(await readJournal(j)));
  return out;
}

let n = 0;
async function mkSink(opts: { mutant?: ClinkMutant; subtask?: number; sink?: S3SinkOptions } = {}): Promise<{ sink: Sink; logs: string[]; journal: string }> {
  const logs: string[] = [];
  const journal = path.join(dir, `w${n++}`, 'journal.jsonl');
  journals.push(journal);
  const ctx: SinkContext = {
    subtask: opts.subtask ?? 0,
    bucket,
    prefix,
    checkpointIntervalMs: 8000,
    mutant: opts.mutant,
    s3: ep.s3,
    journalPath: journal,
    log: (l) => logs.push(l),
    faultPoint: async () => undefined,
  };
  const sink = createS3Sink(ctx, { backoffBaseMs: 50, backoffCapMs: 1000, ...opts.sink });
  await sink.open();
  return { sink, logs, journal };
}

const line = (p: number, s: number, pad = 0): string => JSON.stringify({ p, seq: s, k: `key-${s % 50000}`, v: 'x'.repeat(pad) });

async function head(key: string): Promise<{ etag: string; size: number; token?: string } | null> {
  try {
    const h = await admin.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
    return { etag: stripQuotes(h.ETag), size: h.ContentLength ?? -1, token: h.Metadata?.['clink-token'] };
  } catch (e) {
    if ((e as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) return null;
    throw e;
  }
}

async function body(key: string): Promise<string> {
  const r = await admin.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return Buffer.from(await r.Body!.transformToByteArray()).toString();
}

t.test('prepare + commit: visible with the expected multipart ETag, size, token and bytes', async (t) => {
  const { sink, logs } = await mkSink({ subtask: 1 });
  t.match(logs[0], /^clink sink open: family=s3_2pc_sink subtask=1 bucket=\S+ prefix=\S+ checkpointIntervalMs=8000 mutant=none$/);
  const lines = Array.from({ length: 100 }, (_, i) => line(1, i));
  for (const l of lines) sink.write(l);
  const [h] = await sink.prepare(5, 2);
  t.equal(h.key, `${prefix}subtask=1/epoch=2/chk=5.jsonl`);
  t.equal(await head(h.key), null, 'not visible after prepare');
  await sink.commit(5, 2, [h]);
  const hd = await head(h.key);
  t.same(hd, { etag: h.expectedEtag, size: h.bytes, token: h.token }, 'HEAD matches the handle');
  t.match(h.expectedEtag, /^[0-9a-f]{32}-1$/);
  t.equal(await body(h.key), lines.join('\n') + '\n', 'exact bytes');

  // Second completion: MinIO answers NoSuchUpload; resolved via HEAD as committed.
  await sink.commit(5, 2, [h]);
  const { sink: s2 } = await mkSink({ subtask: 1 });
  await s2.recover([h], 3);
  t.same(await head(h.key), hd, 'unchanged after re-commit and recovery');
  await sink.close();
  await s2.close();
});

t.test('an object at the key with another token is not taken as the commit', async (t) => {
  const { sink } = await mkSink({ subtask: 2 });
  sink.write(line(2, 1));
  const [h] = await sink.prepare(1, 1);
  await sink.commit(1, 1, [h]);
  const bytes = await body(h.key);
  // Someone else writes the same bytes at the key, without our token.
  await admin.send(new PutObjectCommand({ Bucket: bucket, Key: h.key, Body: bytes, Metadata: { 'clink-token': 'not-ours' } }));
  await t.rejects(sink.commit(1, 1, [h]), SinkIntegrityError);
  await t.rejects(sink.commit(1, 1, [h]), /not ours/);
  await sink.close();
});

t.test('a missing object after NoSuchUpload is a loud error (data loss)', async (t) => {
  const { sink, logs } = await mkSink({ subtask: 3 });
  sink.write(line(3, 1));
  const [h] = await sink.prepare(1, 1);
  await admin.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: h.key, UploadId: h.uploadId }));
  await t.rejects(sink.commit(1, 1, [h]), /LOST/);
  t.ok(logs.some((l) => l.includes('INTEGRITY ERROR')));
  await sink.close();
});

t.test('a buffer over 5 MiB is split into parts and the ETag still matches', async (t) => {
  const { sink } = await mkSink({ subtask: 4 });
  let written = 0;
  let i = 0;
  while (written < MIN_PART_SIZE * 2 + 1234) {
    const l = line(4, i++, 900);
    sink.write(l);
    written += Buffer.byteLength(l) + 1;
  }
  const [h] = await sink.prepare(1, 1);
  t.equal(h.parts.length, 3);
  t.same(h.parts.map((p) => p.size), [MIN_PART_SIZE, MIN_PART_SIZE, written - 2 * MIN_PART_SIZE]);
  t.equal(h.records, i);
  t.match(h.expectedEtag, /-3$/);
  await sink.commit(1, 1, [h]);
  t.same(await head(h.key), { etag: h.expectedEtag, size: written, token: h.token });
  const text = await body(h.key);
  t.equal(text.split('\n').length - 1, i, 'every record, one a line');
  await sink.close();
});

t.test('parts during the interval: uploaded to the real store before the barrier, completed with the rest as one object', async (t) => {
  const { sink } = await mkSink({ subtask: 40 });
  sink.write(line(40, 0));
  const [first] = await sink.prepare(1, 1);
  await sink.commit(1, 1, [first]);
  // Two parts' worth and some lines more (each early part is a part's worth plus under a line),
  // written as the subtask would between two barriers.
  const lines: string[] = [];
  let written = 0;
  while (written < MIN_PART_SIZE * 2 + 5000) {
    const l = line(40, 1 + lines.length, 900);
    lines.push(l);
    sink.write(l);
    written += Buffer.byteLength(l) + 1;
  }
  const key = `${prefix}subtask=40/epoch=1/chk=2.jsonl`;
  // Before the barrier: checkpoint 2's upload exists and holds its first two parts.
  const deadline = Date.now() + 30_000;
  let early: { uploadId: string; parts: number } | null = null;
  while (Date.now() < deadline) {
    const [u] = await listPendingUploads(admin, bucket, await readJournal(journals.at(-1)!)).then((us) => us.filter((x) => x.key === key));
    if (u) {
      const parts = (await admin.send(new ListPartsCommand({ Bucket: bucket, Key: key, UploadId: u.uploadId }))).Parts ?? [];
      if (parts.length === 2) {
        early = { uploadId: u.uploadId, parts: parts.length };
        break;
      }
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  t.ok(early, 'two parts uploaded before the barrier');
  t.equal(await head(key), null, 'nothing visible');
  const [h] = await sink.prepare(2, 1);
  t.equal(h.key, key);
  t.equal(h.uploadId, early?.uploadId, 'the barrier completed the early upload');
  t.equal(h.parts.length, 3, 'two early parts and the rest');
  t.ok(h.parts.slice(0, 2).every((p) => p.size >= MIN_PART_SIZE), 'the early parts are whole parts');
  t.equal(h.records, lines.length);
  await sink.commit(2, 1, [h]);
  t.same(await head(key), { etag: h.expectedEtag, size: written, token: h.token }, 'HEAD matches the handle');
  t.equal(await body(key), lines.join('\n') + '\n', 'exact bytes, in order');
  await sink.close();
});

t.test('listPendingUploads counts an uncompleted upload and not a completed one', async (t) => {
  const { sink, journal } = await mkSink({ subtask: 5 });
  sink.write(line(5, 1));
  const [done] = await sink.prepare(1, 1);
  await sink.commit(1, 1, [done]);
  sink.write(line(5, 2));
  const [open] = await sink.prepare(2, 1);
  const entries = await readJournal(journal);
  t.same(entries.map((e) => e.uploadId), [done.uploadId, open.uploadId]);
  const pending = await listPendingUploads(admin, bucket, entries);
  t.same(pending.map((p) => [p.key, p.uploadId]), [[open.key, open.uploadId]]);
  await sink.commit(2, 1, [open]);
  t.same(await listPendingUploads(admin, bucket, entries), [], 'none after its commit');
  await sink.close();
});

t.test('mutant zero-byte-commit makes a zero-byte object on the real store; the correct sink none', async (t) => {
  const correct = await mkSink({ subtask: 6 });
  t.same(await correct.sink.prepare(1, 1), []);
  const m = await mkSink({ subtask: 7, mutant: 'zero-byte-commit' });
  const [h] = await m.sink.prepare(1, 1);
  await m.sink.commit(1, 1, [h]);
  const hd = await head(h.key);
  t.equal(hd?.size, 0);
  t.equal(hd?.etag, h.expectedEtag);
  await correct.sink.close();
  await m.sink.close();
});

t.test('mutant nosuchupload-rewrite duplicates on the real store after a recovery', async (t) => {
  const { sink } = await mkSink({ subtask: 8, mutant: 'nosuchupload-rewrite' });
  sink.write(line(8, 1));
  const [h] = await sink.prepare(1, 1);
  await sink.commit(1, 1, [h]);
  await sink.recover([h], 2);
  const r = await admin.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: `${prefix}subtask=8/` }));
  t.equal(r.Contents?.length, 2, 'the committed object and its rewrite');
  await sink.close();
});

t.test('store paused during commit: the commit retries and succeeds after resume', async (t) => {
  const { sink, logs } = await mkSink({ subtask: 9, sink: { requestTimeoutMs: 1500, connectionTimeoutMs: 1500 } });
  for (let i = 0; i < 10; i++) sink.write(line(9, i));
  const [h] = await sink.prepare(1, 1);
  let settled = false;
  let p: Promise<void> | undefined;
  const store = await storePause();
  t.comment(`pausing ${store.describe}`);
  await store.pause();
  try {
    p = sink.commit(1, 1, [h]).finally(() => {
      settled = true;
    });
    p.catch(() => undefined);
    await new Promise((r) => setTimeout(r, 6000));
    t.notOk(settled, 'commit has not settled while the store is stopped');
    t.ok(logs.some((l) => /clink sink retry: .*complete/.test(l)), 'the commit is being retried');
  } finally {
    await store.resume();
    await store.close();
  }
  await p;
  for (const l of logs.slice(1)) t.comment(l);
  t.same(await head(h.key), { etag: h.expectedEtag, size: h.bytes, token: h.token }, 'committed after resume');
  await sink.close();
});

t.test(
  'store fact: a completion whose client left while the store was paused destroys the parts; the sink then fails loudly',
  async (t) => {
    const { sink, logs } = await mkSink({ subtask: 10, sink: { invalidPartRetries: 2 } });
    sink.write(line(10, 1));
    const [h] = await sink.prepare(1, 1);
    const quick = createS3Client(ep.s3, { requestTimeoutMs: 60_000 });
    const ac = new AbortController();
    const store = await storePause();
    await store.pause();
    let r: Promise<string>;
    try {
      r = quick
        .send(new CompleteMultipartUploadCommand({ Bucket: bucket, Key: h.key, UploadId: h.uploadId, MultipartUpload: { Parts: h.parts.map((p) => ({ PartNumber: p.partNumber, ETag: p.etag })) } }), { abortSignal: ac.signal })
        .then(() => 'completed', (e: Error) => e.name);
      await new Promise((res) => setTimeout(res, 1500));
      ac.abort(); // the client goes away (a timeout, or a killed worker) while the store is stopped
      t.equal(await r, 'AbortError');
    } finally {
      await store.resume();
      await store.close();
      quick.destroy();
    }
    await new Promise((res) => setTimeout(res, 1500));
    const parts = await admin.send(new ListPartsCommand({ Bucket: bucket, Key: h.key, UploadId: h.uploadId }));
    t.comment(`after resume: upload still listed with ${(parts.Parts ?? []).length} parts; object ${(await head(h.key)) ? 'exists' : 'missing'}`);
    if ((parts.Parts ?? []).length === 0 && (await head(h.key)) === null) {
      // The store lost the staged data: the sink must say so, never skip.
      await t.rejects(sink.commit(1, 1, [h]), SinkIntegrityError);
      t.ok(logs.some((l) => l.includes('INTEGRITY ERROR') && l.includes('LOST')));
    } else {
      // A store without this behaviour: the commit must simply succeed.
      await sink.commit(1, 1, [h]);
      t.same(await head(h.key), { etag: h.expectedEtag, size: h.bytes, token: h.token });
    }
    await sink.close();
  },
);
