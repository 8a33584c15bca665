/**
 * The S3 answers a streaming sink depends on, measured on one store on loopback (no rig):
 * what docs/stores.md tabulates for MinIO and SeaweedFS.
 *
 * Starts the store on 127.0.0.1 (high ports, a fresh temporary data directory, removed
 * after): the pinned MinIO or the pinned SeaweedFS from the install cache (`rig install`),
 * SeaweedFS with the rig's own command line (rig/store.ts seaweedfsCommand). Then measures:
 *   - health:       the rig's liveness probe path answers 200;
 *   - etag:         a two-part object's ETag (5 MiB + 100 kB) from CompleteMultipartUpload,
 *                   HeadObject and ListObjectsV2, against hex(md5(md5(part1) ‖ md5(part2)))-2;
 *   - small-part:   CompleteMultipartUpload of a first part under 5 MiB;
 *   - complete-unknown:   CompleteMultipartUpload with an upload id the store never issued;
 *   - complete-again:     a second CompleteMultipartUpload of a completed upload, and whether the object changed;
 *   - no-such-upload:     ListParts, UploadPart and AbortMultipartUpload on an unknown id;
 *   - list-uploads: ListMultipartUploads with an empty prefix, a directory prefix and the exact
 *                   key, with two uploads pending; again after the store is restarted on its data;
 *   - read-after-write:   TRIALS puts each followed at once by ListObjectsV2 and GetObject: how
 *                   many were not listed / not read back.
 *
 *   node findings/store-semantics.ts --store minio|seaweedfs [--bin PATH] [--port 19700] [--trials 200]
 * Prints one line per measurement and `RESULT store_semantics store=... ` at the end.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  ListPartsCommand,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { component, PINS, readManifest } from '../rig/install.ts';
import { seaweedfsCommand, seaweedfsIdentities, STORE_HEALTH_PATHS } from '../rig/store.ts';
import { STORE_KINDS, type StoreKind } from '../rig/types.ts';

const { values } = parseArgs({ options: { store: { type: 'string', default: 'minio' }, bin: { type: 'string' }, port: { type: 'string', default: '19700' }, trials: { type: 'string', default: '200' } } });
const kind = values.store as StoreKind;
if (!(STORE_KINDS as readonly string[]).includes(kind)) throw new Error(`--store: one of ${STORE_KINDS.join(', ')}`);
const port = Number(values.port);
const trials = Number(values.trials);
// The installed build (the manifest's), or --bin: a build of the pinned version not yet in the manifest.
const bin = values.bin ? { path: values.bin, version: `${PINS[kind]} (--bin)` } : component(readManifest(), kind);
const dir = mkdtempSync(path.join(os.tmpdir(), `cq-store-semantics-${kind}-`));
const creds = { accessKeyId: 'semantics', secretAccessKey: `s-${process.pid}-${Date.now()}` };
const endpoint = `http://127.0.0.1:${port}`;

/** Starts the store on its data directory (the same one on a restart). */
function start(): ChildProcess {
  if (kind === 'minio') {
    mkdirSync(path.join(dir, 'data'), { recursive: true });
    return spawn(bin.path, ['server', path.join(dir, 'data'), '--address', `127.0.0.1:${port}`, '--console-address', `127.0.0.1:${port + 1}`, '--quiet'], {
      env: { ...process.env, MINIO_ROOT_USER: creds.accessKeyId, MINIO_ROOT_PASSWORD: creds.secretAccessKey, MINIO_UPDATE: 'off', MINIO_API_STALE_UPLOADS_EXPIRY: '72h' },
      stdio: 'ignore',
    });
  }
  const identities = path.join(dir, 's3.json');
  writeFileSync(identities, seaweedfsIdentities(creds), { mode: 0o600 });
  mkdirSync(path.join(dir, 'weed'), { recursive: true });
  const cmd = seaweedfsCommand(bin.path, '127.0.0.1', path.join(dir, 'weed'), identities, { s3: port, master: port + 2, volume: port + 3, filer: port + 4 });
  return spawn('bash', ['-c', `exec ${cmd}`], { stdio: 'ignore' });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const s3 = new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials: creds, maxAttempts: 1 });
const Bucket = 'semantics';
const md5 = (b: Buffer) => createHash('md5').update(b).digest();
/** The error's name and HTTP status, or 'ok'. */
async function answer(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'ok';
  } catch (e) {
    return `${(e as Error).name} (HTTP ${(e as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode ?? '?'})`;
  }
}
const out = (name: string, text: string) => console.log(`${name}: ${text}`);

async function ready(): Promise<number> {
  const t = Date.now();
  for (;;) {
    try {
      await s3.send(new CreateBucketCommand({ Bucket }));
      return Date.now() - t;
    } catch (e) {
      if ((e as Error).name === 'BucketAlreadyOwnedByYou' || (e as Error).name === 'BucketAlreadyExists') return Date.now() - t;
      if (Date.now() - t > 120_000) throw e;
      await sleep(250);
    }
  }
}

async function twoPartUpload(Key: string, first = 5 * 1024 * 1024) {
  const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket, Key }));
  const bodies = [Buffer.alloc(first, 65), Buffer.alloc(100_000, 66)];
  const parts = [];
  for (const [i, Body] of bodies.entries()) parts.push({ PartNumber: i + 1, ETag: (await s3.send(new UploadPartCommand({ Bucket, Key, UploadId, PartNumber: i + 1, Body }))).ETag });
  return { UploadId: UploadId!, parts, expected: `"${md5(Buffer.concat(bodies.map(md5))).toString('hex')}-2"` };
}

