/**
 * The oracle's store view: which keys a downstream consumer reads. Hidden names (a last
 * path segment starting with `_` or `.`, the Hadoop convention) are a writer's staging
 * files, such as the unfinished tail Flink's S3 RecoverableWriter puts beside a part that
 * spans checkpoints, and are left unjudged; everything else under the prefix is output.
 * forEachPaged runs over a paginated listing as its pages arrive, at a bounded concurrency.
 *
 * The GET (oracle/sigv4.ts's signer and undici's dispatch, without the SDK's client), against a loopback HTTP
 * server: the request is a signed path-style GET; a 200 gives the body (announced or
 * chunked) and the ETag; a 404 is null; a 403 is PRECONDITION (not retryable); a 500 and a
 * body cut short are STORE_UNAVAILABLE (retryable); a full-object CRC32 or SHA-256 is
 * checked (a mismatch is retryable), a composite one is not; a store that does not answer
 * is a retryable error at the deadline, and so is one queued behind it for a connection; a
 * GET in flight when the store view is destroyed fails at once; an announced body owns its
 * whole buffer (the judge pool moves it without a copy).
 */
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { crc32 } from 'node:zlib';
import t from 'tap';
import { Pool } from 'undici';
import { ObjectStore, forEachPaged, httpGet, isHiddenKey } from '../../../oracle/store.ts';
import { QualError } from '../../../lib/errors.ts';
import { clinkObjectKey } from '../../../engine/clink/sink/keys.ts';

t.test('hidden: the last path segment starts with _ or .', async (t) => {
  t.ok(isHiddenKey('runs/r1/_part-3f2a-0.jsonl_tmp_9c1e7d2a-1b2c-4d5e-8f90-123456789abc'), "Flink's S3 RecoverableWriter tail of an open part");
  t.ok(isHiddenKey('runs/r1/.part-3f2a-0.jsonl.inprogress.1234'), "a local/HDFS writer's in-progress file");
  t.ok(isHiddenKey('runs/r1/_SUCCESS'), 'a marker file');
  t.ok(isHiddenKey('_tmp'), 'a key without a slash is its own name');
});

t.test('visible: every other key, whatever its directories are called', async (t) => {
  t.notOk(isHiddenKey('runs/r1/part-3f2a-0.jsonl'), "Flink's committed part");
  t.notOk(isHiddenKey(clinkObjectKey('runs/r1/', { subtask: 0, epoch: 1, checkpointId: 12 })), "Clink's object (its own key builder): Clink writes no hidden name");
  t.notOk(isHiddenKey('runs/_r1/part-0.jsonl'), 'a hidden directory name does not hide the object: only the name counts');
  t.notOk(isHiddenKey('runs/r1/a_b.jsonl'), 'an underscore inside the name does not hide it');
  t.notOk(isHiddenKey('runs/r1/'), 'an empty name (a directory marker) is not hidden by this rule');
});

t.test('forEachPaged: starts on the first page before the last has come, never more than the concurrency in flight', async (t) => {
  let releaseLast!: () => void;
  const lastPage = new Promise<void>((r) => (releaseLast = r));
  const started: number[] = [];
  async function* pages(): AsyncGenerator<number[]> {
    yield [1, 2, 3];
    await lastPage; // held until an item of the first page has run
    yield [4, 5];
  }
  let inFlight = 0;
  let most = 0;
  const n = await forEachPaged(pages(), 2, async (i) => {
    started.push(i);
    inFlight++;
    most = Math.max(most, inFlight);
    releaseLast();
    await new Promise((r) => setTimeout(r, 5));
    inFlight--;
  });
  t.equal(n, 5);
  t.strictSame([...started].sort(), [1, 2, 3, 4, 5], 'every item once');
  t.equal(most, 2, 'the concurrency, no more');
});

t.test("forEachPaged: the first failure, of an item or of the pages, is thrown after those in flight end", async (t) => {
  const seen: number[] = [];
  async function* pages(): AsyncGenerator<number[]> {
    yield [1, 2, 3, 4, 5, 6];
  }
  const err = await forEachPaged(pages(), 1, async (i) => {
    seen.push(i);
    if (i === 2) throw new Error('item 2 failed');
  }).catch((e: unknown) => e);
  t.match((err as Error).message, 'item 2 failed');
  t.strictSame(seen, [1, 2], 'no new item after the failure');
  async function* broken(): AsyncGenerator<number[]> {
    yield [1];
    throw new Error('listing failed');
  }
  const err2 = await forEachPaged(broken(), 2, async () => {}).catch((e: unknown) => e);
  t.match((err2 as Error).message, 'listing failed');
});

