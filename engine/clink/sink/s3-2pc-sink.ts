/**
 * `s3_2pc_sink`: Clink's two-phase-commit sink into S3-compatible storage (staged multipart
 * uploads). See sink-api.ts for the protocol and DESIGN.md ("Store facts that shape the
 * protocol") for the MinIO behaviour it is built around.
 *
 *  - write(): buffers lines in memory. Once the sink knows the next checkpoint's id (after a
 *    prepare, the next barrier is C + 1) and a whole part's worth is buffered, it begins that
 *    checkpoint's multipart upload during the interval and uploads the part in the
 *    background ("parts during the interval" below), so the barrier pays for the last part only.
 *  - prepare(C, E): uploads what is buffered as the (last) parts of a multipart upload at a key unique to
 *    (subtask, epoch, checkpoint), journals (key, uploadId) durably (a crc32 per line), and returns the handle
 *    (parts, sizes, record count, a random token stored as metadata, and the multipart ETag
 *    the committed object must have). Nothing is visible yet: parts uploaded during the
 *    interval are no more visible than parts uploaded at the barrier.
 *  - commit(C, E, handles) / recover(handles, E'): CompleteMultipartUpload, idempotently.
 *    NoSuchUpload (MinIO's answer to a second completion) is resolved by HEAD: the object
 *    must exist with the expected ETag, size and token, else a loud SinkIntegrityError.
 *    Timeouts, connection errors, 5xx and SlowDown are retried with capped exponential
 *    backoff, indefinitely by default (or until close()): nothing is resolved blind.
 *
 * This file is the correct protocol only. Deliberately broken variants ("mutants",
 * ctx.mutant) live in engine/clink/mutants/, each a typed override of one or more protocol
 * steps (`ProtocolSeams`); the sink calls a step's seam where a mutant may override it
 * (marked "Seam:" below) and does the correct thing when it is absent. docs/mutants.md
 * explains each mutant.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, open, readFile } from 'node:fs/promises';
import path from 'node:path';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListPartsCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { MUTANT_NAMES, namedMutant, seamsFor, type SinkSeamContext } from '../mutants/index.ts';
import type { S3Settings, Sink, SinkContext, SinkFactory, UploadHandle, UploadPart } from './sink-api.ts';
import { retry, RetryStoppedError } from '../../../lib/retry.ts';
import { clinkObjectKey } from './keys.ts';
import { decodeLine, encodeRecord } from '../durable-log.ts';
import { completionStarted } from './completions.ts';

export const SINK_FAMILY = 's3_2pc_sink';
/** MinIO (and S3) refuse a non-last part smaller than this. */
export const MIN_PART_SIZE = 5 * 1024 * 1024;
export const MAX_PARTS = 10_000;
/**
 * Parts uploaded during the interval that may wait for the store at once. When the store is
 * slower than the input, further lines stay buffered (the next part is then larger) and the
 * barrier uploads them, as it did before parts were uploaded early.
 */
export const MAX_EARLY_PARTS_QUEUED = 4;

/** The one method of S3Client the sink uses; unit tests pass an in-process fake. */
export interface S3Like {
  send(command: any, options?: { abortSignal?: AbortSignal }): Promise<any>;
  destroy?(): void;
}

export interface S3SinkOptions {
  /** Use this client instead of creating one (unit tests). close() does not destroy it. */
  client?: S3Like;
  /** Part size; at least MIN_PART_SIZE against a real store. Default MIN_PART_SIZE. */
  partSize?: number;
  /** First retry delay (ms), doubled each retry up to backoffCapMs. Default 100. */
  backoffBaseMs?: number;
  backoffCapMs?: number;
  /** Give up retrying a commit after this long (ms) with a SinkRetryDeadlineError. Default: never. */
  commitDeadlineMs?: number;
  /** Same for the uploads of prepare. Default: never (the runtime may close() the sink to stop it). */
  prepareDeadlineMs?: number;
  /** How many InvalidPart answers to a completion (with no object at the key) before it is an integrity error. Default 20. */
  invalidPartRetries?: number;
  /** Timeout of a CompleteMultipartUpload request (never aborted otherwise). Default 300000. */
  completeTimeoutMs?: number;
  /** Per-request timeouts for the created client. Default 5000 each. */
  requestTimeoutMs?: number;
  connectionTimeoutMs?: number;
}

/** A committed outcome that cannot be confirmed: data loss or a foreign object. Never retried, never skipped. */
export class SinkIntegrityError extends Error {
  readonly fatal = true;
  readonly handle: { key: string; uploadId: string; checkpointId: number; epoch: number; subtask: number };
  constructor(message: string, h: UploadHandle) {
    super(message);
    this.name = 'SinkIntegrityError';
    this.handle = { key: h.key, uploadId: h.uploadId, checkpointId: h.checkpointId, epoch: h.epoch, subtask: h.subtask };
  }
}

export class SinkClosedError extends Error {
  constructor(what: string) {
    super(`sink closed while ${what}`);
    this.name = 'SinkClosedError';
  }
}

export class SinkRetryDeadlineError extends Error {
  constructor(what: string, ms: number, cause: unknown) {
    super(`${what}: still failing after ${ms} ms: ${describeError(cause)}`);
    this.name = 'SinkRetryDeadlineError';
  }
}

