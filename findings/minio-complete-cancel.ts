/**
 * Finding F-1 (docs/findings/minio-complete-cancel.md): the pinned MinIO loses a multipart
 * upload when the client goes away while its CompleteMultipartUpload is being served.
 *
 * What it does, on loopback only (no rig needed): starts the cached, pinned MinIO
 * (`rig install` put it in the cache) on 127.0.0.1 with a fresh data directory; then, for
 * each trial, creates a multipart upload, uploads two parts (5 MiB and 100 kB), sends
 * CompleteMultipartUpload and aborts that request after a few milliseconds (the client's
 * process dies: its connection closes). With --freeze, MinIO is also SIGSTOPped before the
 * abort and SIGCONTed after it (a store outage while the request is in flight, as the
 * campaigns' store-outage fault does). Then it reads what a recovering engine finds: the
 * object (HeadObject), the upload (ListParts), and a re-commit with the same parts — what
 * both Clink and Flink do after a crash.
 *
 * A trial is LOST when, after the re-commit, there is no object: the upload's parts are gone
 * (ListParts lists none, or NoSuchUpload) and the re-commit fails (InvalidPart or
 * NoSuchUpload), so the data can never be made visible.
 *
 *   node findings/minio-complete-cancel.ts [--trials N] [--freeze] [--base-delay MS]
 * Prints one line per trial and `RESULT minio_complete_cancel trials=N lost=L ...`.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { CompleteMultipartUploadCommand, CreateBucketCommand, CreateMultipartUploadCommand, HeadObjectCommand, ListPartsCommand, S3Client, UploadPartCommand } from '@aws-sdk/client-s3';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { readManifest } from '../rig/install.ts';

const { values } = parseArgs({ options: { trials: { type: 'string', default: '30' }, freeze: { type: 'boolean', default: false }, 'base-delay': { type: 'string', default: '0' }, port: { type: 'string', default: '19900' } } });
const trials = Number(values.trials);
const base = Number(values['base-delay']);
const port = Number(values.port);
const minio = readManifest().components.find((c) => c.name === 'minio');
if (!minio) throw new Error("MinIO is not in the cache: run './clink-qual rig install' first");
const dir = mkdtempSync(path.join(os.tmpdir(), 'cq-finding-f1-'));
const user = 'finding-f1';
const pass = `p-${process.pid}-${Date.now()}`;
const server = spawn(minio.path, ['server', path.join(dir, 'data'), '--address', `127.0.0.1:${port}`, '--console-address', `127.0.0.1:${port + 1}`, '--quiet'], {
  env: { ...process.env, MINIO_ROOT_USER: user, MINIO_ROOT_PASSWORD: pass, MINIO_UPDATE: 'off' },
  stdio: 'ignore',
});
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
  for (let i = 0; i < 120; i++) {
    try {
      await s3.send(new CreateBucketCommand({ Bucket }));
      break;
    } catch (e) {
      if (errName(e) === 'BucketAlreadyOwnedByYou') break;
      await sleep(500);
    }
  }
  console.log(`minio ${minio.version} (${minio.path}) on 127.0.0.1:${port}; ${trials} trials; ${values.freeze ? 'SIGSTOP during the request' : 'no freeze'}; abort ${base}..${base + 9} ms after sending`);
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
  server.kill('SIGCONT');
  server.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
}
console.log(`lost trials by what the recovering client saw: ${JSON.stringify(lostDetail)}`);
console.log(`RESULT minio_complete_cancel trials=${trials} lost=${lost} freeze=${values.freeze} minio=${minio.version}`);
