/**
 * The oracle's view of the object store: what a downstream consumer can do, nothing more
 * (list a prefix, get an object). Every request carries its own deadline, so a paused
 * store surfaces as a retryable STORE_UNAVAILABLE error instead of a hang, and the SDK's
 * own retries are off: the oracle retries itself and records every error it met.
 *
 * A downstream consumer of a directory of files (Hadoop's FileInputFormat, Spark, Hive,
 * Trino) skips hidden names: a last path segment starting with `_` or `.` is a writer's
 * staging or marker file, not output. So does the oracle (isHiddenKey). Flink's S3
 * RecoverableWriter needs it: at each checkpoint it puts the unfinished tail of a part that
 * spans checkpoints as `<dir>/_<part name>_tmp_<uuid>` beside the output and deletes it once
 * the part is committed (the wide job profile, engine/flink/profiles.ts); judged as output,
 * its lines would be duplicates and its deletion a mutation. Clink writes no such names.
 *
 * The listing goes through the SDK's S3 client; a GET, the oracle's one per-object call,
 * does not: the client's middleware stack cost about 0.4 ms of client CPU a GET, about half
 * of what a GET cost beyond reading its bytes, and the SDK's signer and HTTP handler, used
 * without the client since, still paid per request for their key cache, their promises, a
 * stream iterator and a list of chunks (docs/qualification/oracle-flat.md). A GET is one
 * request dispatched on an undici Pool of keep-alive connections (httpGet: undici's
 * low-level dispatch, its body handed over chunk by chunk, with no stream; about 12 % less
 * client CPU for a recount in 1,600 objects than node:http, docs/qualification/oracle-flat.md
 * "Session 20"), signed by oracle/sigv4.ts
 * (checked byte for byte against the SDK's @smithy/signature-v4, which cost 12 times its CPU
 * a request). What the middleware did for a GET is done here:
 * path-style URL, 404 -> null, 403/400 -> PRECONDITION, anything else retryable, a body
 * shorter than its Content-Length retryable, and the store's full-object checksum of the
 * body (x-amz-checksum-mode: ENABLED) checked, a mismatch retryable (checkBodyChecksum).
 */
import { createHash } from 'node:crypto';
import http from 'node:http';
import { crc32 } from 'node:zlib';
import { Pool, type Dispatcher } from 'undici';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { extendedEncodeURIComponent } from '@smithy/core/protocols';
import { QualError } from '../lib/errors.ts';
import { GetSigner } from './sigv4.ts';

export interface StoreSettings {
  endpoint: string;
  region?: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** Per-request deadline (ms), body included. Default 10 s. */
  requestTimeoutMs?: number;
  /** Connections kept for parallel requests: so many for the listing, and so many for the GETs. Default 64. */
  maxSockets?: number;
}

export interface ListedObject {
  key: string;
  etag: string;
  size: number;
}

export interface FetchedObject {
  key: string;
  etag: string;
  size: number;
  body: Buffer;
}

/** Whether a key is hidden from a downstream consumer: its last path segment starts with `_` or `.`. */
export function isHiddenKey(key: string): boolean {
  const name = key.slice(key.lastIndexOf('/') + 1);
  return name.startsWith('_') || name.startsWith('.');
}

/** The store's keep-alive agent: sockets kept for parallel requests (maxSockets, default 64). */
function storeAgent(s: StoreSettings): http.Agent {
  return new http.Agent({ keepAlive: true, maxSockets: s.maxSockets ?? 64 });
}

export function makeS3Client(s: StoreSettings, agent: http.Agent = storeAgent(s)): S3Client {
  return new S3Client({
    endpoint: s.endpoint,
    region: s.region ?? 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: s.accessKeyId, secretAccessKey: s.secretAccessKey },
    maxAttempts: 1,
    requestHandler: { httpAgent: agent, connectionTimeout: s.requestTimeoutMs ?? 10_000 },
  });
}

/**
 * The full-object checksums of a GET's response that the oracle checks against the body, in
 * the SDK's order of preference, each as the store sends it (base64 of the digest). A value
 * with a part count (`…-3`) is a multipart object's checksum of checksums, not of the body:
 * it is left alone, as the SDK leaves it.
 */
