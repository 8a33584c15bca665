/**
 * Store tamper: a foreign writer (the harness, with the rig's store credentials) acts on a
 * committed object under the run's prefix: the one the engine will commit again at its next
 * restore, and the checkpoint that holds it, as the engine plug says (Engine.recommitTarget:
 * Clink reads its keys, Flink its part files' commit times); when the engine cannot say,
 * the newest object, and then acceptance is not judged.
 *
 * Variants (PlannedFault.variant):
 *  - foreign-put: an object of the same size with other bytes (the lines in reverse order)
 *    and none of the engine's metadata, put at that key;
 *  - overwrite:   the object rewritten the same way but keeping the engine's metadata (its
 *    token), so that only the ETag tells it apart;
 *  - delete:      the object removed.
 * Before acting, the original is saved: bytes, content type, metadata, and its part sizes
 * (HeadObject with PartNumber), so that the heal re-uploads it with the same parts and the
 * same multipart ETag. Landing evidence: the key touched, the old and new ETag and size,
 * the time. Healing evidence: the restored ETag (equal to the original, else the heal
 * fails), and the engine's reaction while the object was not its own:
 *  - 'integrity-stop': the engine reported refusing the object, naming the key
 *    (EngineHealth.integrityStop: Clink's coordinator stops, Flink's job fails and restarts;
 *    the heal restarts whatever stopped, so the recovery re-completes against the restored
 *    object);
 *  - 'accepted': the engine recovered from the checkpoint that holds the key, while the
 *    object was tampered, and went on without a stop (it took the object as its own);
 *  - 'not-met': the engine moved on (a checkpoint completed in the same epoch) before any
 *    recovery re-completed the key, or the reaction could not be decided in time: within
 *    the campaign's recovery deadline, and never less than 45 s or 6 checkpoint intervals.
 * docs/faults.md ("store-tamper") says how the verdict reads each.
 */