interface Answer {
  status: number;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Send the body in chunks without a Content-Length. */
  chunked?: boolean;
  /** Announce this Content-Length, send the body, then cut the connection. */
  cutAt?: number;
  /** Never answer (a paused store). */
  hang?: boolean;
}
let answer: (url: string) => Answer = () => ({ status: 200, body: '' });
const seen: http.IncomingHttpHeaders[] = [];
const urls: string[] = [];
const server = http.createServer((req, res) => {
  seen.push(req.headers);
  urls.push(req.url!);
  req.resume();
  const a = answer(req.url!);
  if (a.hang) return;
  const body = typeof a.body === 'string' ? Buffer.from(a.body) : (a.body ?? Buffer.alloc(0));
  if (a.cutAt !== undefined) {
    res.writeHead(a.status, { ...a.headers, 'content-length': String(a.cutAt) });
    res.write(body);
    res.flushHeaders();
    setTimeout(() => res.socket?.destroy(), 20);
    return;
  }
  if (a.chunked) {
    res.writeHead(a.status, { ...a.headers, 'transfer-encoding': 'chunked' });
    res.write(body.subarray(0, 3));
    res.end(body.subarray(3));
    return;
  }
  res.writeHead(a.status, { ...a.headers, 'content-length': String(body.length) });
  res.end(body);
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
const store = new ObjectStore({ endpoint, accessKeyId: 'AKID', secretAccessKey: 'secret', requestTimeoutMs: 2000 }, 'bkt');
t.teardown(() => {
  store.destroy();
  server.close();
});

const crcB64 = (b: Buffer) => {
  const x = Buffer.alloc(4);
  x.writeUInt32BE(crc32(b));
  return x.toString('base64');
};

t.test('get: a 200 is the body and the ETag, from a signed path-style GET', async (t) => {
  const body = Buffer.from('{"a":1}\n{"b":2}\n');
  answer = () => ({ status: 200, headers: { etag: '"abc-2"' }, body });
  const got = await store.get('data/p0/0 1.jsonl');
  t.ok(got);
  t.equal(got!.etag, 'abc-2');
  t.equal(got!.size, body.length);
  t.ok(got!.body.equals(body));
  t.equal(urls.at(-1), '/bkt/data/p0/0%201.jsonl');
  const h = seen.at(-1)!;
  t.match(h.authorization, /^AWS4-HMAC-SHA256 Credential=AKID\/\d{8}\/us-east-1\/s3\/aws4_request, SignedHeaders=host;x-amz-checksum-mode;x-amz-content-sha256;x-amz-date, Signature=[0-9a-f]{64}$/);
  t.equal(h['x-amz-checksum-mode'], 'ENABLED');
  t.equal(h['x-amz-content-sha256'], createHash('sha256').digest('hex'), "an empty body's payload hash, as the SDK signs a GET");
  await store.get("p/a b!'()*.jsonl");
  t.equal(urls.at(-1), '/bkt/p/a%20b%21%27%28%29%2A.jsonl', "the key encoded as the SDK's GetObject encodes it");
});

t.test('get: an announced body owns its whole buffer; a large one, sent in many writes, is read whole', async (t) => {
  const big = Buffer.alloc(300_000, 'x');
  for (let i = 0; i < big.length; i += 997) big[i] = 0x0a;
  answer = () => ({ status: 200, headers: { etag: '"big"' }, body: big });
  const got = await store.get('big');
  t.ok(got!.body.equals(big));
  t.equal(got!.body.byteOffset, 0);
  t.equal(got!.body.buffer.byteLength, big.length, 'a buffer of its own, of its size: movable to a judge worker');
  answer = () => ({ status: 200, headers: { etag: '"e"' }, body: '' });
  t.equal((await store.get('empty'))!.size, 0, 'an empty object is an empty body');
});

t.test('get: a store that does not answer is a retryable error at the deadline', async (t) => {
  const quick = new ObjectStore({ endpoint, accessKeyId: 'AKID', secretAccessKey: 'secret', requestTimeoutMs: 300 }, 'bkt');
  answer = () => ({ status: 200, hang: true });
  const t0 = Date.now();
  const e = await quick.get('k').catch((err: unknown) => err);
  quick.destroy();
  t.ok(e instanceof QualError);
  t.equal((e as QualError).code, 'STORE_UNAVAILABLE');
  t.equal((e as QualError).canRetry, true);
  t.match((e as Error).message, /deadline \(300 ms\)/);
  t.ok(Date.now() - t0 < 1500, 'at the deadline, not later');
});

t.test('get: one queued behind a hung GET for the only connection fails at its own deadline, unsent; the next is served', async (t) => {
  // httpGet on a pool of one connection: the hung GET holds it for 800 ms, the queued one's deadline is 200 ms.
  const pool = new Pool(endpoint, { connections: 1 });
  t.teardown(() => pool.destroy());
  answer = (url) => (url.endsWith('/slow') ? { status: 200, hang: true } : { status: 200, headers: { etag: '"n"' }, body: 'next' });
  const t0 = Date.now();
  const slow = httpGet(pool, '/bkt/slow', {}, 800).catch((e: unknown) => e);
  const queued = await httpGet(pool, '/bkt/queued', {}, 200).catch((e: unknown) => e);
  t.match((queued as Error).message, /deadline \(200 ms\)/, 'the queued one: an error at its own deadline');
  t.ok(Date.now() - t0 < 700, 'while the hung one still holds the connection');
  t.match(((await slow) as Error).message, /deadline \(800 ms\)/, 'the hung one: at its deadline');
  const after = await httpGet(pool, '/bkt/after', {}, 2000);
  t.equal(after.body.toString(), 'next', 'the connection is there again for the next GET');
  t.notOk(urls.includes('/bkt/queued'), 'the queued one was dropped before it was sent, not sent late');
  t.ok(urls.includes('/bkt/slow') && urls.includes('/bkt/after'));
});

t.test('get: a GET in flight when the store view is destroyed fails at once, retryable', async (t) => {
  const doomed = new ObjectStore({ endpoint, accessKeyId: 'AKID', secretAccessKey: 'secret', requestTimeoutMs: 10_000 }, 'bkt');
  answer = () => ({ status: 200, hang: true });
  const t0 = Date.now();
  const pending = doomed.get('k').catch((e: unknown) => e);
  await new Promise((r) => setTimeout(r, 100));
  doomed.destroy();
  const e = await pending;
  t.ok(e instanceof QualError && e.canRetry, 'a retryable error');
  t.ok(Date.now() - t0 < 2000, `not left waiting for the deadline (${Date.now() - t0} ms)`);
});

t.test('get: a chunked body without a Content-Length is read whole', async (t) => {
  answer = () => ({ status: 200, headers: { etag: '"e"' }, body: 'hello world', chunked: true });
  const got = await store.get('k');
  t.equal(got!.body.toString(), 'hello world');
  t.equal(got!.size, 11);
});

t.test('get: 404 is null; 403 is PRECONDITION; 500 is retryable', async (t) => {
  answer = () => ({ status: 404, body: '<Error><Code>NoSuchKey</Code><Message>gone</Message></Error>' });
  t.equal(await store.get('k'), null);
  answer = () => ({ status: 403, body: '<Error><Code>AccessDenied</Code><Message>no</Message></Error>' });
  const denied = await store.get('k').catch((e: unknown) => e);
  t.ok(denied instanceof QualError);
  t.equal((denied as QualError).code, 'PRECONDITION');
  t.match((denied as Error).message, /AccessDenied \(HTTP 403\): no/);
  answer = () => ({ status: 500, body: '<Error><Code>InternalError</Code><Message>oops</Message></Error>' });
  const failed = await store.get('k').catch((e: unknown) => e);
  t.equal((failed as QualError).code, 'STORE_UNAVAILABLE');
  t.equal((failed as QualError).canRetry, true);
});

t.test('get: a body cut short of its Content-Length is a retryable error, not a short object', async (t) => {
  answer = () => ({ status: 200, headers: { etag: '"e"' }, body: 'abc', cutAt: 10 });
  const e = await store.get('k').catch((err: unknown) => err);
  t.ok(e instanceof QualError);
  t.equal((e as QualError).code, 'STORE_UNAVAILABLE');
});

t.test("get: the store's full-object CRC32 or SHA-256 is checked; a composite one is left alone", async (t) => {
  const body = Buffer.from('line\n');
  answer = () => ({ status: 200, headers: { etag: '"e"', 'x-amz-checksum-crc32': crcB64(body) }, body });
  t.ok((await store.get('k'))!.body.equals(body), 'matching CRC32: the body');
  answer = () => ({ status: 200, headers: { etag: '"e"', 'x-amz-checksum-crc32': crcB64(Buffer.from('other\n')) }, body });
  const e = await store.get('k').catch((err: unknown) => err);
  t.equal((e as QualError).code, 'STORE_UNAVAILABLE');
  t.match((e as Error).message, /ChecksumMismatch/);
  answer = () => ({ status: 200, headers: { etag: '"e-2"', 'x-amz-checksum-crc32': 'AAAAAA==-2' }, body });
  t.ok((await store.get('k'))!.body.equals(body), 'composite (multipart) checksum: not the body CRC32, not checked');
  const sha = (b: Buffer) => createHash('sha256').update(b).digest('base64');
  answer = () => ({ status: 200, headers: { etag: '"e"', 'x-amz-checksum-sha256': sha(body) }, body });
  t.ok((await store.get('k'))!.body.equals(body), 'matching SHA-256: the body');
  answer = () => ({ status: 200, headers: { etag: '"e"', 'x-amz-checksum-sha256': sha(Buffer.from('other\n')) }, body });
  const e2 = await store.get('k').catch((err: unknown) => err);
  t.equal((e2 as QualError).code, 'STORE_UNAVAILABLE', 'SHA-256 mismatch: retryable');
  t.match((e2 as Error).message, /ChecksumMismatch: x-amz-checksum-sha256/);
});