const BODY_CHECKSUMS: readonly { header: string; of: (body: Buffer) => string }[] = [
  { header: 'x-amz-checksum-sha256', of: (b) => createHash('sha256').update(b).digest('base64') },
  { header: 'x-amz-checksum-sha1', of: (b) => createHash('sha1').update(b).digest('base64') },
  {
    header: 'x-amz-checksum-crc32',
    of: (b) => {
      const d = Buffer.alloc(4);
      d.writeUInt32BE(crc32(b));
      return d.toString('base64');
    },
  },
];

/**
 * Checks the body against the first full-object checksum the response carries (SHA-256,
 * SHA-1 or CRC32; CRC32C and CRC64NVME are not checked). Returns the mismatch, or null when
 * the body matches or no checksum applies.
 */
export function checkBodyChecksum(headers: Record<string, string | undefined>, body: Buffer): string | null {
  for (const c of BODY_CHECKSUMS) {
    const want = headers[c.header];
    if (!want) continue;
    if (/-[1-9]\d*$/.test(want)) return null;
    const got = c.of(body);
    return got === want ? null : `${c.header} is ${want}, the body's ${got}`;
  }
  return null;
}

/** The `<Code>` and `<Message>` of an S3 XML error body, when it has them. */
function s3ErrorOf(body: string): { code?: string; message?: string } {
  const code = /<Code>([^<]*)<\/Code>/.exec(body)?.[1];
  const message = /<Message>([^<]*)<\/Message>/.exec(body)?.[1];
  return { ...(code ? { code } : {}), ...(message ? { message } : {}) };
}

/** Strips the quotes S3 puts around ETags. */
export function normEtag(etag: string | undefined): string {
  return (etag ?? '').replace(/^"|"$/g, '');
}

function storeError(what: string, err: unknown): QualError {
  const e = err as { name?: string; message?: string; $metadata?: { httpStatusCode?: number } };
  const status = e?.$metadata?.httpStatusCode;
  const msg = `${what}: ${e?.name ?? 'Error'}${status ? ` (HTTP ${status})` : ''}: ${e?.message ?? String(err)}`;
  // Access and argument errors are not going to heal by waiting; everything else might.
  if (status === 403 || status === 400 || e?.name === 'NoSuchBucket') return new QualError('PRECONDITION', msg, undefined, { cause: err });
  return new QualError('STORE_UNAVAILABLE', msg, undefined, { cause: err });
}

export class ObjectStore {
  readonly client: S3Client;
  readonly bucket: string;
  readonly #timeoutMs: number;
  readonly #agent: http.Agent;
  /** The GETs' keep-alive connections (httpGet). */
  readonly #pool: Pool;
  readonly #signer: GetSigner;
  readonly #endpoint: URL;
  /** The path of the bucket on the endpoint (path-style), without a trailing slash. */
  readonly #basePath: string;