import {
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import type { EngineHealth, EngineStoreTamper } from '../engine/engine.ts';
import { TAMPER_VARIANTS, type TamperVariant } from '../lib/evidence.ts';
import { poll } from '../lib/retry.ts';
import { FaultNotLanded, type FaultContext, type FaultPackage } from './fault.ts';

export type TamperReaction = 'integrity-stop' | 'accepted' | 'not-met';

export interface StoreObjectRef {
  key: string;
  size: number;
  lastModified?: string;
}

/**
 * The object to tamper with: the one the engine will commit again at its next restore, with
 * the checkpoint that holds it (engine.recommitTarget, given the engine's health read just
 * before the listing). When the engine cannot say: the newest non-empty object by
 * LastModified (ties: the first key), without a checkpoint, so its acceptance is never
 * judged. Null when there is no non-empty object.
 */
export function chooseTamperTarget(
  objects: readonly StoreObjectRef[],
  engine: EngineStoreTamper,
  health: Pick<EngineHealth, 'checkpoints' | 'lastCompletedCheckpointId'>,
): (StoreObjectRef & { checkpointId?: number; subtask?: number }) | null {
  const target = engine.recommitTarget?.(objects, health) ?? null;
  if (target) return target;
  const others = objects.filter((o) => o.size > 0 && o.lastModified);
  others.sort((a, b) => (a.lastModified! < b.lastModified! ? 1 : a.lastModified! > b.lastModified! ? -1 : a.key.localeCompare(b.key)));
  return others[0] ?? null;
}

/**
 * How long the tamper waits for the engine's reaction before it restores the object: the
 * campaign's recovery deadline (a restore may take that long: Flink's take 27-55 s), and
 * never less than 45 s or 6 checkpoint intervals.
 */
export function reactionDeadlineMs(checkpointIntervalMs: number, recoveryDeadlineMs?: number): number {
  return Math.max(45_000, 6 * checkpointIntervalMs, recoveryDeadlineMs ?? 0);
}

/** Other bytes of the same size: the lines in reverse order, or the bytes reversed when that changes nothing. */
export function foreignBytes(original: Buffer): Buffer {
  const text = original.toString('utf8');
  const lines = text.endsWith('\n') ? text.slice(0, -1).split('\n') : text.split('\n');
  const reversed = Buffer.from(lines.reverse().join('\n') + (text.endsWith('\n') ? '\n' : ''), 'utf8');
  if (reversed.length === original.length && !reversed.equals(original)) return reversed;
  const out = Buffer.from(original);
  out.reverse();
  if (!out.equals(original)) return out;
  // A palindrome: flip one byte.
  out[0] = out[0]! ^ 0x01;
  return out;
}

/**
 * The engine's reaction to a tampered key, from its health after the tamper:
 *  - an integrity stop that names the key → 'integrity-stop';
 *  - the first checkpoint completed after the one current at the tamper, in a later epoch,
 *    when the key belongs to that checkpoint (the recovery restored from it and so
 *    re-completed the key) → 'accepted';
 *  - the first checkpoint after it completed in the same epoch (the key left the restore
 *    set without a recovery), or nothing decided yet → 'not-met' / null.
 * Returns null while undecided.
 */
export function judgeReaction(
  key: string,
  atTamper: { epoch: number; lastCompletedCheckpointId: number | null; keyCheckpointId?: number },
  now: Pick<EngineHealth, 'checkpoints' | 'integrityStop'>,
): TamperReaction | null {
  if (now.integrityStop && now.integrityStop.message.includes(key)) return 'integrity-stop';
  const base = atTamper.lastCompletedCheckpointId ?? 0;
  const next = (now.checkpoints ?? []).filter((c) => c.id > base).sort((a, b) => a.id - b.id)[0];
  if (!next) return null;
  if (next.epoch > atTamper.epoch && atTamper.keyCheckpointId !== undefined && atTamper.keyCheckpointId === atTamper.lastCompletedCheckpointId) return 'accepted';
  return 'not-met';
}

interface SavedObject {
  key: string;
  body: Buffer;
  etag: string;
  size: number;
  contentType?: string;
  metadata: Record<string, string>;
  /** Part sizes of a multipart object (empty for a single PUT). */
  partSizes: number[];
}

function stripQuotes(etag: string | undefined): string {
  return (etag ?? '').replace(/^W\//, '').replace(/^"+|"+$/g, '');
}

/** An S3 client for the rig's store with its credentials (plain MD5 ETags); shared with store-bitrot. */
export function storeClient(ctx: FaultContext): S3Client {
  return new S3Client({
    endpoint: ctx.rig.store.endpoint,
    region: ctx.rig.store.region,
    credentials: { accessKeyId: ctx.credentials.accessKeyId, secretAccessKey: ctx.credentials.secretAccessKey },
    forcePathStyle: true,
    maxAttempts: 3,
    // Plain MD5 ETags: the restored object must carry exactly the original multipart ETag.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    requestHandler: new NodeHttpHandler({ connectionTimeout: 5000, requestTimeout: 15_000 }),
  });
}

/** Every object under the prefix, with size and LastModified. */
export async function listAll(s3: S3Client, bucket: string, prefix: string): Promise<StoreObjectRef[]> {
  const out: StoreObjectRef[] = [];
  let token: string | undefined;
  do {
    const r = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }));
    for (const o of r.Contents ?? []) if (o.Key) out.push({ key: o.Key, size: o.Size ?? 0, lastModified: o.LastModified?.toISOString() });
    token = r.IsTruncated ? r.NextContinuationToken : undefined;
  } while (token);
  return out;
}

