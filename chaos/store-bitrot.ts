/**
 * Store bitrot: bytes of the object store's own data rot on its disk. One bit of a part file
 * under MinIO's data directory is flipped while MinIO is frozen (SIGSTOP, as store-outage
 * does), so that what the store serves is its own data gone bad, not a foreign writer's
 * object (store-tamper) and nothing the S3 API did.
 *
 * Where the bytes are (MinIO's xl layout, single drive or erasure-coded): each drive is a
 * directory holding `.minio.sys`; a committed object's data is `<drive>/<bucket>/<key>/
 * <dataDir uuid>/part.<n>` beside its `xl.meta`; a part of an upload not yet completed is
 * `<drive>/.minio.sys/multipart/<sha256(bucket/key)>/<uploadId dir>/<dataDir>/part.<n>`.
 * The first 32 bytes of each block of a part file are MinIO's bitrot hash (HighwayHash256S,
 * streaming); the flipped bit falls in the data after the first one. An object small
 * enough to be inlined in its `xl.meta` has no part file: the bit then falls in the second
 * half of its xl.meta, where the inlined data follows the metadata. With erasure coding
 * only one drive's shard is touched, as real rot would be; the store may repair it from
 * parity. On one drive nothing can repair it: the store can only refuse to serve it.
 *
 * Variants (PlannedFault.variant):
 *  - committed: an object committed a while ago (its LastModified at least
 *    JUDGED_AGE_MS old, so the oracle has judged it), held rotten through the recount's
 *    first pass (LandedFault.holdThroughRecount: the recount must meet it, and
 *    recount-held.json says what the store answered for it), then healed before the recount
 *    that decides the verdict;
 *  - staged:    a part of an upload staged and not yet completed (the newest part file
 *    under `.minio.sys/multipart`), which the engine will complete;
 *  - read:      the newest committed object, held rotten for durationS so that the oracle's
 *    next pass reads it.
 * Landing evidence: the layout (drives), the file, the object key (or the multipart
 * directory), the offset, the byte before and after, and what MinIO answered to a GET of
 * the object right after (its bytes matching the original's MD5, or its error). Heal: MinIO
 * frozen again, the byte written back where it still is (for a staged part that was
 * completed meanwhile: in its object's data directory, found by the multipart directory's
 * hash), MinIO resumed, and its answer to a GET recorded again.
 */
import { createHash } from 'node:crypto';
import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { poll } from '../lib/retry.ts';
import { pauseService, resumeService } from '../rig/faults.ts';
import { shQuote } from '../rig/process.ts';
import type { Remote } from '../rig/remote.ts';
import { MINIO_SERVICE, minioDataDir, storeDrivesOf } from '../rig/store.ts';
import { BITROT_VARIANTS, type BitrotVariant } from '../lib/evidence.ts';
import { patchFile, seededIndex } from './state-corruption.ts';
import { listAll, storeClient, type StoreObjectRef } from './store-tamper.ts';
import { FaultNotLanded, type FaultPackage } from './fault.ts';

/** How long the staged variant looks for a part staged and not yet completed before it is recorded as not landed. */
export const STAGED_SEARCH_MS = 20_000;

export { BITROT_VARIANTS, type BitrotVariant };

/** An object at least this old has been judged by the oracle (several of its sample intervals). */
export const JUDGED_AGE_MS = 30_000;
/** MinIO's streaming bitrot hash before each block of a part file. */
export const BITROT_HASH_BYTES = 32;
/** MinIO's erasure block size: the data of a part file's first block. */
export const BLOCK_BYTES = 1024 * 1024;

/** The drives of a MinIO data directory, from `find ROOT -maxdepth 2 -name .minio.sys -type d` lines. */
export function driveRoots(findLines: string): string[] {
  return findLines
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.endsWith('/.minio.sys'))
    .map((l) => l.slice(0, -'/.minio.sys'.length))
    .sort();
}

/** MinIO's directory of an object's pending multipart uploads: sha256 of "bucket/key", hex. */
export function multipartShaDir(bucket: string, key: string): string {
  return createHash('sha256').update(`${bucket}/${key}`).digest('hex');
}