  constructor(settings: StoreSettings, bucket: string) {
    this.#agent = storeAgent(settings);
    this.client = makeS3Client(settings, this.#agent);
    this.bucket = bucket;
    this.#timeoutMs = settings.requestTimeoutMs ?? 10_000;
    this.#signer = new GetSigner({ accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey, region: settings.region ?? 'us-east-1' });
    this.#endpoint = new URL(settings.endpoint);
    this.#basePath = `${this.#endpoint.pathname.replace(/\/$/, '')}/${bucket}`;
    this.#pool = new Pool(this.#endpoint.origin, { connections: settings.maxSockets ?? 64 });
  }

  /** Every object under the prefix that a downstream consumer reads (not hidden: isHiddenKey), in key order. */
  async list(prefix: string): Promise<ListedObject[]> {
    return (await this.listAll(prefix)).visible;
  }

  /** Every object under the prefix (ListObjectsV2, paginated), in key order: the visible ones, and the keys of the hidden ones. */
  async listAll(prefix: string): Promise<{ visible: ListedObject[]; hidden: string[] }> {
    const visible: ListedObject[] = [];
    const hidden: string[] = [];
    let token: string | undefined;
    do {
      const page = await this.listPage(prefix, token);
      visible.push(...page.visible);
      hidden.push(...page.hidden);
      token = page.next;
    } while (token);
    return { visible, hidden };
  }

  /**
   * One page of the listing (up to 1,000 objects, in key order): its visible objects, the keys
   * of its hidden ones (isHiddenKey), and the token of the next page, if there is one.
   */
  async listPage(prefix: string, token?: string): Promise<{ visible: ListedObject[]; hidden: string[]; next?: string }> {
    let res;
    try {
      res = await this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, ContinuationToken: token, MaxKeys: 1000 }), {
        abortSignal: AbortSignal.timeout(this.#timeoutMs),
      });
    } catch (err) {
      throw storeError(`list s3://${this.bucket}/${prefix}`, err);
    }
    const visible: ListedObject[] = [];
    const hidden: string[] = [];
    for (const o of res.Contents ?? []) {
      if (isHiddenKey(o.Key!)) hidden.push(o.Key!);
      else visible.push({ key: o.Key!, etag: normEtag(o.ETag), size: Number(o.Size ?? 0) });
    }
    const next = res.IsTruncated ? res.NextContinuationToken : undefined;
    return next ? { visible, hidden, next } : { visible, hidden };
  }

  /** The object's bytes, or null when it does not exist (any more). */
  async get(key: string): Promise<FetchedObject | null> {
    const what = `get s3://${this.bucket}/${key}`;
    const path = `${this.#basePath}/${key.split('/').map(extendedEncodeURIComponent).join('/')}`;
    const e = this.#endpoint;
    let response: StoreResponse;
    try {
      response = await httpGet(this.#pool, path, this.#signer.sign(e.host, path), this.#timeoutMs);
    } catch (err) {
      throw storeError(what, err);
    }
    const { status, body } = response;
    if (status === 404) return null;
    if (status < 200 || status >= 300) {
      const x = s3ErrorOf(body.toString('utf8'));
      throw storeError(what, { name: x.code ?? `HTTP${status}`, message: x.message ?? (body.length ? body.toString('utf8', 0, 200) : `HTTP ${status}`), $metadata: { httpStatusCode: status } });
    }
    const announced = response.headers['content-length'];
    if (announced !== undefined && Number(announced) !== body.length) {
      throw storeError(what, { name: 'ShortBody', message: `${body.length} of the ${announced} bytes announced` });
    }
    const mismatch = checkBodyChecksum(response.headers, body);
    if (mismatch) throw storeError(what, { name: 'ChecksumMismatch', message: mismatch });
    return { key, etag: normEtag(response.headers.etag), size: body.length, body };
  }

  destroy(): void {
    this.client.destroy();
    this.#agent.destroy();
    // Requests still in flight fail at once (their callers see the error); nothing waits.
    this.#pool.destroy().catch(() => undefined);
  }
}

/** The largest announced body read into a buffer allocated up front (larger ones: chunks, joined). */
const PREALLOCATED_BODY_MAX = 256 * 1024 * 1024;

/** A GET's answer: its status, headers and whole body. */
interface StoreResponse {
  status: number;
  headers: Record<string, string | undefined>;
  body: Buffer;
}

/**
 * One GET dispatched on the pool (undici's Dispatcher.dispatch: the response's status,
 * headers and body chunks come to the handler below, with no stream between), its body read
 * whole, within `timeoutMs` from the call to the body's last byte, time waiting for a free
 * connection included. A body of announced length is read into one buffer of that size that
 * owns its memory (no list of chunks, no concatenation; the judge pool moves it to a worker
 * without a copy); a chunked one is gathered and joined. A body cut short of its announced
 * length, a connection that closes mid-body, a transport error and the deadline reject (the
 * deadline aborts the request, or drops it before it starts when it was still queued).
 */