async function save(s3: S3Client, bucket: string, key: string): Promise<SavedObject> {
  const got = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  const body = Buffer.from(await got.Body!.transformToByteArray());
  const etag = stripQuotes(got.ETag);
  const m = /-(\d+)$/.exec(etag);
  const partSizes: number[] = [];
  if (m) {
    const n = Number(m[1]);
    for (let p = 1; p <= n; p++) {
      const h = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key, PartNumber: p }));
      partSizes.push(h.ContentLength ?? 0);
    }
    const sum = partSizes.reduce((a, b) => a + b, 0);
    if (sum !== body.length) throw new Error(`${key}: part sizes ${partSizes.join('+')} = ${sum} != ${body.length} bytes; cannot restore its ETag`);
  }
  return { key, body, etag, size: body.length, contentType: got.ContentType, metadata: { ...(got.Metadata ?? {}) }, partSizes };
}

/** Puts the saved object back with the same parts; returns the ETag the store reports for it. */
async function restore(s3: S3Client, bucket: string, o: SavedObject): Promise<string> {
  if (o.partSizes.length === 0) {
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: o.key, Body: o.body, ContentType: o.contentType, Metadata: o.metadata }));
  } else {
    const c = await s3.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: o.key, ContentType: o.contentType, Metadata: o.metadata }));
    const parts: { PartNumber: number; ETag: string }[] = [];
    let off = 0;
    for (let i = 0; i < o.partSizes.length; i++) {
      const chunk = o.body.subarray(off, off + o.partSizes[i]!);
      off += o.partSizes[i]!;
      const u = await s3.send(new UploadPartCommand({ Bucket: bucket, Key: o.key, UploadId: c.UploadId, PartNumber: i + 1, Body: chunk, ContentLength: chunk.length }));
      parts.push({ PartNumber: i + 1, ETag: u.ETag! });
    }
    await s3.send(new CompleteMultipartUploadCommand({ Bucket: bucket, Key: o.key, UploadId: c.UploadId, MultipartUpload: { Parts: parts } }));
  }
  const h = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: o.key }));
  return stripQuotes(h.ETag);
}