/** The object whose pending uploads live in this multipart directory, among the listed keys. */
export function keyOfShaDir(keys: readonly string[], bucket: string, shaDir: string): string | null {
  return keys.find((k) => multipartShaDir(bucket, k) === shaDir) ?? null;
}

/** The object a variant rots, among those listed (pure): null when none fits. */
export function chooseBitrotObject(objects: readonly StoreObjectRef[], variant: 'committed' | 'read', nowMs: number): StoreObjectRef | null {
  const dated = objects.filter((o) => o.size > 0 && o.lastModified).sort((a, b) => (a.lastModified! < b.lastModified! ? 1 : a.lastModified! > b.lastModified! ? -1 : a.key.localeCompare(b.key)));
  if (variant === 'read') return dated[0] ?? null;
  return dated.find((o) => nowMs - Date.parse(o.lastModified!) >= JUDGED_AGE_MS) ?? null;
}

/**
 * The bit a rot flips in a file of this size (pure). A part file: in the data of its first
 * block when there is any (after MinIO's bitrot hash). An `xl.meta` (an object small enough
 * to be inlined in its metadata has no part file): in its second half, where the inlined
 * data follows the metadata.
 */
export function planBitrot(fileBytes: number, seed: string, file: 'part' | 'xl.meta' = 'part'): { offset: number; mask: number } | null {
  if (fileBytes <= 0) return null;
  const dataStart = file === 'xl.meta' ? Math.floor(fileBytes / 2) : fileBytes > BITROT_HASH_BYTES ? BITROT_HASH_BYTES : 0;
  const dataEnd = file === 'xl.meta' ? fileBytes : Math.min(fileBytes, dataStart + BLOCK_BYTES);
  return { offset: dataStart + seededIndex(seed, 'bitrot-offset', dataEnd - dataStart), mask: 1 << seededIndex(seed, 'bitrot-bit', 8) };
}

/** The newest staged part file (`find -printf '%T@ %s %p'` lines): its path, size and multipart directory. */
export function newestStagedPart(findLines: string): { file: string; size: number; shaDir: string } | null {
  let best: { t: number; file: string; size: number; shaDir: string } | null = null;
  for (const line of findLines.split('\n')) {
    const m = /^(\d+(?:\.\d+)?) (\d+) (.*\/\.minio\.sys\/multipart\/([0-9a-f]{64})\/.*\/part\.\d+)$/.exec(line.trim());
    if (!m) continue;
    const t = Number(m[1]);
    if (!best || t > best.t || (t === best.t && m[3]! < best.file)) best = { t, file: m[3]!, size: Number(m[2]), shaDir: m[4]! };
  }
  return best && { file: best.file, size: best.size, shaDir: best.shaDir };
}

/** What the store answers to a GET of the object: its bytes (matching the original MD5 or not), or its error. */
export async function storeAnswer(s3: S3Client, bucket: string, key: string, originalMd5: string | null): Promise<Record<string, unknown>> {
  try {
    const got = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }), { abortSignal: AbortSignal.timeout(15_000) });
    const body = Buffer.from(await got.Body!.transformToByteArray());
    const md5 = createHash('md5').update(body).digest('hex');
    return { answered: 'bytes', size: body.length, md5, ...(originalMd5 ? { matchesOriginal: md5 === originalMd5 } : {}) };
  } catch (err) {
    const e = err as Error & { $metadata?: { httpStatusCode?: number }; Code?: string };
    return { answered: 'error', name: e.name, httpStatus: e.$metadata?.httpStatusCode ?? null, message: e.message.slice(0, 300) };
  }
}

async function partFilesOf(remote: Remote, drives: readonly string[], bucket: string, key: string): Promise<string[]> {
  const r = await remote.exec(drives.map((d) => `ls -1 ${shQuote(`${d}/${bucket}/${key}`)}/*/part.* 2>/dev/null`).join('; ') + '; true', { check: false });
  return r.stdout.split('\n').filter(Boolean).sort();
}

