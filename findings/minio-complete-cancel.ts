/**
 * Finding F-1 (docs/findings/minio-complete-cancel.md): the pinned MinIO loses a multipart
 * upload when the client goes away while its CompleteMultipartUpload is being served.
 *
 * What it does, on loopback only (no rig needed): starts an S3 store on 127.0.0.1 with a
 * fresh data directory (by default the cached, pinned MinIO that `rig install` put in the
 * cache, on one drive); then, for each trial, creates a multipart upload, uploads two parts
 * (5 MiB and 100 kB), sends CompleteMultipartUpload and aborts that request after a few
 * milliseconds (the client's process dies: its connection closes). With --freeze, the store
 * is also SIGSTOPped before the abort and SIGCONTed after it (a store outage while the
 * request is in flight, as the campaigns' store-outage fault does). Then it reads what a
 * recovering engine finds: the object (HeadObject), the upload (ListParts), and a re-commit
 * with the same parts — what both Clink and Flink do after a crash.
 *
 * A trial is LOST when, after the re-commit, there is no object: the upload's parts are gone
 * (ListParts lists none, or NoSuchUpload) and the re-commit fails (InvalidPart or
 * NoSuchUpload), so the data can never be made visible.
 *
 * The store under test, for the scope table of F-1:
 *   --store minio (default) --bin PATH --label TEXT --drives N
 *       MinIO from PATH (default: the pinned build in the cache), on N drives (1: a single
 *       drive; 4: one erasure set of four drives, `dir/d{1...4}`);
 *   --store seaweedfs --bin PATH --label TEXT
 *       SeaweedFS's `weed server -s3` (master, volume, filer and S3 gateway in one process,
 *       so --freeze stops all of them).
 *
 *   node findings/minio-complete-cancel.ts [--trials N] [--freeze] [--base-delay MS] [store options]
 * Prints one line per trial and `RESULT minio_complete_cancel trials=N lost=L ...`.
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { CompleteMultipartUploadCommand, CreateMultipartUploadCommand, HeadObjectCommand, ListPartsCommand, S3Client, UploadPartCommand } from '@aws-sdk/client-s3';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { readManifest } from '../rig/install.ts';
import { createBucketWhenUp, startLoopbackStore, stopLoopbackStore } from './loopback-store.ts';

const { values } = parseArgs({
  options: {
    trials: { type: 'string', default: '30' },
    freeze: { type: 'boolean', default: false },
    'base-delay': { type: 'string', default: '0' },
    port: { type: 'string', default: '19900' },
    store: { type: 'string', default: 'minio' },
    bin: { type: 'string' },
    label: { type: 'string' },
    drives: { type: 'string', default: '1' },
  },
});
const trials = Number(values.trials);
const base = Number(values['base-delay']);
const port = Number(values.port);
const drives = Number(values.drives);
if (values.store !== 'minio' && values.store !== 'seaweedfs') throw new Error(`--store: minio or seaweedfs, not ${values.store}`);
if (!Number.isInteger(drives) || drives < 1 || (drives > 1 && drives < 4)) throw new Error('--drives: 1 (single drive) or 4 or more (erasure coding)');
const pinned = readManifest().components.find((c) => c.name === 'minio');
let bin = values.bin;
let label = values.label;
if (!bin) {
  if (values.store !== 'minio') throw new Error('--bin: the weed binary to run');
  if (!pinned) throw new Error("MinIO is not in the cache: run './clink-qual rig install' first");
  bin = pinned.path;
  label ??= `minio ${pinned.version}`;
}
label ??= `${values.store} ${bin}`;
const dir = mkdtempSync(path.join(os.tmpdir(), 'cq-finding-f1-'));
const user = 'finding-f1';
const pass = `p-${process.pid}-${Date.now()}`;

const server = startLoopbackStore({ store: values.store, bin, dir, port, user, pass, drives });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const s3 = new S3Client({
  endpoint: `http://127.0.0.1:${port}`,
  region: 'us-east-1',
  forcePathStyle: true,
  credentials: { accessKeyId: user, secretAccessKey: pass },
  maxAttempts: 1,
  requestHandler: new NodeHttpHandler({ requestTimeout: 0 }),
});
const Bucket = 'finding-f1';
const errName = (e: unknown) => (e as Error).name;

async function outcome(Key: string, UploadId: string, parts: { PartNumber: number; ETag?: string }[]) {
  let object = 'absent';
  try {
    object = `present ${(await s3.send(new HeadObjectCommand({ Bucket, Key }))).ContentLength} B`;
  } catch {}
  let upload: string;
  try {
    upload = `${((await s3.send(new ListPartsCommand({ Bucket, Key, UploadId }))).Parts ?? []).length} parts`;
  } catch (e) {
    upload = errName(e);
  }
  let recommit = 'ok';
  try {
    await s3.send(new CompleteMultipartUploadCommand({ Bucket, Key, UploadId, MultipartUpload: { Parts: parts } }));
  } catch (e) {
    recommit = errName(e);
  }
  let after = false;
  try {
    await s3.send(new HeadObjectCommand({ Bucket, Key }));
    after = true;
  } catch {}
  return { object, upload, recommit, lost: !after };
}

let lost = 0;
const lostDetail: Record<string, number> = {};
try {
  await createBucketWhenUp(s3, Bucket);
  console.log(`${label} (${bin}${values.store === 'minio' ? `, ${drives === 1 ? 'single drive' : `erasure, ${drives} drives`}` : ''}) on 127.0.0.1:${port}; ${trials} trials; ${values.freeze ? 'SIGSTOP during the request' : 'no freeze'}; abort ${base}..${base + 9} ms after sending`);
  for (let t = 0; t < trials; t++) {
    const Key = `object-${t}.jsonl`;
    const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket, Key }));
    const parts = [];
    for (const [n, size] of [[1, 5 * 1024 * 1024], [2, 100_000]] as const) {
      const r = await s3.send(new UploadPartCommand({ Bucket, Key, UploadId, PartNumber: n, Body: Buffer.alloc(size, 64 + n) }));
      parts.push({ PartNumber: n, ETag: r.ETag });
    }
    const ac = new AbortController();
    const sent = s3.send(new CompleteMultipartUploadCommand({ Bucket, Key, UploadId, MultipartUpload: { Parts: parts } }), { abortSignal: ac.signal }).then(
      () => 'answered',
      (e) => errName(e),
    );
    const delay = base + (t % 10);
    await sleep(delay);
    if (values.freeze) {
      process.kill(server.pid!, 'SIGSTOP');
      await sleep(200);
    }
    ac.abort();
    if (values.freeze) {
      await sleep(300);
      process.kill(server.pid!, 'SIGCONT');
    }
    const client = await sent;
    await sleep(1500);
    const o = await outcome(Key, UploadId!, parts);
    if (o.lost) {
      lost++;
      const k = `upload ${o.upload}, re-commit ${o.recommit}`;
      lostDetail[k] = (lostDetail[k] ?? 0) + 1;
    }
    console.log(`trial ${t + 1}: abort after ${delay} ms; client saw ${client}; then object ${o.object}, upload ${o.upload}, re-commit ${o.recommit}${o.lost ? ' → LOST' : ''}`);
  }
} finally {
  stopLoopbackStore(server, dir);
}
console.log(`lost trials by what the recovering client saw: ${JSON.stringify(lostDetail)}`);
console.log(`RESULT minio_complete_cancel trials=${trials} lost=${lost} freeze=${values.freeze} store=${JSON.stringify(label)} drives=${values.store === 'minio' ? drives : 'n/a'}`);