let server = start();
try {
  out('store', `${kind} ${bin.version} (${bin.path}) on ${endpoint}; ready after ${await ready()} ms`);
  const h = await fetch(`${endpoint}${STORE_HEALTH_PATHS[kind]}`);
  out('health', `GET ${STORE_HEALTH_PATHS[kind]} → ${h.status}`);

  const key = 'etag/object.jsonl';
  const up = await twoPartUpload(key);
  const done = await s3.send(new CompleteMultipartUploadCommand({ Bucket, Key: key, UploadId: up.UploadId, MultipartUpload: { Parts: up.parts } }));
  const head = await s3.send(new HeadObjectCommand({ Bucket, Key: key }));
  const listed = (await s3.send(new ListObjectsV2Command({ Bucket, Prefix: 'etag/' }))).Contents?.[0]?.ETag;
  out('etag', `expected ${up.expected}; complete ${done.ETag}; head ${head.ETag}; list ${listed}; all equal the md5-of-md5s form: ${[done.ETag, head.ETag, listed].every((e) => e === up.expected)}`);

  const small = await twoPartUpload('small/object.jsonl', 1024);
  out('small-part', `complete with a 1 KiB first part → ${await answer(s3.send(new CompleteMultipartUploadCommand({ Bucket, Key: 'small/object.jsonl', UploadId: small.UploadId, MultipartUpload: { Parts: small.parts } })))}`);

  const unknown = kind === 'minio' ? Buffer.from(`${randomUUID()}x${Date.now()}`).toString('base64url') : randomUUID().replace(/-/g, '');
  out('complete-unknown', `CompleteMultipartUpload, unknown upload id, existing key → ${await answer(s3.send(new CompleteMultipartUploadCommand({ Bucket, Key: key, UploadId: unknown, MultipartUpload: { Parts: up.parts } })))}`);
  out('complete-unknown-key', `CompleteMultipartUpload, unknown upload id, absent key → ${await answer(s3.send(new CompleteMultipartUploadCommand({ Bucket, Key: 'absent/object.jsonl', UploadId: unknown, MultipartUpload: { Parts: up.parts } })))}`);
  const again = await answer(s3.send(new CompleteMultipartUploadCommand({ Bucket, Key: key, UploadId: up.UploadId, MultipartUpload: { Parts: up.parts } })));
  const headAgain = await s3.send(new HeadObjectCommand({ Bucket, Key: key }));
  out('complete-again', `second CompleteMultipartUpload of the completed upload → ${again}; object after: ETag ${headAgain.ETag}, ${headAgain.ContentLength} B, unchanged: ${headAgain.ETag === head.ETag && headAgain.ContentLength === head.ContentLength}`);

  out('no-such-upload', [
    `ListParts → ${await answer(s3.send(new ListPartsCommand({ Bucket, Key: key, UploadId: unknown })))}`,
    `UploadPart → ${await answer(s3.send(new UploadPartCommand({ Bucket, Key: key, UploadId: unknown, PartNumber: 1, Body: Buffer.from('x') })))}`,
    `AbortMultipartUpload → ${await answer(s3.send(new AbortMultipartUploadCommand({ Bucket, Key: key, UploadId: unknown })))}`,
    `ListParts of the completed upload → ${await answer(s3.send(new ListPartsCommand({ Bucket, Key: key, UploadId: up.UploadId })))}`,
    `AbortMultipartUpload of the completed upload → ${await answer(s3.send(new AbortMultipartUploadCommand({ Bucket, Key: key, UploadId: up.UploadId })))}`,
  ].join('; '));

  const pending = ['pending/a.jsonl', 'pending/b.jsonl'];
  for (const Key of pending) await s3.send(new CreateMultipartUploadCommand({ Bucket, Key }));
  const listUploads = async (Prefix?: string) => {
    try {
      return String((await s3.send(new ListMultipartUploadsCommand({ Bucket, ...(Prefix !== undefined ? { Prefix } : {}) }))).Uploads?.length ?? 0);
    } catch (e) {
      return (e as Error).name;
    }
  };
  // small/object.jsonl's upload is pending too when its completion was refused: three in all then.
  const listing = async () => `no prefix ${await listUploads()}, prefix '' ${await listUploads('')}, prefix 'pending/' ${await listUploads('pending/')}, exact key '${pending[0]}' ${await listUploads(pending[0])}`;
  out('list-uploads', `pending uploads listed: ${await listing()}`);
  server.kill('SIGTERM');
  await new Promise((r) => server.once('exit', r));
  server = start();
  await ready();
  out('list-uploads-after-restart', `pending uploads listed: ${await listing()}`);

  let notListed = 0;
  let notRead = 0;
  for (let i = 0; i < trials; i++) {
    const Key = `raw/${i}.jsonl`;
    const Body = Buffer.from(`{"i":${i}}\n`);
    await s3.send(new PutObjectCommand({ Bucket, Key, Body }));
    const l = await s3.send(new ListObjectsV2Command({ Bucket, Prefix: Key }));
    if (!l.Contents?.some((c) => c.Key === Key)) notListed++;
    try {
      const g = await s3.send(new GetObjectCommand({ Bucket, Key }));
      if (!Buffer.from(await g.Body!.transformToByteArray()).equals(Body)) notRead++;
    } catch {
      notRead++;
    }
  }
  out('read-after-write', `${trials} puts, each listed and read at once: ${notListed} not listed, ${notRead} not read back`);
  console.log(`RESULT store_semantics store=${kind} version=${bin.version} trials=${trials} notListed=${notListed} notRead=${notRead}`);
} finally {
  server.kill('SIGKILL');
  s3.destroy();
  rmSync(dir, { recursive: true, force: true });
}