export function httpGet(pool: Pool, path: string, headers: Record<string, string>, timeoutMs: number): Promise<StoreResponse> {
  return new Promise<StoreResponse>((resolve, reject) => {
    let settled = false;
    let controller: Dispatcher.DispatchController | undefined;
    const settle = (err: Error | null, r?: StoreResponse) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (err) {
        controller?.abort(err);
        reject(err);
      } else resolve(r!);
    };
    let status = 0;
    let answered: Record<string, string | undefined> = {};
    let whole: Buffer | undefined;
    const chunks: Buffer[] = [];
    let n = 0;
    const timer = setTimeout(() => settle(new Error(`request deadline (${timeoutMs} ms) passed`)), timeoutMs);
    pool.dispatch(
      { path, method: 'GET', headers },
      {
        onRequestStart(c) {
          controller = c;
          // The deadline passed while it waited for a connection: not sent at all.
          if (settled) c.abort(new Error('request deadline passed before it was sent'));
        },
        onResponseStart(_c, statusCode, responseHeaders) {
          status = statusCode;
          // One value a name (undici gives a repeated header as a list: its first kept).
          answered = {};
          for (const [k, v] of Object.entries(responseHeaders)) answered[k] = Array.isArray(v) ? v[0] : v;
          const announced = Number(answered['content-length']);
          const sized = answered['content-length'] !== undefined && Number.isSafeInteger(announced) && announced >= 0;
          // Up to PREALLOCATED_BODY_MAX: a store announcing more gets its chunks gathered as they come.
          whole = sized && announced <= PREALLOCATED_BODY_MAX ? Buffer.allocUnsafeSlow(announced) : undefined;
          chunks.length = 0;
          n = 0;
        },
        onResponseData(_c, c: Buffer) {
          if (whole && n + c.length <= whole.length) c.copy(whole, n);
          else {
            // More than announced (the parser would not give it) or no length: gather the chunks.
            if (whole) {
              chunks.push(whole.subarray(0, n));
              whole = undefined;
            }
            chunks.push(c);
          }
          n += c.length;
        },
        onResponseEnd() {
          const body = whole ? (n === whole.length ? whole : whole.subarray(0, n)) : chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, n);
          settle(null, { status, headers: answered, body });
        },
        onResponseError(_c, err) {
          settle(err);
        },
      },
    );
  });
}

/** Runs fn over items with at most `concurrency` in flight; results in item order. */
export async function mapLimit<T, R>(items: readonly T[], concurrency: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  let failed: unknown;
  const worker = async () => {
    while (failed === undefined) {
      const i = next++;
      if (i >= items.length) return;
      try {
        out[i] = await fn(items[i]!, i);
      } catch (err) {
        failed ??= err;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, items.length)) }, worker));
  if (failed !== undefined) throw failed;
  return out;
}

/**
 * Runs fn over the items of pages that arrive one after another (a paginated listing), at
 * most `concurrency` in flight, starting on the first page's items while the later pages are
 * still being fetched. At the first failure (of fn or of the pages) it takes no new item,
 * waits for those in flight, and throws that failure. Resolves to the number of items.
 */
export async function forEachPaged<T>(pages: AsyncIterable<readonly T[]>, concurrency: number, fn: (item: T) => Promise<void>): Promise<number> {
  const queue: T[] = [];
  let head = 0;
  let listed = false;
  let failed: unknown;
  const waiting: (() => void)[] = [];
  const wake = () => {
    for (const w of waiting.splice(0)) w();
  };
  const lister = (async () => {
    try {
      for await (const page of pages) {
        if (failed !== undefined) return;
        for (const item of page) queue.push(item);
        wake();
      }
    } catch (err) {
      failed ??= err;
    } finally {
      listed = true;
      wake();
    }
  })();
  const worker = async () => {
    while (failed === undefined) {
      if (head < queue.length) {
        const item = queue[head++]!;
        try {
          await fn(item);
        } catch (err) {
          failed ??= err;
        }
      } else if (listed) return;
      else await new Promise<void>((r) => waiting.push(r));
    }
  };
  await Promise.all([lister, ...Array.from({ length: Math.max(1, concurrency) }, worker)]);
  if (failed !== undefined) throw failed;
  return queue.length;
}