async function headOrNull(s3: S3Client, bucket: string, key: string): Promise<{ etag: string; size: number } | null> {
  try {
    const h = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
    return { etag: stripQuotes(h.ETag), size: h.ContentLength ?? 0 };
  } catch (e) {
    if ((e as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) return null;
    throw e;
  }
}

export const storeTamper: FaultPackage = {
  kind: 'store-tamper',
  spec: {
    label: 'A foreign writer put, overwrote or deleted an object under the engine prefix, then restored it',
    summary: "a foreign writer puts, overwrites or deletes an object under the engine's prefix; the heal restores the original.",
    colour: '#7f7f7f',
    targets: { roles: ['store'], what: 'the store', defaultRoles: ['store'] },
    fields: { required: ['variant'], optional: ['durationS'] },
    variants: TAMPER_VARIANTS,
    evidence: 'the keys the foreign writer touched, their ETags before and after; the original restored with its exact multipart ETag at the heal',
  },
  async inject(fault, ctx) {
    const variant = (fault.variant ?? 'foreign-put') as TamperVariant;
    const prefix = ctx.prefix;
    if (!prefix) throw new FaultNotLanded('store-tamper needs the run prefix (FaultContext.prefix)');
    const bucket = ctx.rig.store.bucket;
    const s3 = storeClient(ctx);
    let saved: SavedObject;
    let at: string;
    let atTamper: { epoch: number; lastCompletedCheckpointId: number | null; keyCheckpointId?: number };
    let after: { etag: string; size: number } | null;
    try {
      // The engine's state and the newest committed object, read as close together as possible.
      const health = await ctx.engine.health();
      const target = chooseTamperTarget(await listAll(s3, bucket, prefix), ctx.engine, health);
      if (!target) throw new FaultNotLanded(`no committed object under ${prefix} to tamper with`);
      saved = await save(s3, bucket, target.key);
      atTamper = { epoch: health.epoch, lastCompletedCheckpointId: health.lastCompletedCheckpointId, ...(target.checkpointId !== undefined ? { keyCheckpointId: target.checkpointId } : {}) };
      at = new Date().toISOString();
      if (variant === 'delete') {
        await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: saved.key }));
      } else {
        const body = foreignBytes(saved.body);
        const metadata = variant === 'overwrite' ? saved.metadata : { 'clink-qual-tamper': fault.id };
        await s3.send(new PutObjectCommand({ Bucket: bucket, Key: saved.key, Body: body, ContentType: saved.contentType, Metadata: metadata }));
      }
      after = await headOrNull(s3, bucket, saved.key);
    } catch (err) {
      s3.destroy();
      if (err instanceof FaultNotLanded) throw err;
      throw new FaultNotLanded(`store-tamper ${variant}: ${(err as Error).message}`);
    }
    const changed = variant === 'delete' ? after === null : after !== null && after.etag !== saved.etag && after.size === saved.size;
    if (!changed) {
      const etag = await restore(s3, bucket, saved).catch(() => undefined);
      s3.destroy();
      throw new FaultNotLanded(`store-tamper ${variant}: ${saved.key} did not change as intended (now ${JSON.stringify(after)})`, { key: saved.key, restoredEtag: etag });
    }
    ctx.log(`store-tamper ${variant}: ${saved.key} ETag ${saved.etag} (${saved.size} B) → ${after ? `${after.etag} (${after.size} B)` : 'deleted'}`);
    const evidence = {
      variant,
      bucket,
      keys: [saved.key],
      at,
      before: { etag: saved.etag, size: saved.size, parts: saved.partSizes, token: saved.metadata['clink-token'] ?? null },
      after,
      engineAtTamper: atTamper,
      // The engine re-completes this key on its next recovery when it belongs to the last completed checkpoint.
      inRestoreSet: atTamper.keyCheckpointId !== undefined ? atTamper.keyCheckpointId === atTamper.lastCompletedCheckpointId : null,
    };
    let healed: Record<string, unknown> | null = null;
    return {
      evidence,
      async heal() {
        if (healed) return healed;
        // Wait for the engine's reaction to be decided: an integrity stop, or the next
        // completed checkpoint (in a new epoch after a recovery, or the same one).
        // Set by the probe below (a cast, so the compiler does not narrow it to null).
        let health = null as EngineHealth | null;
        const reaction: TamperReaction | null =
          (await poll(
            async () => {
              health = await ctx.engine.health().catch(() => null);
              return health ? judgeReaction(saved.key, atTamper, health) : null;
            },
            { deadlineMs: reactionDeadlineMs(ctx.checkpointIntervalMs, ctx.recoveryDeadlineMs), intervalMs: 1000 },
          )) ?? null;
        const restoredEtag = await restore(s3, bucket, saved);
        const restoredAt = new Date().toISOString();
        if (restoredEtag !== saved.etag) {
          s3.destroy();
          throw new Error(`store-tamper: ${saved.key} restored with ETag ${restoredEtag}, not the original ${saved.etag}`);
        }
        ctx.log(`store-tamper: ${saved.key} restored (ETag ${restoredEtag}); engine reaction: ${reaction ?? 'not-met (undecided)'}`);
        // An integrity stop is the correct reaction; the campaign goes on once what stopped runs again.
        const restarted: { host: string; role: string; pid: number | null }[] = [];
        if (reaction === 'integrity-stop') {
          // The stop is recorded before the process exits: wait (briefly) until it is down.
          const down =
            (await poll(
              async () => {
                const stopped = (await ctx.engine.processes()).filter((p) => p.pid === null);
                return stopped.length ? stopped : null;
              },
              { probes: 30, intervalMs: 500 },
            )) ?? [];
          for (const p of down) {
            const r = await ctx.engine.restart(p.host, p.role);
            restarted.push({ host: r.host, role: r.role, pid: r.pid });
          }
        }
        s3.destroy();
        healed = {
          key: saved.key,
          restoredEtag,
          restoredAt,
          sameEtag: true,
          reaction: reaction ?? 'not-met',
          ...(health?.integrityStop ? { integrityStop: health.integrityStop } : {}),
          restarted,
        };
        return healed;
      },
    };
  },
};
