/**
 * Unit tests of the s3_2pc_sink protocol logic. They run against an IN-PROCESS FAKE of the
 * store (FakeS3 below), which mimics the MinIO behaviours the protocol depends on (second
 * completion → NoSuchUpload, minimum part size, multipart ETag, exact-prefix listing) and
 * lets a test inject errors before or after an operation lands. It is a fake for pure
 * protocol logic only; test/rig/sink-*.test.ts run the same paths against real MinIO.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { CLINK_MUTANTS, MUTANT_NAMES, SINK_MUTANTS, type ClinkMutant } from '../../../../../engine/clink/mutants/index.ts';
import {
  SinkClosedError,
  SinkIntegrityError,
  SinkRetryDeadlineError,
  classifyError,
  createS3Sink,
  listPendingUploads,
  multipartEtag,
  parseJournal,
  readJournal,
  splitParts,
} from '../../../../../engine/clink/sink/s3-2pc-sink.ts';
import type { S3SinkOptions } from '../../../../../engine/clink/sink/s3-2pc-sink.ts';
import type { Sink, SinkContext, UploadHandle } from '../../../../../engine/clink/sink/sink-api.ts';

// ---------------------------------------------------------------------------------------
// The fake store

type Obj = { body: Buffer; etag: string; metadata: Record<string, string> };
type Upload = { key: string; metadata: Record<string, string>; parts: Map<number, { body: Buffer; etag: string }> };
type Fault = { cmd: string; err: () => unknown; times: number; land: boolean };

function s3err(name: string, status: number): Error {
  return Object.assign(new Error(name), { name, $metadata: { httpStatusCode: status } });
}
const timeoutErr = (): Error => Object.assign(new Error('Request timed out'), { name: 'TimeoutError' });
const connRefused = (): Error => Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });

const md5 = (b: Buffer): string => createHash('md5').update(b).digest('hex');

class FakeS3 {
  objects = new Map<string, Obj>();
  uploads = new Map<string, Upload>();
  calls: string[] = [];
  faults: Fault[] = [];
  minPartSize: number;
  /** Corrupts the next UploadPart answer's ETag (the store kept other bytes). */
  badPartEtags = 0;
  private nextId = 1;

  constructor(minPartSize = 8) {
    this.minPartSize = minPartSize;
  }

  /** The next `times` calls of cmd fail with err; land=true: the operation takes effect, then the answer is lost. */
  fail(cmd: string, err: () => unknown, times = 1, land = false): void {
    this.faults.push({ cmd, err, times, land });
  }

  count(cmd: string): number {
    return this.calls.filter((c) => c === cmd).length;
  }

  async send(command: { constructor: { name: string }; input: Record<string, any> }): Promise<any> {
    const cmd = command.constructor.name.replace(/Command$/, '');
    this.calls.push(cmd);
    const f = this.faults.find((x) => x.cmd === cmd && x.times > 0);
    if (f && !f.land) {
      f.times--;
      throw f.err();
    }
    const out = this.handle(cmd, command.input);
    if (f && f.land) {
      f.times--;
      throw f.err();
    }
    return out;
  }

  private handle(cmd: string, i: Record<string, any>): any {
    switch (cmd) {
      case 'CreateMultipartUpload': {
        const id = `up-${this.nextId++}`;
        this.uploads.set(id, { key: i.Key, metadata: { ...(i.Metadata ?? {}) }, parts: new Map() });
        return { UploadId: id };
      }
      case 'UploadPart': {
        const u = this.uploads.get(i.UploadId);
        if (!u || u.key !== i.Key) throw s3err('NoSuchUpload', 404);
        const body = Buffer.from(i.Body);
        let etag = md5(body);
        if (this.badPartEtags > 0) {
          this.badPartEtags--;
          etag = md5(Buffer.concat([body, Buffer.from('x')]));
        }
        u.parts.set(i.PartNumber, { body, etag });
        return { ETag: `"${etag}"` };
      }
      case 'CompleteMultipartUpload': {
        const u = this.uploads.get(i.UploadId);
        if (!u || u.key !== i.Key) throw s3err('NoSuchUpload', 404);
        const listed: { PartNumber: number; ETag: string }[] = i.MultipartUpload.Parts;
        const bodies: Buffer[] = [];
        const md5s: Buffer[] = [];
        listed.forEach((p, idx) => {
          const part = u.parts.get(p.PartNumber);
          if (!part || part.etag !== p.ETag.replace(/"/g, '')) throw s3err('InvalidPart', 400);
          if (idx < listed.length - 1 && part.body.length < this.minPartSize) throw s3err('EntityTooSmall', 400);
          bodies.push(part.body);
          md5s.push(Buffer.from(part.etag, 'hex'));
        });
        const etag = `${createHash('md5').update(Buffer.concat(md5s)).digest('hex')}-${listed.length}`;
        this.objects.set(i.Key, { body: Buffer.concat(bodies), etag, metadata: u.metadata });
        this.uploads.delete(i.UploadId);
        return { ETag: `"${etag}"` };
      }
      case 'AbortMultipartUpload': {
        if (!this.uploads.delete(i.UploadId)) throw s3err('NoSuchUpload', 404);
        return {};
      }
      case 'HeadObject': {
        const o = this.objects.get(i.Key);
        if (!o) throw s3err('NotFound', 404);
        return { ETag: `"${o.etag}"`, ContentLength: o.body.length, Metadata: o.metadata };
      }
      case 'GetObject': {
        const o = this.objects.get(i.Key);
        if (!o) throw s3err('NoSuchKey', 404);
        return { Body: { transformToByteArray: async () => new Uint8Array(o.body) }, ETag: `"${o.etag}"` };
      }
      case 'PutObject': {
        const body = Buffer.from(i.Body);
        this.objects.set(i.Key, { body, etag: md5(body), metadata: { ...(i.Metadata ?? {}) } });
        return { ETag: `"${md5(body)}"` };
      }
      case 'ListParts': {
        const u = this.uploads.get(i.UploadId);
        if (!u || u.key !== i.Key) throw s3err('NoSuchUpload', 404);
        const parts = [...u.parts.entries()].sort((a, b) => a[0] - b[0]).map(([n, p]) => ({ PartNumber: n, ETag: `"${p.etag}"`, Size: p.body.length }));
        return { Parts: parts, IsTruncated: false };
      }
      case 'ListMultipartUploads': {
        // MinIO: the prefix is an exact object name.
        const ups = [...this.uploads.entries()].filter(([, u]) => u.key === i.Prefix).map(([id, u]) => ({ Key: u.key, UploadId: id }));
        return { Uploads: ups, IsTruncated: false };
      }
      default:
        throw new Error(`fake store: unsupported ${cmd}`);
    }
  }
}

// ---------------------------------------------------------------------------------------
// Harness around one sink

interface Rig {
  store: FakeS3;
  sink: Sink;
  logs: string[];
  points: string[];
  journal: string;
  ctx: SinkContext;
}

const dir = mkdtempSync(path.join(tmpdir(), 'sink-unit-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
let seq = 0;

async function mkSink(opts: { mutant?: ClinkMutant; store?: FakeS3; subtask?: number; journal?: string; sink?: S3SinkOptions } = {}): Promise<Rig> {
  const store = opts.store ?? new FakeS3();
  const logs: string[] = [];
  const points: string[] = [];
  const journal = opts.journal ?? path.join(dir, `j${seq++}`, 'journal.jsonl');
  const ctx: SinkContext = {
    subtask: opts.subtask ?? 2,
    bucket: 'bkt',
    prefix: 'run-1/',
    checkpointIntervalMs: 8000,
    mutant: opts.mutant,
    s3: { endpoint: 'http://unused', region: 'us-east-1', accessKeyId: 'x', secretAccessKey: 'y' },
    journalPath: journal,
    log: (l) => logs.push(l),
    faultPoint: async (p) => {
      points.push(p);
    },
  };
  const sink = createS3Sink(ctx, { client: store, partSize: 8, backoffBaseMs: 1, backoffCapMs: 4, ...opts.sink });
  await sink.open();
  return { store, sink, logs, points, journal, ctx };
}

const line = (p: number, s: number): string => JSON.stringify({ p, seq: s, k: `key-${s}`, v: 'x' });

async function stageAndCommit(r: Rig, c: number, e: number, lines: string[]): Promise<UploadHandle[]> {
  for (const l of lines) r.sink.write(l);
  const hs = await r.sink.prepare(c, e);
  await r.sink.commit(c, e, hs);
  return hs;
}

// ---------------------------------------------------------------------------------------

t.test('multipart ETag matches values computed independently (Python hashlib)', async (t) => {
  const m = (s: string): string => md5(Buffer.from(s));
  t.equal(multipartEtag([m('aaaaa'), m('bbb')]), '72d27afac8e2fbd3662861b9d607a02c-2');
  t.equal(multipartEtag([m('{"p":0,"seq":1}\n')]), '5135b421a0646d792dd722f023a77fad-1');
  t.equal(multipartEtag([m('')]), '59adb24ef3cdbe0297f05b395827453f-1');
  t.not(multipartEtag([m('aaaaa'), m('bbb')]), multipartEtag([m('aaaaab'), m('bb')]), 'the split matters');
});

t.test('splitParts: parts of partSize, the last shorter', async (t) => {
  t.same(splitParts(Buffer.from('0123456789abcdefghij'), 8).map((b) => b.toString()), ['01234567', '89abcdef', 'ghij']);
  t.same(splitParts(Buffer.from('01234567'), 8).map((b) => b.length), [8]);
  t.same(splitParts(Buffer.alloc(0), 8).map((b) => b.length), [0]);
  t.throws(() => splitParts(Buffer.alloc(10_001), 1), /max 10000/);
});

t.test('classifyError', async (t) => {
  t.equal(classifyError(s3err('NoSuchUpload', 404)), 'no-such-upload');
  t.equal(classifyError(s3err('NotFound', 404)), 'not-found');
  t.equal(classifyError(s3err('InvalidPart', 400)), 'invalid-part');
  t.equal(classifyError(s3err('SlowDown', 503)), 'transient');
  t.equal(classifyError(s3err('InternalError', 500)), 'transient');
  t.equal(classifyError(s3err('SomethingElse', 502)), 'transient');
  t.equal(classifyError(timeoutErr()), 'transient');
  t.equal(classifyError(connRefused()), 'transient');
  t.equal(classifyError(s3err('AccessDenied', 403)), 'fatal');
  t.equal(classifyError(s3err('EntityTooSmall', 400)), 'fatal');
  t.equal(classifyError(new TypeError('bug')), 'fatal');
});

t.test('open logs the one family line', async (t) => {
  const r = await mkSink();
  t.equal(r.logs.length, 1);
  t.equal(r.logs[0], 'clink sink open: family=s3_2pc_sink subtask=2 bucket=bkt prefix=run-1/ checkpointIntervalMs=8000 mutant=none');
  const m = await mkSink({ mutant: 'keys-reused' });
  t.match(m.logs[0], /family=s3_2pc_sink .* mutant=keys-reused$/);
  await t.rejects(mkSink({ mutant: 'no-such-mutant' as ClinkMutant /* a name from outside the type, as from a config file */ }), /unknown mutant/);
  const rt = await mkSink({ mutant: 'no-fencing' });
  t.match(rt.logs[0], /mutant=no-fencing$/, 'runtime mutants are accepted (the sink itself stays correct)');
});

t.test('prepare stages without making anything visible; commit makes the exact bytes visible', async (t) => {
  const r = await mkSink();
  const lines = [line(0, 1), line(0, 2), line(0, 3)];
  for (const l of lines) r.sink.write(l);
  const [h, ...rest] = await r.sink.prepare(7, 3);
  t.equal(rest.length, 0);
  t.equal(h.key, 'run-1/subtask=2/epoch=3/chk=7.jsonl');
  t.equal(r.store.objects.size, 0, 'nothing visible after prepare');
  t.equal(r.store.uploads.size, 1);
  const body = Buffer.from(lines.join('\n') + '\n');
  t.equal(h.bytes, body.length);
  t.equal(h.records, 3);
  t.ok(h.parts.length > 1, 'several parts with partSize 8');
  t.ok(h.parts.slice(0, -1).every((p) => p.size === 8));
  t.same(h.parts.map((p) => p.partNumber), h.parts.map((_, i) => i + 1));
  t.match(h.token, /^[0-9a-f]{32}$/);
  const chunks = splitParts(body, 8).map((b) => md5(b));
  t.equal(h.expectedEtag, multipartEtag(chunks));
  t.same(r.points, ['sink.before-prepare', 'sink.after-prepare']);

  const journal = await readJournal(r.journal);
  t.same(journal.map((e) => [e.key, e.uploadId]), [[h.key, h.uploadId]], 'journaled right after create');

  await r.sink.commit(7, 3, [h]);
  const o = r.store.objects.get(h.key)!;
  t.ok(o, 'visible after commit');
  t.equal(o.body.toString(), body.toString());
  t.equal(o.etag, h.expectedEtag, 'store ETag equals the computed one');
  t.equal(o.metadata['clink-token'], h.token);
  t.same(r.points, ['sink.before-prepare', 'sink.after-prepare', 'sink.before-commit', 'sink.after-commit']);

  // The buffer was cleared: the next barrier has nothing to stage.
  t.same(await r.sink.prepare(8, 3), []);
  t.equal(r.store.count('CreateMultipartUpload'), 1, 'no upload for an empty buffer');
});

t.test('commit is idempotent: a second completion (NoSuchUpload) resolves by HEAD', async (t) => {
  const r = await mkSink();
  const [h] = await stageAndCommit(r, 1, 1, [line(1, 1), line(1, 2)]);
  const etag = r.store.objects.get(h.key)!.etag;
  await r.sink.commit(1, 1, [h]);
  t.equal(r.store.count('ListParts'), 2, 'each completion is probed first');
  t.equal(r.store.count('CompleteMultipartUpload'), 1, 'the probe found the upload gone: no second completion sent');
  t.equal(r.store.count('HeadObject'), 1, 'NoSuchUpload checked by HEAD');
  t.equal(r.store.objects.size, 1);
  t.equal(r.store.objects.get(h.key)!.etag, etag, 'object unchanged');
  t.ok(
    r.logs.some((l) => l === `clink sink commit: subtask=2 checkpoint=1 epoch=1 key=${h.key}: already completed (NoSuchUpload), the object verified as ours`),
    'the second completion is said in the log (a zombie trail reads it)',
  );

  // A fresh sink (a restarted worker) recovering the same handle.
  const r2 = await mkSink({ store: r.store });
  await r2.sink.recover([h], 2);
  t.same(r2.points, ['sink.recover.before-commit', 'sink.recover.after-commit']);
  t.equal(r.store.objects.size, 1);
});

t.test('a completion that landed but whose answer was lost resolves as committed', async (t) => {
  const r = await mkSink();
  r.sink.write(line(0, 1));
  const [h] = await r.sink.prepare(1, 1);
  r.store.fail('CompleteMultipartUpload', timeoutErr, 1, true);
  await r.sink.commit(1, 1, [h]);
  t.equal(r.store.count('ListParts'), 2, 'retried (the probe of the retry finds NoSuchUpload)');
  t.equal(r.store.count('HeadObject'), 1, 'then resolved by HEAD');
  t.equal(r.store.objects.get(h.key)!.etag, h.expectedEtag);
});

t.test('InvalidPart (a concurrent completion of the same upload, seen on MinIO) resolves by HEAD', async (t) => {
  // (a) the other completion landed: ours.
  const r = await mkSink();
  r.sink.write(line(0, 1));
  const [h] = await r.sink.prepare(1, 1);
  r.store.fail('CompleteMultipartUpload', () => s3err('InvalidPart', 400), 1, true);
  await r.sink.commit(1, 1, [h]);
  t.equal(r.store.count('CompleteMultipartUpload'), 1);
  t.equal(r.store.count('HeadObject'), 1);
  // (b) not landed yet: retried, then completes.
  const r2 = await mkSink();
  r2.sink.write(line(0, 1));
  const [h2] = await r2.sink.prepare(1, 1);
  r2.store.fail('CompleteMultipartUpload', () => s3err('InvalidPart', 400), 2);
  await r2.sink.commit(1, 1, [h2]);
  t.equal(r2.store.count('CompleteMultipartUpload'), 3);
  t.equal(r2.store.objects.get(h2.key)!.etag, h2.expectedEtag);
  // (c) persistent, no object: an integrity error after the bounded retries.
  const r3 = await mkSink({ sink: { invalidPartRetries: 3 } });
  r3.sink.write(line(0, 1));
  const [h3] = await r3.sink.prepare(1, 1);
  r3.store.fail('CompleteMultipartUpload', () => s3err('InvalidPart', 400), 100);
  await t.rejects(r3.sink.commit(1, 1, [h3]), SinkIntegrityError);
  t.equal(r3.store.count('CompleteMultipartUpload'), 4);
});

t.test('no completion is sent to a store that does not answer the probe, nor for parts that are gone', async (t) => {
  const r = await mkSink();
  r.sink.write(line(0, 1));
  const [h] = await r.sink.prepare(1, 1);
  r.store.fail('ListParts', timeoutErr, 5);
  await r.sink.commit(1, 1, [h]);
  t.equal(r.store.count('ListParts'), 6);
  t.equal(r.store.count('CompleteMultipartUpload'), 1, 'one completion, after the store answered');
  t.ok(r.store.objects.has(h.key));

  const r2 = await mkSink({ sink: { invalidPartRetries: 2 } });
  r2.sink.write(line(0, 1));
  const [h2] = await r2.sink.prepare(1, 1);
  r2.store.uploads.get(h2.uploadId)!.parts.clear(); // the store lost the staged parts
  await t.rejects(r2.sink.commit(1, 1, [h2]), /LOST/);
  t.equal(r2.store.count('CompleteMultipartUpload'), 0, 'never completed with missing parts');
  t.equal(r2.store.count('ListParts'), 3);
});

t.test('upload gone and object missing → loud, non-retryable error', async (t) => {
  const r = await mkSink();
  r.sink.write(line(0, 1));
  const [h] = await r.sink.prepare(1, 1);
  r.store.uploads.clear(); // swept / aborted by someone else
  const err = await r.sink.commit(1, 1, [h]).then(
    () => null,
    (e: unknown) => e,
  );
  t.ok(err instanceof SinkIntegrityError, 'SinkIntegrityError');
  t.match((err as Error).message, /LOST/);
  t.equal(r.store.count('HeadObject'), 1, 'HEAD once, not retried');
  t.ok(r.logs.some((l) => /INTEGRITY ERROR/.test(l)), 'logged loudly');
  t.notOk(r.points.includes('sink.after-commit'), 'the commit did not pass as done');
});

t.test('an object with another token (or ETag or size) is not taken as the commit', async (t) => {
  const r = await mkSink();
  const [h] = await stageAndCommit(r, 1, 1, [line(0, 1), line(0, 2)]);
  const o = r.store.objects.get(h.key)!;
  // Same bytes, same ETag, other token: a foreign object.
  r.store.objects.set(h.key, { ...o, metadata: { 'clink-token': 'f'.repeat(32) } });
  await t.rejects(r.sink.commit(1, 1, [h]), SinkIntegrityError);
  r.store.objects.set(h.key, { ...o, etag: 'deadbeef-1' });
  await t.rejects(r.sink.commit(1, 1, [h]), /ETag deadbeef-1 != expected/);
  r.store.objects.set(h.key, { ...o, body: Buffer.concat([o.body, Buffer.from('x')]) });
  await t.rejects(r.sink.commit(1, 1, [h]), /size/);
  r.store.objects.set(h.key, o);
  await t.resolves(r.sink.commit(1, 1, [h]), 'the genuine object resolves');
});

t.test('transient errors are retried with backoff; fatal ones are not', async (t) => {
  const r = await mkSink();
  r.sink.write(line(0, 1));
  r.store.fail('CreateMultipartUpload', connRefused, 2);
  r.store.fail('UploadPart', () => s3err('SlowDown', 503), 2);
  r.store.badPartEtags = 1;
  const [h] = await r.sink.prepare(1, 1);
  t.equal(r.store.count('CreateMultipartUpload'), 3);
  t.equal(r.store.count('UploadPart'), h.parts.length + 3, 'part retried after 2 SlowDowns and one ETag mismatch');
  r.store.fail('CompleteMultipartUpload', () => s3err('InternalError', 500), 3);
  r.store.fail('CompleteMultipartUpload', timeoutErr, 2);
  await r.sink.commit(1, 1, [h]);
  t.equal(r.store.count('CompleteMultipartUpload'), 6);
  t.equal(r.store.objects.get(h.key)!.etag, h.expectedEtag);
  t.ok(r.logs.some((l) => /clink sink retry: .*complete/.test(l)), 'retries are logged');

  const r2 = await mkSink();
  r2.sink.write(line(0, 1));
  const [h2] = await r2.sink.prepare(1, 1);
  r2.store.fail('CompleteMultipartUpload', () => s3err('AccessDenied', 403), 1);
  await t.rejects(r2.sink.commit(1, 1, [h2]), /AccessDenied/);
  t.equal(r2.store.count('CompleteMultipartUpload'), 1, 'not retried');
});

t.test('a lost CreateMultipartUpload answer: the orphan upload is journaled and aborted', async (t) => {
  const r = await mkSink();
  r.sink.write(line(0, 1));
  r.store.fail('CreateMultipartUpload', timeoutErr, 1, true);
  const [h] = await r.sink.prepare(1, 1);
  const j = await readJournal(r.journal);
  t.equal(j.length, 2);
  t.ok(j.some((e) => e.orphan && e.uploadId !== h.uploadId));
  t.equal(r.store.uploads.size, 1, 'orphan aborted, ours pending');
  t.same(await listPendingUploads(r.store, 'bkt', j), [{ key: h.key, uploadId: h.uploadId, initiated: undefined }]);
});

t.test('commitDeadlineMs and close() end an endless retry', async (t) => {
  const r = await mkSink({ sink: { commitDeadlineMs: 30 } });
  r.sink.write(line(0, 1));
  const [h] = await r.sink.prepare(1, 1);
  r.store.fail('CompleteMultipartUpload', connRefused, 1_000_000);
  await t.rejects(r.sink.commit(1, 1, [h]), SinkRetryDeadlineError);

  const r2 = await mkSink();
  r2.sink.write(line(0, 1));
  const [h2] = await r2.sink.prepare(1, 1);
  r2.store.fail('CompleteMultipartUpload', connRefused, 1_000_000);
  const p = r2.sink.commit(1, 1, [h2]);
  await new Promise((res) => setTimeout(res, 30));
  t.ok(r2.store.count('CompleteMultipartUpload') > 3, 'still retrying');
  await r2.sink.close();
  await t.rejects(p, SinkClosedError);
  t.equal(r2.store.objects.size, 0);
});

t.test('recover drops the abandoned buffer and completes restored handles', async (t) => {
  const r = await mkSink();
  r.sink.write(line(0, 1));
  const [h] = await r.sink.prepare(1, 1);
  const r2 = await mkSink({ store: r.store });
  r2.sink.write(line(0, 99));
  await r2.sink.recover([h], 2);
  t.ok(r.store.objects.has(h.key));
  t.same(await r2.sink.prepare(1, 2), [], 'buffer dropped on recover');
});

t.test('write rejects a record with a newline', async (t) => {
  const r = await mkSink();
  t.throws(() => r.sink.write('{"a":1}\n{"b":2}'), /one line/);
});

t.test('listPendingUploads counts only journaled uploads still pending, listing each key exactly', async (t) => {
  const r = await mkSink();
  const [done] = await stageAndCommit(r, 1, 1, [line(0, 1)]);
  r.sink.write(line(0, 2));
  const [open] = await r.sink.prepare(2, 1);
  // An upload at a key the journal does not name is not ours to count.
  await r.store.send(new (class CreateMultipartUploadCommand {
    input = { Bucket: 'bkt', Key: 'other/key' };
  })());
  const j = await readJournal(r.journal);
  t.equal(j.length, 2);
  const pending = await listPendingUploads(r.store, 'bkt', j);
  t.same(pending.map((p) => p.uploadId), [open.uploadId]);
  t.not(done.uploadId, open.uploadId);
});

t.test('readJournal ignores a torn last line', async (t) => {
  const r = await mkSink();
  await stageAndCommit(r, 1, 1, [line(0, 1)]);
  const { appendFileSync } = await import('node:fs');
  appendFileSync(r.journal, '{"key":"x","uplo');
  t.equal((await readJournal(r.journal)).length, 1);
  t.same(await readJournal(path.join(dir, 'nope.jsonl')), []);
  t.match(readFileSync(r.journal, 'utf8'), /"uploadId":"up-1"/);
});

t.test('the journal is written a crc32 per line; parseJournal reads old plain-JSON lines too, ignores a torn tail, and names corrupted lines', async (t) => {
  const r = await mkSink();
  await stageAndCommit(r, 1, 1, [line(0, 1)]);
  const text = readFileSync(r.journal, 'utf8');
  t.match(text, /^[0-9a-f]{8} \{"key":"[^"]+","uploadId":"up-1",/, 'checksum, space, JSON');
  const checked = text.trimEnd();
  const old = JSON.stringify({ key: 'k0', uploadId: 'u0', t: '2026-12-01T00:00:00.000Z' });
  const flipped = checked.replace('up-1', 'up-3');
  const all = `${old}\n${checked}\n${flipped}\n${checked.slice(0, 20)}`;
  const parsed = parseJournal(all);
  t.same(parsed.entries.map((e) => e.uploadId), ['u0', 'up-1'], 'the earlier format and the checked line; not the flipped one, not the torn tail');
  t.same(parsed.corrupt, [{ byte: Buffer.byteLength(`${old}\n${checked}\n`), line: flipped }], 'the flipped line named by its byte offset');
  t.same(parseJournal(`${checked}\n{"key":"x"}\n`).corrupt.map((c) => c.line), ['{"key":"x"}'], 'a complete old-format line without an uploadId is corrupt too');
  t.same(parseJournal(''), { entries: [], corrupt: [] });
});

// ---------------------------------------------------------------------------------------
// Mutants: each differs from the correct sink in the intended way.

t.test('mutant registry covers every mutant', async (t) => {
  t.same(
    [...MUTANT_NAMES].sort(),
    [
      'abort-on-unknown',
      'commit-at-prepare',
      'drop-restored-handles',
      'keys-reused',
      'latest-by-wallclock',
      'no-fencing',
      'nosuchupload-rewrite',
      'offsets-off-by-one',
      'stall-flush',
      'torn-log-append',
      'trust-existing-object',
      'unchecked-log',
      'zero-byte-commit',
    ],
  );
  for (const m of CLINK_MUTANTS) {
    t.ok(m.caughtBy.length > 0, `${m.name} caughtBy`);
    t.ok(m.mechanism.length > 40, `${m.name} mechanism`);
  }
  t.ok(SINK_MUTANTS.every((n) => MUTANT_NAMES.includes(n)));
  t.same(CLINK_MUTANTS.find((m) => m.name === 'keys-reused')!.caughtBy, ['mutations']);
  t.same(CLINK_MUTANTS.find((m) => m.name === 'zero-byte-commit')!.caughtBy, ['corrupted']);
});

t.test('mutant commit-at-prepare: visible at prepare', async (t) => {
  for (const [mutant, visible] of [[undefined, 0], ['commit-at-prepare', 1]] as const) {
    const r = await mkSink({ mutant });
    r.sink.write(line(0, 1));
    const hs = await r.sink.prepare(1, 1);
    t.equal(r.store.objects.size, visible, `${mutant ?? 'correct'}: ${visible} objects after prepare`);
    await r.sink.commit(1, 1, hs);
    t.equal(r.store.objects.size, 1, `${mutant ?? 'correct'}: the commit still resolves`);
  }
});

t.test('mutant nosuchupload-rewrite: a re-commit writes the records again', async (t) => {
  for (const [mutant, objects] of [[undefined, 1], ['nosuchupload-rewrite', 2]] as const) {
    const r = await mkSink({ mutant });
    const [h] = await stageAndCommit(r, 1, 1, [line(0, 1), line(0, 2)]);
    const r2 = await mkSink({ mutant, store: r.store });
    await r2.sink.recover([h], 2);
    t.equal(r.store.objects.size, objects, `${mutant ?? 'correct'}: ${objects} objects`);
    if (mutant) {
      const keys = [...r.store.objects.keys()];
      t.match(keys[1], /chk=1-rewrite-1-[0-9a-f]+\.jsonl$/);
      t.equal(r.store.objects.get(keys[1]!)!.body.toString(), r.store.objects.get(h.key)!.body.toString(), 'same records twice');
    }
  }
});

t.test('mutant drop-restored-handles: restored handles never completed', async (t) => {
  for (const [mutant, objects] of [[undefined, 1], ['drop-restored-handles', 0]] as const) {
    const r = await mkSink({ mutant });
    r.sink.write(line(0, 1));
    const hs = await r.sink.prepare(1, 1);
    const r2 = await mkSink({ mutant, store: r.store });
    await r2.sink.recover(hs, 2);
    t.equal(r.store.objects.size, objects, `${mutant ?? 'correct'}`);
  }
});

t.test('mutant abort-on-unknown: an outage during commit loses the records', async (t) => {
  for (const [mutant, objects] of [[undefined, 1], ['abort-on-unknown', 0]] as const) {
    const r = await mkSink({ mutant });
    r.sink.write(line(0, 1));
    const hs = await r.sink.prepare(1, 1);
    r.store.fail('CompleteMultipartUpload', timeoutErr, 2);
    await r.sink.commit(1, 1, hs);
    t.equal(r.store.objects.size, objects, `${mutant ?? 'correct'}: ${objects} objects`);
    t.equal(r.store.uploads.size, 0, 'no upload left pending');
    // Recovery afterwards: the correct sink confirms the object; the mutant shrugs.
    const r2 = await mkSink({ mutant, store: r.store });
    await r2.sink.recover(hs, 2);
    t.equal(r.store.objects.size, objects);
  }
});

t.test('mutant keys-reused: a restarted subtask overwrites a committed object', async (t) => {
  for (const mutant of [undefined, 'keys-reused'] as const) {
    const store = new FakeS3();
    const a = await mkSink({ mutant, store });
    const [h1] = await stageAndCommit(a, 1, 1, [line(0, 1)]);
    const etag1 = store.objects.get(h1.key)!.etag;
    // The worker restarts; the job restores from checkpoint 1 (new epoch) and goes on.
    const b = await mkSink({ mutant, store });
    await b.sink.recover([h1], 2);
    const [h2] = await stageAndCommit(b, 2, 2, [line(0, 2)]);
    if (mutant) {
      t.equal(h2.key, h1.key, 'keys-reused: same key');
      t.not(store.objects.get(h1.key)!.etag, etag1, 'keys-reused: the judged object changed');
    } else {
      t.not(h2.key, h1.key, 'correct: distinct keys');
      t.equal(store.objects.get(h1.key)!.etag, etag1, 'correct: the committed object is untouched');
    }
  }
});

t.test('mutant zero-byte-commit: empty barriers become zero-byte objects', async (t) => {
  for (const [mutant, objects] of [[undefined, 0], ['zero-byte-commit', 1]] as const) {
    const r = await mkSink({ mutant });
    const hs = await r.sink.prepare(1, 1);
    await r.sink.commit(1, 1, hs);
    t.equal(r.store.objects.size, objects, `${mutant ?? 'correct'}`);
    if (mutant) t.equal([...r.store.objects.values()][0]!.body.length, 0, 'zero bytes');
  }
});

// ---------------------------------------------------------------------------------------
// Parts during the interval (the sink uploads the next checkpoint's parts before its barrier)

/** Resolves once `cond` holds (polled), or rejects after 30 s (the unit tests run at nice 19 beside the rig in CI). */
async function until(cond: () => boolean): Promise<void> {
  const end = Date.now() + 30_000;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
}

const uploadsAt = (store: FakeS3, key: string) => [...store.uploads.values()].filter((u) => u.key === key);

t.test('parts during the interval: uploaded before the barrier, completed with the rest as one object', async (t) => {
  const r = await mkSink();
  await stageAndCommit(r, 1, 1, [line(0, 1)]);
  const creates = r.store.count('CreateMultipartUpload');
  const lines = Array.from({ length: 10 }, (_, i) => line(0, 2 + i));
  for (const l of lines) r.sink.write(l);
  const key2 = 'run-1/subtask=2/epoch=1/chk=2.jsonl';
  // Each line is over the part size (8): every write hands a part on, at most 4 waiting at once.
  await until(() => uploadsAt(r.store, key2)[0]?.parts.size === 4);
  t.equal(r.store.count('CreateMultipartUpload'), creates + 1, "checkpoint 2's upload began before its barrier");
  t.same((await readJournal(r.journal)).map((e) => e.key), ['run-1/subtask=2/epoch=1/chk=1.jsonl', key2], 'journaled before its parts, as at a barrier');
  t.notOk(r.store.objects.has(key2), 'nothing visible');
  r.sink.write(line(0, 12));
  const [h] = await r.sink.prepare(2, 1);
  t.equal(r.store.count('CreateMultipartUpload'), creates + 1, 'the barrier used that upload');
  t.equal(h!.key, key2);
  t.equal(h!.records, 11);
  const body = Buffer.from([...lines, line(0, 12)].join('\n') + '\n');
  t.equal(h!.bytes, body.length);
  t.same(h!.parts.map((p) => p.partNumber), h!.parts.map((_, i) => i + 1), 'parts numbered 1..n in order');
  t.ok(h!.parts.slice(0, 4).every((p) => p.size === Buffer.byteLength(lines[0]!) + 1), 'the first four parts are the early ones, a line each');
  t.equal(r.store.objects.has(key2), false, 'still nothing visible after prepare');
  await r.sink.commit(2, 1, [h!]);
  const o = r.store.objects.get(key2)!;
  t.same(o.body, body, 'the object holds the lines in order, once');
  t.equal(o.etag, h!.expectedEtag);
  t.equal(r.store.uploads.size, 0, 'no upload left pending');
});

t.test('parts during the interval: none before the first barrier (the next id is unknown)', async (t) => {
  const r = await mkSink();
  for (let i = 0; i < 6; i++) r.sink.write(line(0, i));
  await new Promise((res) => setTimeout(res, 50));
  t.equal(r.store.count('CreateMultipartUpload'), 0);
  t.equal(r.store.count('UploadPart'), 0);
  const [h] = await r.sink.prepare(1, 1);
  t.equal(h!.records, 6);
  t.equal(r.store.count('CreateMultipartUpload'), 1);
});

t.test('parts during the interval: a barrier of another id aborts the early upload and stages its bytes at its own key', async (t) => {
  const r = await mkSink();
  await stageAndCommit(r, 1, 1, [line(0, 1)]);
  const lines = [line(0, 2), line(0, 3), line(0, 4)];
  for (const l of lines) r.sink.write(l);
  await until(() => uploadsAt(r.store, 'run-1/subtask=2/epoch=1/chk=2.jsonl')[0]?.parts.size === 3);
  const [h] = await r.sink.prepare(5, 1);
  t.equal(h!.key, 'run-1/subtask=2/epoch=1/chk=5.jsonl');
  t.equal(r.store.count('AbortMultipartUpload'), 1, 'the early upload aborted');
  t.same(uploadsAt(r.store, 'run-1/subtask=2/epoch=1/chk=2.jsonl'), [], 'nothing left at its key');
  t.match(r.logs.join('\n'), /early upload for checkpoint 2 epoch 1 \(3 parts handed, 3 uploaded\) not used: the barrier is checkpoint 5 epoch 1/);
  await r.sink.commit(5, 1, [h!]);
  t.same(r.store.objects.get(h!.key)!.body, Buffer.from(lines.join('\n') + '\n'));
  t.equal(h!.records, 3);
  // And the next interval's parts go to checkpoint 6.
  r.sink.write(line(0, 5));
  await until(() => uploadsAt(r.store, 'run-1/subtask=2/epoch=1/chk=6.jsonl').length === 1);
  t.pass('the next early upload is for checkpoint 6');
});

t.test('parts during the interval: a refused early part is staged again at the barrier', async (t) => {
  const r = await mkSink();
  await stageAndCommit(r, 1, 1, [line(0, 1)]);
  r.store.fail('UploadPart', () => s3err('AccessDenied', 403), 1);
  const lines = [line(0, 2), line(0, 3)];
  for (const l of lines) r.sink.write(l);
  await until(() => r.store.count('UploadPart') >= 1);
  const [h] = await r.sink.prepare(2, 1);
  t.match(r.logs.join('\n'), /early upload for checkpoint 2 epoch 1 \(2 parts handed, 0 uploaded\) not used: its upload failed \(AccessDenied \[403\]/);
  t.equal(r.store.count('AbortMultipartUpload'), 1);
  await r.sink.commit(2, 1, [h!]);
  t.same(r.store.objects.get('run-1/subtask=2/epoch=1/chk=2.jsonl')!.body, Buffer.from(lines.join('\n') + '\n'), 'every line, once, at the barrier\'s key');
});

t.test('parts during the interval: a failed prepare puts the early lines back first, in order', async (t) => {
  const r = await mkSink();
  await stageAndCommit(r, 1, 1, [line(0, 1)]);
  const early = [line(0, 2), line(0, 3)];
  for (const l of early) r.sink.write(l);
  await until(() => uploadsAt(r.store, 'run-1/subtask=2/epoch=1/chk=2.jsonl')[0]?.parts.size === 2);
  r.store.fail('CreateMultipartUpload', () => s3err('AccessDenied', 403), 1);
  // Another id: the early bytes are staged anew, and that staging is refused.
  await t.rejects(r.sink.prepare(3, 1), /AccessDenied/);
  r.sink.write(line(0, 4));
  const [h] = await r.sink.prepare(4, 1);
  await r.sink.commit(4, 1, [h!]);
  t.same(r.store.objects.get(h!.key)!.body.toString(), [...early, line(0, 4)].join('\n') + '\n', 'the early lines first, then the later one, each once');
  t.equal(h!.records, 3);
});

t.test('parts during the interval: recover drops the early upload with the buffer', async (t) => {
  const r = await mkSink();
  await stageAndCommit(r, 1, 1, [line(0, 1)]);
  r.sink.write(line(0, 2));
  await until(() => uploadsAt(r.store, 'run-1/subtask=2/epoch=1/chk=2.jsonl')[0]?.parts.size === 1);
  await r.sink.recover([], 2);
  await until(() => r.store.count('AbortMultipartUpload') === 1);
  t.match(r.logs.join('\n'), /dropping 1 buffered records of the abandoned attempt/);
  t.same(await r.sink.prepare(1, 2), [], 'nothing left to stage');
});
