/**
 * What the pinned MinIO does when its own data rots on disk (issue 28 item 2), single drive
 * against erasure-coded, on loopback only (no rig needed): the same three places the
 * store-bitrot fault kind (chaos/store-bitrot.ts) rots on the rig, with the same choice of
 * byte (planBitrot: in the data of a part file's first block, after MinIO's 32-byte bitrot
 * hash; in the second half of an xl.meta that inlines a small object's data).
 *
 * Places, each on a fresh object:
 *  - committed-part:   a committed multipart object (5 MiB + 100 kB parts); a bit of one
 *    drive's copy of part.1 flipped while MinIO is frozen (SIGSTOP), then two GETs;
 *  - committed-inline: a committed small object (8 kB: MinIO inlines it in xl.meta); a bit
 *    in the second half of one drive's xl.meta flipped, then two GETs;
 *  - staged:           an upload with both parts uploaded, not completed; a bit of one
 *    drive's staged part.1 flipped; then CompleteMultipartUpload and two GETs.
 * Two GETs each: first one without the SDK's response CRC32 check (what a reader without
 * end-to-end checksums is served), then one with it (the SDK's default when the store sends
 * a checksum header).
 * After each: whether the bytes served match what was written (MD5), or the error; then
 * whether the rotten byte on disk is still rotten (did MinIO heal it?).
 *
 *   node findings/minio-bitrot.ts [--drives 1|4] [--bin PATH] [--port N]
 * Prints one line per place and `RESULT minio_bitrot drives=N ...` with what each GET saw.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { CompleteMultipartUploadCommand, CreateMultipartUploadCommand, GetObjectCommand, PutObjectCommand, S3Client, UploadPartCommand } from '@aws-sdk/client-s3';
import { readManifest } from '../rig/install.ts';
import { planBitrot } from '../chaos/store-bitrot.ts';
import { createBucketWhenUp, minioDriveDirs, startLoopbackStore, stopLoopbackStore } from './loopback-store.ts';

const { values } = parseArgs({
  options: {
    drives: { type: 'string', default: '1' },
    bin: { type: 'string' },
    port: { type: 'string', default: '19950' },
  },
});
const drives = Number(values.drives);
if (drives !== 1 && drives < 4) throw new Error('--drives: 1 (single drive) or 4 or more (erasure coding)');
const port = Number(values.port);
const pinned = readManifest().components.find((c) => c.name === 'minio');
const bin = values.bin ?? pinned?.path;
if (!bin) throw new Error("MinIO is not in the cache: run './clink-qual rig install' first, or give --bin");
const label = values.bin ? bin : `minio ${pinned!.version}`;
const dir = mkdtempSync(path.join(os.tmpdir(), 'cq-minio-bitrot-'));
const driveDirs = minioDriveDirs(dir, drives);
const user = 'bitrot-probe';
const pass = `p-${process.pid}-${Date.now()}`;
const Bucket = 'bitrot-probe';

const server = startLoopbackStore({ store: 'minio', bin, dir, port, user, pass, drives });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const s3 = new S3Client({ endpoint: `http://127.0.0.1:${port}`, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: user, secretAccessKey: pass }, maxAttempts: 1 });
// A second client that does not check the response's CRC32 (the SDK's default does, when the
// store sends one): what a reader without end-to-end checksums (most S3 clients) is served.
const rawS3 = new S3Client({ endpoint: `http://127.0.0.1:${port}`, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: user, secretAccessKey: pass }, maxAttempts: 1, responseChecksumValidation: 'WHEN_REQUIRED' });
const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex');

/** Every file under root whose path ends with `suffix` (a small recursive walk). */
function filesUnder(root: string, test: (p: string) => boolean): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (test(p)) out.push(p);
    }
  };
  walk(root);
  return out.sort();
}

/** Flips one bit of `file` (as planBitrot chooses it) with MinIO frozen; returns where. */
async function rot(file: string, seed: string): Promise<{ file: string; offset: number; before: number; after: number }> {
  const size = statSync(file).size;
  const plan = planBitrot(size, seed, file.endsWith('/xl.meta') ? 'xl.meta' : 'part');
  if (!plan) throw new Error(`${file} is empty`);
  process.kill(server.pid!, 'SIGSTOP');
  try {
    const fh = await open(file, 'r+');
    try {
      const b = Buffer.alloc(1);
      await fh.read(b, 0, 1, plan.offset);
      const before = b[0]!;
      b[0] = before ^ plan.mask;
      await fh.write(b, 0, 1, plan.offset);
      await fh.sync();
      return { file: path.relative(dir, file), offset: plan.offset, before, after: b[0]! };
    } finally {
      await fh.close();
    }
  } finally {
    process.kill(server.pid!, 'SIGCONT');
  }
}

async function get(Key: string, want: string, client: S3Client = s3): Promise<string> {
  try {
    const r = await client.send(new GetObjectCommand({ Bucket, Key }));
    const body = Buffer.from(await r.Body!.transformToByteArray());
    return md5(body) === want ? `bytes, intact (${body.length} B)` : `bytes, ROTTEN (${body.length} B, md5 differs)`;
  } catch (e) {
    const err = e as Error & { $metadata?: { httpStatusCode?: number } };
    return `error ${err.name} (HTTP ${err.$metadata?.httpStatusCode ?? '?'}): ${err.message.split('\n')[0]!.slice(0, 140)}`;
  }
}