// ---------------------------------------------------------------------------------------
// Helpers shared with tests and the harness

export function createS3Client(s3: S3Settings, opts: { requestTimeoutMs?: number; connectionTimeoutMs?: number } = {}): S3Client {
  return new S3Client({
    endpoint: s3.endpoint,
    region: s3.region,
    credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
    forcePathStyle: true,
    // Retries are the sink's own (it must know when an outcome is unknown).
    maxAttempts: 1,
    // Plain MD5 ETags; no flexible checksums the store might not keep across a multipart upload.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    requestHandler: new NodeHttpHandler({
      connectionTimeout: opts.connectionTimeoutMs ?? 5000,
      requestTimeout: opts.requestTimeoutMs ?? 5000,
      throwOnRequestTimeout: true,
    }),
  });
}

/** hex(md5(concat of the binary md5 of each part)) + '-' + number of parts. */
export function multipartEtag(partMd5Hex: string[]): string {
  const h = createHash('md5');
  for (const m of partMd5Hex) h.update(Buffer.from(m, 'hex'));
  return `${h.digest('hex')}-${partMd5Hex.length}`;
}

export function md5Hex(b: Uint8Array): string {
  return createHash('md5').update(b).digest('hex');
}

export function stripQuotes(etag: string | undefined): string {
  return (etag ?? '').replace(/^W\//, '').replace(/^"+|"+$/g, '');
}

/** Splits a body into parts of partSize bytes, the last one shorter (never an empty part unless the body is empty). */
export function splitParts(body: Buffer, partSize: number): Buffer[] {
  if (body.length === 0) return [body];
  const n = Math.ceil(body.length / partSize);
  if (n > MAX_PARTS) throw new Error(`buffer of ${body.length} bytes needs ${n} parts of ${partSize} bytes (max ${MAX_PARTS})`);
  const parts: Buffer[] = [];
  for (let i = 0; i < n; i++) parts.push(body.subarray(i * partSize, Math.min(body.length, (i + 1) * partSize)));
  return parts;
}

export interface JournalEntry {
  key: string;
  uploadId: string;
  t: string;
  /** An upload found at the key after a CreateMultipartUpload whose answer was lost (aborted best-effort). */
  orphan?: boolean;
}

/** A journal's entries, and its lines that are complete but fail their checksum (corrupted at rest), by byte offset. */
export interface ParsedJournal {
  entries: JournalEntry[];
  corrupt: { byte: number; line: string }[];
}

/**
 * Parses the sink's journal. Each line is `<crc32 as 8 hex digits> <json>` (durable-log.ts's
 * record format, since the journal is checked like the checkpoint log); a line that begins
 * with `{` is the earlier format, plain JSON without a checksum, read as before. A last line
 * without its newline is a torn append (a kill mid-append) and ignored; a complete line that
 * fails its checksum, or does not parse, is reported in `corrupt`, never taken as an entry.
 */
export function parseJournal(text: string): ParsedJournal {
  const entries: JournalEntry[] = [];
  const corrupt: { byte: number; line: string }[] = [];
  const lines = text.split('\n');
  let byte = 0;
  lines.forEach((line, i) => {
    const at = byte;
    byte += Buffer.byteLength(line) + 1;
    if (!line.trim()) return;
    const complete = i < lines.length - 1;
    let e: JournalEntry | undefined;
    if (line.startsWith('{')) {
      try {
        e = JSON.parse(line) as JournalEntry;
      } catch {
        e = undefined;
      }
    } else e = decodeLine<JournalEntry>(line);
    if (e && typeof e.key === 'string' && typeof e.uploadId === 'string') entries.push(e);
    else if (complete) corrupt.push({ byte: at, line });
  });
  return { entries, corrupt };
}

/** Reads a journal written by the sink (parseJournal); a torn last line (a kill mid-append) is ignored, corrupt lines are dropped. */
export async function readJournal(file: string): Promise<JournalEntry[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
  return parseJournal(text).entries;
}

async function appendJournal(file: string, entry: JournalEntry): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  const fh = await open(file, 'a');
  try {
    await fh.write(encodeRecord(entry));
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/**
 * The journaled uploads that are still pending (neither completed nor aborted). Lists each
 * journaled key exactly (MinIO treats the prefix as an exact object name, and an empty
 * prefix answers from a cache that a restart empties).
 */
export async function listPendingUploads(
  s3: S3Like,
  bucket: string,
  journalEntries: readonly { key: string; uploadId: string }[],
): Promise<{ key: string; uploadId: string; initiated?: string }[]> {
  const byKey = new Map<string, Set<string>>();
  for (const e of journalEntries) {
    let s = byKey.get(e.key);
    if (!s) byKey.set(e.key, (s = new Set()));
    s.add(e.uploadId);
  }
  const pending: { key: string; uploadId: string; initiated?: string }[] = [];
  for (const [key, ids] of byKey) {
    for (const u of await listUploadsAtKey(s3, bucket, key)) {
      if (ids.has(u.uploadId)) pending.push(u);
    }
  }
  return pending;
}

async function listUploadsAtKey(s3: S3Like, bucket: string, key: string, abortSignal?: AbortSignal): Promise<{ key: string; uploadId: string; initiated?: string }[]> {
  const out: { key: string; uploadId: string; initiated?: string }[] = [];
  let keyMarker: string | undefined;
  let uploadIdMarker: string | undefined;
  for (let page = 0; page < 1000; page++) {
    const r = await s3.send(
      new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: key, KeyMarker: keyMarker, UploadIdMarker: uploadIdMarker }),
      abortSignal ? { abortSignal } : undefined,
    );
    for (const u of r.Uploads ?? []) {
      if (u.Key === key && u.UploadId) out.push({ key: u.Key, uploadId: u.UploadId, initiated: u.Initiated ? new Date(u.Initiated).toISOString() : undefined });
    }
    if (!r.IsTruncated) break;
    if (r.NextKeyMarker === keyMarker && r.NextUploadIdMarker === uploadIdMarker) break;
    keyMarker = r.NextKeyMarker;
    uploadIdMarker = r.NextUploadIdMarker;
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// Error classification

type ErrorClass = 'transient' | 'no-such-upload' | 'invalid-part' | 'not-found' | 'fatal';

const TRANSIENT_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNABORTED', 'ESOCKETTIMEDOUT', 'UND_ERR_SOCKET']);
const TRANSIENT_NAMES = new Set(['TimeoutError', 'RequestTimeout', 'RequestTimeTooSkewed', 'SlowDown', 'ServiceUnavailable', 'InternalError', 'XMinioServerNotInitialized', 'XMinioReadQuorum', 'XMinioWriteQuorum', 'OperationAborted', 'ThrottlingException', 'RequestTimeoutException']);

export function classifyError(e: unknown): ErrorClass {
  const err = e as { name?: string; Code?: string; code?: string; $metadata?: { httpStatusCode?: number }; $retryable?: unknown };
  if (!err || typeof err !== 'object') return 'fatal';
  const name = err.name ?? err.Code ?? '';
  if (name === 'NoSuchUpload' || err.Code === 'NoSuchUpload') return 'no-such-upload';
  if (name === 'InvalidPart' || err.Code === 'InvalidPart') return 'invalid-part';
  const status = err.$metadata?.httpStatusCode;
  if (name === 'NotFound' || name === 'NoSuchKey' || (status === 404 && name !== 'NoSuchBucket')) return 'not-found';
  if (TRANSIENT_NAMES.has(name)) return 'transient';
  if (err.code && TRANSIENT_CODES.has(err.code)) return 'transient';
  if (status !== undefined) return status >= 500 || status === 429 || status === 408 ? 'transient' : 'fatal';
  if (err.$retryable) return 'transient';
  // No HTTP answer at all: a network-level failure (socket hang up, aborted request, ...),
  // unless it is a programming error.
  if (e instanceof TypeError || e instanceof RangeError || e instanceof ReferenceError || e instanceof SyntaxError) return 'fatal';
  if (e instanceof SinkIntegrityError || e instanceof SinkClosedError || e instanceof SinkRetryDeadlineError) return 'fatal';
  return 'transient';
}

function describeError(e: unknown): string {
  const err = e as { name?: string; message?: string; code?: string; $metadata?: { httpStatusCode?: number } };
  if (!err || typeof err !== 'object') return String(e);
  const status = err.$metadata?.httpStatusCode;
  return `${err.name ?? 'Error'}${err.code ? `(${err.code})` : ''}${status ? ` [${status}]` : ''}: ${err.message ?? ''}`;
}

// ---------------------------------------------------------------------------------------
// The sink

export function createS3Sink(ctx: SinkContext, opts: S3SinkOptions = {}): Sink {
  const mutant = namedMutant(ctx.mutant);
  // The protocol steps a mutant overrides (none for the correct sink; an unknown name is refused by open()).
  const seams = seamsFor(mutant);
  const partSize = opts.partSize ?? MIN_PART_SIZE;
  const backoffBase = opts.backoffBaseMs ?? 100;
  const backoffCap = opts.backoffCapMs ?? 2000;
  const invalidPartRetries = opts.invalidPartRetries ?? 20;
  const bucket = ctx.bucket;

  let client: S3Like | undefined = opts.client;
  /**
   * CompleteMultipartUpload goes through its own client, with a long timeout and never
   * aborted by us: MinIO destroys an upload's parts without creating the object when the
   * client of a completion disconnects before the store processes it (seen on the pinned
   * build with the store SIGSTOPped; test/rig/sink-s3-2pc.test.ts reproduces it).
   */
  let completeClient: S3Like | undefined = opts.client;
  let completesInFlight = 0;
  let destroyCompleteClientWhenIdle = false;
  const ownsClient = !opts.client;
  let closed = false;
  const aborter = new AbortController();
  let lines: string[] = [];
  let bufferedBytes = 0;

  const s3 = (): S3Like => {
    if (closed) throw new SinkClosedError('using the store');
    if (!client) throw new Error('s3_2pc_sink: open() was not called');
    return client;
  };
  const send = (cmd: unknown): Promise<any> => s3().send(cmd, { abortSignal: aborter.signal });
  /** Sends a CompleteMultipartUpload with no abort signal and the long timeout. */
  const sendComplete = async (cmd: unknown): Promise<any> => {
    s3();
    const c = completeClient!;
    completesInFlight++;
    const settled = completionStarted();
    try {
      return await c.send(cmd);
    } finally {
      settled();
      completesInFlight--;
      if (completesInFlight === 0 && destroyCompleteClientWhenIdle) c.destroy?.();
    }
  };

  const sleep = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      if (closed) return resolve();
      const t = setTimeout(() => {
        aborter.signal.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      const onAbort = (): void => {
        clearTimeout(t);
        resolve();
      };
      aborter.signal.addEventListener('abort', onAbort, { once: true });
    });

  /**
   * Runs op until it succeeds or fails with something that is not transient. onUnknown is
   * called on each transient failure; returning 'stop' ends the loop.
   */
  async function withRetry<T>(
    what: string,
    deadlineMs: number | undefined,
    op: () => Promise<T>,
    onTransient?: (e: unknown, attempt: number) => Promise<'stop' | 'retry'>,
  ): Promise<{ ok: true; value: T } | { ok: false; stopped: true }> {
    const started = Date.now();
    let stopped = false;
    try {
      const value = await retry(
        async () => {
          if (closed) throw new SinkClosedError(what);
          return await op();
        },
        {
          backoff: { initialMs: backoffBase, maxMs: backoffCap },
          signal: aborter.signal,
          // The sink's own decisions, in order; each end but 'retry' throws or stops.
          isRetryable: async (e, attempt) => {
            if (closed) throw new SinkClosedError(what);
            if (classifyError(e) !== 'transient') return false;
            if (onTransient && (await onTransient(e, attempt)) === 'stop') {
              stopped = true;
              return false;
            }
            if (deadlineMs !== undefined && Date.now() - started >= deadlineMs) throw new SinkRetryDeadlineError(what, deadlineMs, e);
            return true;
          },
          onRetry: (e, attempt, delay) => {
            if (attempt === 1 || attempt % 10 === 0) {
              ctx.log(`clink sink retry: subtask=${ctx.subtask} ${what} attempt=${attempt} nextInMs=${delay} error=${describeError(e)}`);
            }
          },
        },
      );
      return { ok: true, value };
    } catch (e) {
      if (stopped) return { ok: false, stopped: true };
      // Aborted: close() came while the sink was deciding to retry.
      if (e instanceof RetryStoppedError) throw new SinkClosedError(what);
      throw e;
    }
  }

  /** What a seam may use of this sink (engine/clink/mutants/seams.ts). */
  const seamContext: SinkSeamContext = {
    subtask: ctx.subtask,
    prefix: ctx.prefix,
    bucket,
    log: (line) => ctx.log(line),
    send,
    async sendRetried(what, makeCommand) {
      const r = await withRetry(what, opts.commitDeadlineMs, () => send(makeCommand()));
      if (!r.ok) throw new Error('unreachable');
      return r.value;
    },
    complete: (h) => complete(h),
  };

  function objectKey(checkpointId: number, epoch: number): string {
    const place = { subtask: ctx.subtask, epoch, checkpointId };
    // Seam: the object's key (unique per subtask, epoch and checkpoint).
    return seams.objectKey?.(seamContext, place) ?? clinkObjectKey(ctx.prefix, place);
  }

  /** CreateMultipartUpload, journaled. After an answer was lost, uploads found at the key are journaled as orphans and aborted. */
  async function createUpload(key: string, token: string, checkpointId: number, epoch: number): Promise<string> {
    let ambiguous = false;
    const r = await withRetry(
      `create key=${key}`,
      opts.prepareDeadlineMs,
      () =>
        send(
          new CreateMultipartUploadCommand({
            Bucket: bucket,
            Key: key,
            ContentType: 'application/x-ndjson',
            Metadata: { 'clink-token': token, 'clink-subtask': String(ctx.subtask), 'clink-checkpoint': String(checkpointId), 'clink-epoch': String(epoch) },
          }),
        ),
      async () => {
        ambiguous = true;
        return 'retry';
      },
    );
    if (!r.ok) throw new Error('unreachable');
    const uploadId = r.value.UploadId as string | undefined;
    if (!uploadId) throw new Error(`CreateMultipartUpload for ${key} returned no UploadId`);
    await appendJournal(ctx.journalPath, { key, uploadId, t: new Date().toISOString() });
    if (ambiguous) {
      // An earlier attempt may have created an upload whose answer never arrived: journal it
      // (so the pending count sees it) and abort it (best-effort).
      try {
        for (const u of await listUploadsAtKey(s3(), bucket, key, aborter.signal)) {
          if (u.uploadId === uploadId) continue;
          await appendJournal(ctx.journalPath, { key, uploadId: u.uploadId, t: new Date().toISOString(), orphan: true });
          await send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: u.uploadId })).catch(() => undefined);
        }
      } catch (e) {
        ctx.log(`clink sink warning: subtask=${ctx.subtask} could not sweep orphan uploads at ${key}: ${describeError(e)}`);
      }
    }
    return uploadId;
  }

  /** Uploads one part, retried until the store keeps exactly these bytes (its ETag is their md5). */
  async function uploadPart(key: string, uploadId: string, partNumber: number, chunk: Buffer): Promise<{ part: UploadPart; md5: string }> {
    const localMd5 = md5Hex(chunk);
    // Re-uploading a part number replaces it, so a retry is safe.
    const r = await withRetry(`upload-part key=${key} part=${partNumber}`, opts.prepareDeadlineMs, async () => {
      const out = await send(new UploadPartCommand({ Bucket: bucket, Key: key, UploadId: uploadId, PartNumber: partNumber, Body: chunk, ContentLength: chunk.length }));
      const etag = stripQuotes(out.ETag);
      if (etag !== localMd5) {
        // The store stored other bytes than we sent: treat as a failed transfer and resend.
        throw Object.assign(new Error(`part ${partNumber} of ${key}: store ETag ${etag} != local md5 ${localMd5}`), { name: 'PartEtagMismatch', $retryable: true });
      }
      return out.ETag as string;
    });
    if (!r.ok) throw new Error('unreachable');
    return { part: { partNumber, etag: r.value, size: chunk.length }, md5: localMd5 };
  }

  async function uploadParts(key: string, uploadId: string, body: Buffer, firstPartNumber = 1): Promise<{ parts: UploadPart[]; md5s: string[] }> {
    const chunks = splitParts(body, partSize);
    if (firstPartNumber - 1 + chunks.length > MAX_PARTS) throw new Error(`s3_2pc_sink: ${firstPartNumber - 1 + chunks.length} parts for ${key} (max ${MAX_PARTS})`);
    const parts: UploadPart[] = [];
    const md5s: string[] = [];
    for (let i = 0; i < chunks.length; i++) {
      const { part, md5 } = await uploadPart(key, uploadId, firstPartNumber + i, chunks[i]!);
      parts.push(part);
      md5s.push(md5);
    }
    return { parts, md5s };
  }

  function handleOf(checkpointId: number, epoch: number, key: string, uploadId: string, token: string, parts: UploadPart[], md5s: string[], bytes: number, records: number): UploadHandle {
    return {
      bucket,
      key,
      uploadId,
      parts,
      bytes,
      records,
      token,
      expectedEtag: multipartEtag(md5s),
      subtask: ctx.subtask,
      checkpointId,
      epoch,
    };
  }

  async function stage(checkpointId: number, epoch: number, body: Buffer, records: number): Promise<UploadHandle> {
    const key = objectKey(checkpointId, epoch);
    const token = randomBytes(16).toString('hex');
    const uploadId = await createUpload(key, token, checkpointId, epoch);
    const { parts, md5s } = await uploadParts(key, uploadId, body);
    return handleOf(checkpointId, epoch, key, uploadId, token, parts, md5s, body.length, records);
  }

  // -------------------------------------------------------------------------------------
  // Parts during the interval
  //
  // At a high rate a checkpoint's buffer is tens of MB, and uploading it all at the barrier
  // made the barrier (and so every event's produce → visible latency) wait for it. Once the
  // sink knows which checkpoint comes next (`expected`: after prepare(C, E), the subtask's
  // next barrier is C + 1 of epoch E, since barriers reach a subtask in order) and a whole
  // part is buffered, write() hands that part to a background chain: the first part creates
  // the checkpoint's upload (journaled before any part, as at the barrier), each part is
  // uploaded in order, retried as at the barrier. prepare(C, E) then waits for the chain,
  // uploads what is left as the last part and returns the same handle a barrier upload
  // would have. Nothing of it is visible before the completion, exactly as before.
  //  - The barrier is not C + 1 (an id was skipped, or the subtask committed on its own under
  //    a mutant's seam): the early upload is aborted (best-effort; it is journaled) and its
  //    bytes are staged again at the barrier's own key. The bytes of every early part are kept
  //    until prepare has its handle, so nothing depends on the early upload.
  //  - The early chain failed (the store refused, a deadline): prepare stages everything again,
  //    as above; a closed sink stops the chain and prepare throws as it did.
  //  - After open or recover the next id is unknown: nothing is uploaded before the first barrier.

  interface Early {
    checkpointId: number;
    epoch: number;
    key: string;
    token: string;
    uploadId: string | null;
    /** Every part handed to the chain, in part-number order (kept until prepare has its handle). */
    bodies: Buffer[];
    records: number;
    bytes: number;
    parts: UploadPart[];
    md5s: string[];
    /** Settles when every part handed to it is uploaded or the chain failed; never rejects. */
    chain: Promise<void>;
    failed: unknown;
  }
  let expected: { checkpointId: number; epoch: number } | null = null;
  let early: Early | null = null;

  /** Takes the buffered lines and their bytes, one line each, leaving the buffer empty. */
  function takeBuffer(): { body: Buffer; lines: string[] } {
    const taken = lines;
    const body = taken.length === 0 ? Buffer.alloc(0) : Buffer.from(taken.join('\n') + '\n');
    if (body.length !== bufferedBytes) throw new Error(`s3_2pc_sink: buffer accounting: ${body.length} bytes built, ${bufferedBytes} counted`);
    lines = [];
    bufferedBytes = 0;
    return { body, lines: taken };
  }

  /** Hands what is buffered to the early chain as its next part (write() calls it once a part's worth is buffered). */
  function earlyPart(): void {
    if (!expected || closed) return;
    if (early && (early.failed !== undefined || early.bodies.length - early.parts.length >= MAX_EARLY_PARTS_QUEUED)) return;
    if (early && early.bodies.length >= MAX_PARTS - 1) return;
    const { body, lines: taken } = takeBuffer();
    const records = taken.length;
    if (!early) {
      const { checkpointId, epoch } = expected;
      early = { checkpointId, epoch, key: objectKey(checkpointId, epoch), token: randomBytes(16).toString('hex'), uploadId: null, bodies: [], records: 0, bytes: 0, parts: [], md5s: [], chain: Promise.resolve(), failed: undefined };
    }
    const e = early;
    e.bodies.push(body);
    e.records += records;
    e.bytes += body.length;
    const partNumber = e.bodies.length;
    e.chain = e.chain.then(async () => {
      if (e.failed !== undefined) return;
      try {
        if (e.uploadId === null) e.uploadId = await createUpload(e.key, e.token, e.checkpointId, e.epoch);
        const { part, md5 } = await uploadPart(e.key, e.uploadId, partNumber, body);
        e.parts.push(part);
        e.md5s.push(md5);
      } catch (err) {
        e.failed = err;
      }
    });
  }

  /** Aborts an early upload that will not be completed (best-effort: it is journaled, and invisible either way). */
  async function abandonEarly(e: Early, why: string): Promise<void> {
    ctx.log(`clink sink: subtask=${ctx.subtask} early upload for checkpoint ${e.checkpointId} epoch ${e.epoch} (${e.bodies.length} parts handed, ${e.parts.length} uploaded) not used: ${why}`);
    if (e.uploadId === null || closed) return;
    await send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: e.key, UploadId: e.uploadId })).catch(() => undefined);
  }

  /**
   * The barrier's staging: with an early upload for this very checkpoint, the rest of the
   * buffer becomes its last part; otherwise (none, another id, or a failed chain) the early
   * bytes and the rest are staged together as one fresh upload, as without early parts.
   */
  async function stageWithEarly(checkpointId: number, epoch: number, e: Early | null, rest: Buffer, restRecords: number): Promise<UploadHandle> {
    if (!e) return stage(checkpointId, epoch, rest, restRecords);
    await e.chain;
    if (closed) throw new SinkClosedError('staging');
    if (e.checkpointId === checkpointId && e.epoch === epoch && e.failed === undefined && e.uploadId !== null) {
      const tail = rest.length ? await uploadParts(e.key, e.uploadId, rest, e.bodies.length + 1) : { parts: [], md5s: [] };
      return handleOf(checkpointId, epoch, e.key, e.uploadId, e.token, [...e.parts, ...tail.parts], [...e.md5s, ...tail.md5s], e.bytes + rest.length, e.records + restRecords);
    }
    const why = e.failed !== undefined ? `its upload failed (${describeError(e.failed)})` : `the barrier is checkpoint ${checkpointId} epoch ${epoch}`;
    await abandonEarly(e, `${why}; its bytes are staged again at the barrier's key`);
    return stage(checkpointId, epoch, Buffer.concat([...e.bodies, rest]), e.records + restRecords);
  }

  /** The lines of bodies built by earlyPart (a record never contains a newline). */
  function linesOf(bodies: Buffer[]): string[] {
    const out: string[] = [];
    for (const b of bodies) {
      const ls = b.toString('utf8').split('\n');
      ls.pop();
      for (const l of ls) out.push(l);
    }
    return out;
  }

  /** ListParts of the handle's upload: 'ok' when every part of the handle is there with its ETag. */
  async function probeParts(h: UploadHandle): Promise<string> {
    const seen = new Map<number, string>();
    let marker: string | undefined;
    for (let page = 0; page < 20; page++) {
      const r = await send(new ListPartsCommand({ Bucket: bucket, Key: h.key, UploadId: h.uploadId, PartNumberMarker: marker }));
      for (const p of r.Parts ?? []) seen.set(p.PartNumber, stripQuotes(p.ETag));
      if (!r.IsTruncated || !r.NextPartNumberMarker) break;
      marker = String(r.NextPartNumberMarker);
    }
    const missing = h.parts.filter((p) => seen.get(p.partNumber) !== stripQuotes(p.etag)).map((p) => p.partNumber);
    return missing.length ? `parts ${missing.join(',')} missing or changed (${seen.size} listed)` : 'ok';
  }

  /** What is at the handle's key: its committed object, nothing, or something else. */
  async function inspect(h: UploadHandle): Promise<{ state: 'ours' } | { state: 'missing' } | { state: 'foreign'; problems: string[] }> {
    const r = await withRetry(`head key=${h.key}`, opts.commitDeadlineMs, async () => {
      try {
        return (await send(new HeadObjectCommand({ Bucket: bucket, Key: h.key }))) as { ETag?: string; ContentLength?: number; Metadata?: Record<string, string> };
      } catch (e) {
        if (classifyError(e) === 'not-found') return null;
        throw e;
      }
    });
    if (!r.ok) throw new Error('unreachable');
    const head = r.value;
    if (!head) return { state: 'missing' };
    const etag = stripQuotes(head.ETag);
    const token = head.Metadata?.['clink-token'];
    const problems: string[] = [];
    if (etag !== h.expectedEtag) problems.push(`ETag ${etag} != expected ${h.expectedEtag}`);
    if (head.ContentLength !== undefined && head.ContentLength !== h.bytes) problems.push(`size ${head.ContentLength} != expected ${h.bytes}`);
    if (token !== h.token) problems.push(`clink-token ${token ?? '(none)'} != expected ${h.token}`);
    return problems.length ? { state: 'foreign', problems } : { state: 'ours' };
  }

  /** After NoSuchUpload: the object must be the committed one; anything else is a SinkIntegrityError. */
  async function verifyCommitted(h: UploadHandle): Promise<void> {
    const at = await inspect(h);
    if (at.state === 'missing') {
      throw loud(h, `upload ${h.uploadId} is gone (NoSuchUpload) and no object exists at ${h.key}: the checkpointed records are LOST`);
    }
    if (at.state === 'foreign') {
      // Seam: a foreign object at the key of a re-completed upload (never accepted by the correct sink).
      if (seams.acceptForeignObject?.(seamContext, h, at.problems)) return;
      throw loud(h, `upload ${h.uploadId} is gone (NoSuchUpload) and the object at ${h.key} is not ours (${at.problems.join('; ')}): FOREIGN OR CORRUPTED object`);
    }
  }

  function loud(h: UploadHandle, msg: string): SinkIntegrityError {
    const err = new SinkIntegrityError(`s3_2pc_sink integrity error: subtask=${ctx.subtask} checkpoint=${h.checkpointId} epoch=${h.epoch}: ${msg}`, h);
    ctx.log(`clink sink INTEGRITY ERROR: ${err.message}`);
    return err;
  }

  /**
   * CompleteMultipartUpload, idempotent:
   *  - success → the answered ETag must be the expected one;
   *  - NoSuchUpload → already completed (by us, earlier, or by a previous process): verify by HEAD;
   *  - InvalidPart → MinIO's answer when another completion of the same upload (a timed-out
   *    attempt the store was still processing, maybe from a dead process) is under way or
   *    has just moved the parts: HEAD; ours → done; otherwise retry (bounded);
   *  - timeout / connection error / 5xx / SlowDown → outcome unknown: retry with backoff;
   *  - anything else → thrown.
   */
  async function complete(h: UploadHandle): Promise<void> {
    if (h.bucket !== bucket) throw new Error(`handle for bucket ${h.bucket} given to a sink on ${bucket}`);
    const what = `complete key=${h.key} upload=${h.uploadId}`;
    const started = Date.now();
    let invalidParts = 0;
    for (let attempt = 1; ; attempt++) {
      if (closed) throw new SinkClosedError(what);
      let cls: ErrorClass;
      let err: unknown;
      try {
        // Probe first (read-only, short timeout): a completion is only sent to a store that
        // has just answered and still holds every staged part, so that a completion is not
        // left in flight through an outage (see completeClient).
        const probe = await probeParts(h);
        if (probe !== 'ok') throw Object.assign(new Error(`staged parts of ${h.key} do not match the handle: ${probe}`), { name: 'InvalidPart' });
        const out = await sendComplete(
          new CompleteMultipartUploadCommand({
            Bucket: bucket,
            Key: h.key,
            UploadId: h.uploadId,
            MultipartUpload: { Parts: h.parts.map((p) => ({ PartNumber: p.partNumber, ETag: p.etag })) },
          }),
        );
        const returned = stripQuotes(out.ETag);
        if (returned && returned !== h.expectedEtag) throw loud(h, `CompleteMultipartUpload answered ETag ${returned}, expected ${h.expectedEtag}`);
        return;
      } catch (e) {
        if (closed) throw new SinkClosedError(what);
        if (e instanceof SinkIntegrityError) throw e;
        cls = classifyError(e);
        err = e;
      }
      if (cls === 'no-such-upload') {
        // Seam: what NoSuchUpload means (correct: already completed; verify the object by HEAD).
        if (seams.onNoSuchUpload) await seams.onNoSuchUpload(seamContext, h);
        else {
          await verifyCommitted(h);
          // Said: a second completion of one upload (a restore's re-commit, or a zombie's late one) met the first.
          ctx.log(`clink sink commit: subtask=${ctx.subtask} checkpoint=${h.checkpointId} epoch=${h.epoch} key=${h.key}: already completed (NoSuchUpload), the object verified as ours`);
        }
        return;
      }
      if (cls === 'invalid-part') {
        const at = await inspect(h);
        if (at.state === 'ours') return;
        if (at.state === 'foreign') throw loud(h, `completion refused (InvalidPart) and the object at ${h.key} is not ours (${at.problems.join('; ')})`);
        if (++invalidParts > invalidPartRetries) {
          throw loud(h, `staged parts missing or changed (InvalidPart) ${invalidParts} times and no object at ${h.key}: the checkpointed records are LOST (${describeError(err)})`);
        }
      } else if (cls === 'transient') {
        // Seam: an unknown outcome (correct: retried, until the commit deadline if any).
        if (seams.onUnknownOutcome) {
          await seams.onUnknownOutcome(seamContext, h, describeError(err));
          return;
        }
        if (opts.commitDeadlineMs !== undefined && Date.now() - started >= opts.commitDeadlineMs) throw new SinkRetryDeadlineError(what, opts.commitDeadlineMs, err);
      } else {
        throw err;
      }
      const delay = Math.min(backoffCap, backoffBase * 2 ** Math.min(attempt - 1, 20));
      if (attempt === 1 || attempt % 10 === 0) {
        ctx.log(`clink sink retry: subtask=${ctx.subtask} ${what} attempt=${attempt} nextInMs=${delay} error=${describeError(err)}`);
      }
      await sleep(delay);
    }
  }

  return {
    async open(): Promise<void> {
      if (mutant && !MUTANT_NAMES.includes(mutant)) {
        throw new Error(`s3_2pc_sink: unknown mutant '${mutant}' (known: ${MUTANT_NAMES.join(', ')})`);
      }
      if (!client) client = createS3Client(ctx.s3, { requestTimeoutMs: opts.requestTimeoutMs, connectionTimeoutMs: opts.connectionTimeoutMs });
      if (!completeClient) {
        completeClient = createS3Client(ctx.s3, { requestTimeoutMs: opts.completeTimeoutMs ?? 300_000, connectionTimeoutMs: opts.connectionTimeoutMs });
      }
      ctx.log(
        `clink sink open: family=${SINK_FAMILY} subtask=${ctx.subtask} bucket=${bucket} prefix=${ctx.prefix} checkpointIntervalMs=${ctx.checkpointIntervalMs} mutant=${mutant ?? 'none'}`,
      );
    },

    write(line: string): void {
      if (line.includes('\n')) throw new Error('s3_2pc_sink: a record must be one line (it contains a newline)');
      lines.push(line);
      bufferedBytes += Buffer.byteLength(line) + 1;
      if (bufferedBytes >= partSize && expected) earlyPart();
    },

    async prepare(checkpointId: number, epoch: number): Promise<UploadHandle[]> {
      await ctx.faultPoint('sink.before-prepare', { checkpointId, epoch });
      let handles: UploadHandle[];
      // The buffer and the early upload are taken before the first await: a line written
      // while the upload runs belongs to the next checkpoint, never dropped nor staged twice.
      const e = early;
      early = null;
      // Until this barrier has its handle the next id is not known (a failed prepare leaves it unknown).
      expected = null;
      // Seam: whether an empty buffer is staged (correct: no handle, nothing to commit).
      if (lines.length === 0 && !e && !seams.stageEmptyBuffer) {
        handles = [];
      } else {
        const { body, lines: taken } = takeBuffer();
        const takenBytes = body.length;
        let h: UploadHandle;
        try {
          h = await stageWithEarly(checkpointId, epoch, e, body, taken.length);
        } catch (err) {
          // Not staged: the taken lines (the early parts' first) go back in front of anything written meanwhile.
          if (!closed) {
            const back = e ? linesOf(e.bodies).concat(taken) : taken;
            lines = back.concat(lines);
            bufferedBytes += takenBytes + (e ? e.bytes : 0);
          }
          throw err;
        }
        // Seam: right after staging (correct: nothing; the commit waits for the checkpoint).
        await seams.afterStage?.(seamContext, h);
        handles = [h];
      }
      expected = { checkpointId: checkpointId + 1, epoch };
      await ctx.faultPoint('sink.after-prepare', { checkpointId, epoch });
      return handles;
    },

    async commit(checkpointId: number, epoch: number, handles: UploadHandle[]): Promise<void> {
      await ctx.faultPoint('sink.before-commit', { checkpointId, epoch });
      for (const h of handles) await complete(h);
      await ctx.faultPoint('sink.after-commit', { checkpointId, epoch });
    },

    async recover(handles: UploadHandle[], epoch: number): Promise<void> {
      // Whatever was buffered belongs to the abandoned attempt; the source replays it.
      if (lines.length || early) ctx.log(`clink sink recover: subtask=${ctx.subtask} dropping ${lines.length + (early?.records ?? 0)} buffered records of the abandoned attempt`);
      lines = [];
      bufferedBytes = 0;
      if (early) void abandonEarly(early, 'a recover; its records go with the buffer, the source replays them');
      early = null;
      expected = null;
      // Seam: the restored handles to complete (correct: every one).
      for (const h of seams.restoredHandles?.(seamContext, handles) ?? handles) {
        await ctx.faultPoint('sink.recover.before-commit', { checkpointId: h.checkpointId, epoch });
        await complete(h);
        await ctx.faultPoint('sink.recover.after-commit', { checkpointId: h.checkpointId, epoch });
      }
    },

    async close(): Promise<void> {
      closed = true;
      aborter.abort();
      lines = [];
      bufferedBytes = 0;
      // An early upload is left as it is (journaled, invisible), like the parts of a barrier cut short.
      early = null;
      expected = null;
      if (ownsClient && client) client.destroy?.();
      // A completion in flight is left to finish (see completeClient).
      if (ownsClient && completeClient) {
        if (completesInFlight === 0) completeClient.destroy?.();
        else destroyCompleteClientWhenIdle = true;
      }
      client = undefined;
      completeClient = undefined;
    },
  };
}

export const s3_2pc_sink: SinkFactory = (ctx) => createS3Sink(ctx);
