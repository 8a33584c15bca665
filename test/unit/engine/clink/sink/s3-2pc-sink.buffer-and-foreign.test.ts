/**
 * s3_2pc_sink, two points of issue 12 against a small in-process fake of the store
 * (test/helpers/mini-s3.ts; pure protocol logic; test/rig/engine-tamper.test.ts runs the foreign-object case on MinIO):
 *  - prepare() takes the buffer before its first await: a line written while the upload
 *    runs goes to the next checkpoint, once; a failed upload puts the taken lines back in
 *    front of it;
 *  - a re-commit (NoSuchUpload) that finds an object it did not write raises a
 *    SinkIntegrityError; the mutant trust-existing-object takes it as its own.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { SinkIntegrityError, createS3Sink } from '../../../../../engine/clink/sink/s3-2pc-sink.ts';
import type { Sink, SinkContext } from '../../../../../engine/clink/sink/sink-api.ts';
import type { ClinkMutant } from '../../../../../engine/clink/mutants/index.ts';
import { MiniS3 } from '../../../../helpers/mini-s3.ts';

const md5 = (b: Buffer): string => createHash('md5').update(b).digest('hex');
const dir = mkdtempSync(path.join(tmpdir(), 'sink-buffer-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

async function mk(store: MiniS3, mutant?: ClinkMutant): Promise<{ sink: Sink; logs: string[] }> {
  const logs: string[] = [];
  const ctx: SinkContext = {
    subtask: 1,
    bucket: 'bkt',
    prefix: 'run/',
    checkpointIntervalMs: 1000,
    mutant,
    s3: { endpoint: 'http://unused', region: 'us-east-1', accessKeyId: 'x', secretAccessKey: 'y' },
    journalPath: path.join(dir, `j${n++}`, 'journal.jsonl'),
    log: (l) => logs.push(l),
    faultPoint: async () => {},
  };
  const sink = createS3Sink(ctx, { client: store, partSize: 1024, backoffBaseMs: 1, backoffCapMs: 2 });
  await sink.open();
  return { sink, logs };
}

const body = (store: MiniS3, key: string): string => store.objects.get(key)!.body.toString('utf8');

t.test('a line written while prepare uploads goes to the next checkpoint, exactly once', async (t) => {
  const store = new MiniS3();
  const { sink } = await mk(store);
  sink.write('a');
  sink.write('b');
  let open!: () => void;
  store.gate = new Promise((r) => (open = r));
  const preparing = sink.prepare(1, 1);
  await new Promise((r) => setImmediate(r));
  sink.write('c'); // while the upload of checkpoint 1 is in flight
  store.gate = null;
  open();
  const h1 = await preparing;
  await sink.commit(1, 1, h1);
  t.equal(body(store, h1[0]!.key), 'a\nb\n', 'checkpoint 1 holds what was buffered at its barrier');
  t.equal(h1[0]!.records, 2);
  const h2 = await sink.prepare(2, 1);
  t.equal(h2.length, 1, 'the line written during the upload is still buffered');
  await sink.commit(2, 1, h2);
  t.equal(body(store, h2[0]!.key), 'c\n', 'checkpoint 2 holds it, once');
  t.same(await sink.prepare(3, 1), [], 'nothing left over');
});

t.test('a failed upload puts the taken lines back in front of newer ones', async (t) => {
  const store = new MiniS3();
  const { sink } = await mk(store);
  sink.write('a');
  let open!: () => void;
  store.gate = new Promise((r) => (open = r));
  store.failUploadPart = 1;
  const preparing = sink.prepare(1, 1);
  await new Promise((r) => setImmediate(r));
  sink.write('b');
  store.gate = null;
  open();
  await t.rejects(preparing, /AccessDenied/);
  const h = await sink.prepare(2, 1);
  await sink.commit(2, 1, h);
  t.equal(body(store, h[0]!.key), 'a\nb\n', 'in order, nothing dropped, nothing repeated');
  t.equal(h[0]!.records, 2);
});

async function foreignAtKey(mutant?: ClinkMutant): Promise<{ err: unknown; logs: string[] }> {
  const store = new MiniS3();
  const { sink, logs } = await mk(store, mutant);
  sink.write('x1');
  sink.write('x2');
  const hs = await sink.prepare(5, 2);
  await sink.commit(5, 2, hs);
  // A foreign writer puts other bytes of the same size at the committed key, without our token.
  const key = hs[0]!.key;
  const foreign = Buffer.from('x2\nx1\n');
  store.objects.set(key, { body: foreign, etag: md5(foreign), metadata: {} });
  // The recovery re-completes the handle: NoSuchUpload, then HEAD.
  const err = await sink.recover(hs, 3).then(
    () => null,
    (e: unknown) => e,
  );
  return { err, logs };
}

t.test('a foreign object at a re-completed key is a SinkIntegrityError', async (t) => {
  const { err, logs } = await foreignAtKey();
  t.type(err, SinkIntegrityError);
  t.match(String((err as Error).message), /not ours .*ETag .* != expected .*clink-token \(none\)/);
  t.ok(logs.some((l) => l.includes('INTEGRITY ERROR')), 'logged loudly');
});

t.test('mutant trust-existing-object takes the foreign object as its own', async (t) => {
  const { err, logs } = await foreignAtKey('trust-existing-object');
  t.equal(err, null, 'no error');
  t.ok(logs.some((l) => l.includes('mutant trust-existing-object')), 'the mutant says what it did');
});