function stillRotten(r: { file: string; offset: number; after: number }): string {
  const p = path.join(dir, r.file);
  try {
    const now = readFileSync(p)[r.offset];
    return now === r.after ? 'still rotten on disk' : `repaired on disk (byte now ${now!.toString(16)})`;
  } catch {
    return 'the file is gone (rewritten elsewhere)';
  }
}

const results: Record<string, string[]> = {};
try {
  await createBucketWhenUp(s3, Bucket);
  console.log(`${label} (${bin}, ${drives === 1 ? 'single drive' : `erasure, ${drives} drives`}) on 127.0.0.1:${port}`);
  const parts = [Buffer.alloc(5 * 1024 * 1024), Buffer.alloc(100_000)].map((b, i) => {
    for (let j = 0; j < b.length; j++) b[j] = (j * 31 + i * 7) & 0xff;
    return b;
  });
  const whole = md5(Buffer.concat(parts));

  async function multipart(Key: string, complete: boolean): Promise<{ UploadId: string; etags: { PartNumber: number; ETag?: string }[] }> {
    const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket, Key }));
    const etags = [];
    for (const [n, body] of parts.entries()) etags.push({ PartNumber: n + 1, ETag: (await s3.send(new UploadPartCommand({ Bucket, Key, UploadId, PartNumber: n + 1, Body: body }))).ETag });
    if (complete) await s3.send(new CompleteMultipartUploadCommand({ Bucket, Key, UploadId, MultipartUpload: { Parts: etags } }));
    return { UploadId: UploadId!, etags };
  }

  // committed-part
  {
    const Key = 'committed-part.jsonl';
    await multipart(Key, true);
    const file = driveDirs.flatMap((d) => filesUnder(path.join(d, Bucket, Key), (p) => p.endsWith('/part.1')))[0];
    if (!file) throw new Error(`${Key}: no part.1 on any drive`);
    const r = await rot(file, 'committed-part');
    const a = [await get(Key, whole, rawS3), await get(Key, whole)];
    await sleep(2000);
    results['committed-part'] = [...a, stillRotten(r)];
    console.log(`committed-part: ${r.file} byte ${r.offset} ${r.before.toString(16)}→${r.after.toString(16)}; first GET, without the CRC32 check: ${a[0]}; second GET, with it: ${a[1]}; then ${stillRotten(r)}`);
  }
  // committed-inline
  {
    const Key = 'committed-inline.jsonl';
    const body = Buffer.from('x'.repeat(8000));
    await s3.send(new PutObjectCommand({ Bucket, Key, Body: body }));
    const file = driveDirs.flatMap((d) => filesUnder(path.join(d, Bucket, Key), (p) => p.endsWith('/xl.meta')))[0];
    const partFiles = driveDirs.flatMap((d) => filesUnder(path.join(d, Bucket, Key), (p) => /\/part\.\d+$/.test(p)));
    if (!file) throw new Error(`${Key}: no xl.meta on any drive`);
    const r = await rot(file, 'committed-inline');
    const a = [await get(Key, md5(body), rawS3), await get(Key, md5(body))];
    await sleep(2000);
    results['committed-inline'] = [...a, stillRotten(r)];
    console.log(`committed-inline (${partFiles.length ? 'NOT inlined: has part files' : 'inlined in xl.meta'}): ${r.file} byte ${r.offset} ${r.before.toString(16)}→${r.after.toString(16)}; first GET, without the CRC32 check: ${a[0]}; second GET, with it: ${a[1]}; then ${stillRotten(r)}`);
  }
  // staged
  {
    const Key = 'staged.jsonl';
    const { UploadId, etags } = await multipart(Key, false);
    const file = driveDirs.flatMap((d) => filesUnder(path.join(d, '.minio.sys', 'multipart'), (p) => p.endsWith('/part.1')))[0];
    if (!file) throw new Error(`${Key}: no staged part.1 under .minio.sys/multipart`);
    const r = await rot(file, 'staged');
    let complete: string;
    try {
      await s3.send(new CompleteMultipartUploadCommand({ Bucket, Key, UploadId, MultipartUpload: { Parts: etags } }));
      complete = 'completed';
    } catch (e) {
      complete = `refused: ${(e as Error).name}`;
    }
    const a = [await get(Key, whole, rawS3), await get(Key, whole)];
    // The staged part moves into the object's data directory on completion, on the same
    // drive (another drive's part.1 is another shard): the rotten byte is looked for there.
    const drive = path.join(dir, r.file.split(path.sep)[0]!);
    const moved = filesUnder(path.join(drive, Bucket), (p) => p.includes(`/${Key}/`) && p.endsWith('/part.1'));
    const disk = moved.length === 0 ? stillRotten(r) : moved.some((p) => readFileSync(p)[r.offset] === r.after) ? 'still rotten on disk (in the completed object)' : 'not rotten in the completed object';
    results.staged = [complete, ...a, disk];
    console.log(`staged: ${r.file} byte ${r.offset} ${r.before.toString(16)}→${r.after.toString(16)}; CompleteMultipartUpload: ${complete}; first GET, without the CRC32 check: ${a[0]}; second GET, with it: ${a[1]}; then ${disk}`);
  }
} finally {
  stopLoopbackStore(server, dir);
}

console.log(`RESULT minio_bitrot drives=${drives} store=${JSON.stringify(label)} ${Object.entries(results).map(([k, v]) => `${k}=${JSON.stringify(v.join(' | '))}`).join(' ')}`);