async function metaFilesOf(remote: Remote, drives: readonly string[], bucket: string, key: string): Promise<string[]> {
  const r = await remote.exec(drives.map((d) => `ls -1 ${shQuote(`${d}/${bucket}/${key}/xl.meta`)} 2>/dev/null`).join('; ') + '; true', { check: false });
  return r.stdout.split('\n').filter(Boolean).sort();
}

async function withStorePaused<T>(remote: Remote, fn: () => Promise<T>): Promise<T> {
  await pauseService(remote, MINIO_SERVICE);
  try {
    return await fn();
  } finally {
    await resumeService(remote, MINIO_SERVICE);
  }
}

export const storeBitrot: FaultPackage = {
  kind: 'store-bitrot',
  spec: {
    label: "A bit of the object store's own data flipped on its disk (bitrot), then restored",
    summary: "one bit of a part file under MinIO's data directory (a committed object's, a staged upload's, or an object about to be read) is flipped while MinIO is frozen; the heal writes it back (a committed object's after the recount's first pass has met it).",
    colour: '#dbdb8d',
    targets: { roles: ['store'], what: 'the store', defaultRoles: ['store'] },
    fields: { required: ['variant'], optional: ['durationS'] },
    variants: BITROT_VARIANTS,
    // MinIO's xl layout on disk: SeaweedFS keeps its data in volume files, which this fault does not know.
    stores: ['minio'],
    // A committed object's rot stays in force until the recount's first pass has met it.
    heldThroughRecount: ['committed'],
    evidence: "the drives, the part file, the object key or multipart directory, the offset, the byte before and after, and what MinIO answered to a GET of the object; at the heal, where the byte was restored and MinIO's answer again",
  },
  async inject(fault, ctx) {
    const variant = fault.variant as BitrotVariant | undefined;
    if (!variant || !(BITROT_VARIANTS as readonly string[]).includes(variant)) throw new FaultNotLanded(`store-bitrot needs a variant, one of ${BITROT_VARIANTS.join(', ')} (got ${String(fault.variant)})`);
    const host = ctx.rig.store.host;
    const spec = ctx.rig.hosts.find((h) => h.name === host);
    if (!spec) throw new FaultNotLanded(`no store host ${host} in the rig`);
    const remote = ctx.remote(host);
    const bucket = ctx.rig.store.bucket;
    // The running layout's data directory (rig.json's store.drives): its drives are found under it.
    const root = `${spec.dataDir}/${minioDataDir(storeDrivesOf(ctx.rig.store))}`;
    const drives = driveRoots((await remote.exec(`find ${shQuote(root)} -maxdepth 2 -name .minio.sys -type d`, { check: false })).stdout);
    if (drives.length === 0) throw new FaultNotLanded(`no MinIO drive (a directory with .minio.sys) under ${root}`, { host, root });
    const layout = { drives: drives.length, kind: drives.length === 1 ? 'single-drive' : 'erasure' };
    const s3 = storeClient(ctx);
    let key: string | null = null;
    let shaDir: string | null = null;
    let file: string;
    let originalMd5: string | null = null;
    if (variant === 'staged') {
      // A part is staged only between the engine's prepare and its commit (about a second at a time): look again until one is there.
      const look = async () => newestStagedPart((await remote.exec(drives.map((d) => `find ${shQuote(`${d}/.minio.sys/multipart`)} -type f -name 'part.*' -printf '%T@ %s %p\\n' 2>/dev/null`).join('; ') + '; true', { check: false })).stdout);
      const found = await poll(look, { deadlineMs: STAGED_SEARCH_MS, intervalMs: 200 });
      if (!found) throw new FaultNotLanded(`no staged multipart part on the store (no upload pending) in ${STAGED_SEARCH_MS / 1000} s of looking`, { host, layout });
      file = found.file;
      shaDir = found.shaDir;
    } else {
      if (!ctx.prefix) throw new FaultNotLanded('store-bitrot needs the run prefix (FaultContext.prefix)');
      const obj = chooseBitrotObject(await listAll(s3, bucket, ctx.prefix), variant, Date.now());
      if (!obj) throw new FaultNotLanded(`no ${variant === 'committed' ? `object committed at least ${JUDGED_AGE_MS / 1000} s ago` : 'committed object'} under ${ctx.prefix}`, { host, layout });
      key = obj.key;
      const before = await storeAnswer(s3, bucket, key, null);
      originalMd5 = typeof before.md5 === 'string' ? before.md5 : null;
      // An object inlined in its xl.meta has no part file: its xl.meta rots instead.
      const parts = await partFilesOf(remote, drives, bucket, key);
      const files = parts.length > 0 ? parts : await metaFilesOf(remote, drives, bucket, key);
      if (files.length === 0) throw new FaultNotLanded(`${key}: neither a part file nor an xl.meta on the store's drives`, { host, layout, key });
      file = files[seededIndex(fault.id, 'bitrot-file', files.length)]!;
    }
    let landed: { offset: number; before: Buffer; after: Buffer; fileBytes: number };
    try {
      landed = await withStorePaused(remote, async () => {
        const content = await remote.readFile(file);
        const plan = planBitrot(content.length, fault.id, file.endsWith('/xl.meta') ? 'xl.meta' : 'part');
        if (!plan) throw new Error(`${file} is empty`);
        const before = Buffer.from(content.subarray(plan.offset, plan.offset + 1));
        const after = Buffer.from([before[0]! ^ plan.mask]);
        await patchFile(remote, file, plan.offset, after);
        return { offset: plan.offset, before, after, fileBytes: content.length };
      });
    } catch (err) {
      throw new FaultNotLanded(`store-bitrot ${variant}: ${(err as Error).message}`, { host, layout, file });
    }
    const answer = key ? await storeAnswer(s3, bucket, key, originalMd5) : { answered: 'not read', why: 'a staged part is read only once its upload is completed and the object is read' };
    ctx.log(`store-bitrot ${variant}: ${host}:${file} byte ${landed.offset}: ${landed.before.toString('hex')} → ${landed.after.toString('hex')}; MinIO answered ${JSON.stringify(answer)}`);
    const held = storeBitrot.spec.heldThroughRecount!.includes(variant);
    return {
      evidence: { host, variant, layout, file, key, shaDir, offset: landed.offset, fileBytes: landed.fileBytes, before: landed.before.toString('hex'), after: landed.after.toString('hex'), originalMd5, storeAnswer: answer, ...(held ? { heldThroughRecount: true } : {}) },
      ...(held ? { holdThroughRecount: true } : {}),
      async heal() {
        let where = file;
        let objectKey = key;
        if (variant === 'staged' && (await remote.exec(`[ -f ${shQuote(file)} ] && echo yes`, { check: false })).stdout.trim() !== 'yes') {
          // Completed (or aborted) meanwhile: a completed upload's part moved into its object's data directory.
          objectKey = keyOfShaDir((await listAll(s3, bucket, ctx.prefix ?? '')).map((o) => o.key), bucket, shaDir!);
          const name = file.slice(file.lastIndexOf('/') + 1);
          const drive = drives.find((d) => file.startsWith(`${d}/`))!;
          const moved = objectKey ? (await partFilesOf(remote, [drive], bucket, objectKey)).filter((f) => f.endsWith(`/${name}`)) : [];
          if (moved.length === 0) return { host, restored: false, why: objectKey ? `${objectKey}: no ${name} on ${drive}` : 'the upload is gone (aborted) and no object under the prefix has its multipart directory' };
          where = moved[0]!;
        }
        const restored = await withStorePaused(remote, async () => {
          const now = await remote.readFile(where).catch(() => null);
          if (!now || now.length !== landed.fileBytes) return { restored: false, why: `${where} is not the rotten file any more (${now ? `${now.length} bytes` : 'gone'})` };
          if (now[landed.offset] !== landed.after[0]) return { restored: false, why: `the byte at ${landed.offset} is ${now[landed.offset]!.toString(16).padStart(2, '0')}: the store repaired it itself` };
          await patchFile(remote, where, landed.offset, landed.before);
          return { restored: true };
        });
        const after = objectKey ? await storeAnswer(s3, bucket, objectKey, variant === 'staged' ? null : originalMd5) : null;
        return { host, file: where, key: objectKey, ...restored, ...(after ? { storeAnswer: after } : {}) };
      },
    };
  },
};
