/**
 * Clink's mutant names are a closed union: the registry lists each name once, every name has
 * its mechanism and catching counters, and a process's config naming any other mutant is
 * refused when read (the compiler refuses a misspelt name in the engine's own comparisons).
 * Every name has seams that override at least one protocol step; no mutant overrides none.
 * The seams of the runtime's mutants (worker, subtask, coordinator) are checked here against
 * fake contexts; the sink's are exercised through the sink (sink/s3-2pc-sink.test.ts).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { readConfig } from '../../../../../engine/clink/config.ts';
import { AbortMultipartUploadCommand, GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { CLINK_MUTANT_NAMES, CLINK_MUTANTS, isClinkMutant, namedMutant, seamsFor, type SinkSeamContext, type WorkerSeamContext } from '../../../../../engine/clink/mutants/index.ts';
import type { UploadHandle } from '../../../../../engine/clink/sink/sink-api.ts';
import type { CompletedCheckpoint } from '../../../../../engine/clink/assign.ts';

t.test('the registry and the union name the same mutants, once each', async (t) => {
  t.same(CLINK_MUTANTS.map((m) => m.name), [...CLINK_MUTANT_NAMES]);
  t.equal(new Set(CLINK_MUTANT_NAMES).size, CLINK_MUTANT_NAMES.length);
  for (const m of CLINK_MUTANTS) t.ok(m.mechanism.length > 40 && m.caughtBy.length > 0, `${m.name}: mechanism and counters`);
  t.ok(isClinkMutant('no-fencing'));
  t.notOk(isClinkMutant('no-fencin'));
  t.notOk(isClinkMutant('none'), "'none' is not a mutant");
});

t.test("readConfig refuses a mutant outside the union, and accepts each inside it", async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cq-mutant-cfg-'));
  const base = { host: 'worker-1', clinkDir: dir, coordinator: { address: '10.0.0.1', port: 1 }, kafka: { bootstrap: ['x:1'] }, topic: 't', partitions: 4, bucket: 'b', prefix: 'p/', checkpointIntervalMs: 1000, s3: { endpoint: 'http://x', region: 'r', credentialsFile: 'c' } };
  const file = path.join(dir, 'config.json');
  writeFileSync(file, JSON.stringify({ ...base, mutant: 'keys-reusd' }));
  t.throws(() => readConfig(file), /unknown mutant 'keys-reusd' \(known: commit-at-prepare, /);
  for (const m of CLINK_MUTANT_NAMES) {
    writeFileSync(file, JSON.stringify({ ...base, mutant: m }));
    t.equal(readConfig(file).mutant, m);
  }
  writeFileSync(file, JSON.stringify(base));
  t.equal(readConfig(file).mutant, undefined, 'no mutant: the correct engine');
});

/** The steps a set of seams overrides (its defined hooks). */
const overridden = (seams: object): string[] => Object.entries(seams).filter(([, v]) => v !== undefined && v !== false).map(([k]) => k);

t.test('every mutant overrides at least one protocol step; no mutant overrides none', async (t) => {
  for (const m of CLINK_MUTANT_NAMES) t.ok(overridden(seamsFor(m)).length > 0, `${m}: overrides ${overridden(seamsFor(m)).join(', ')}`);
  t.same(overridden(seamsFor(undefined)), [], 'seamsFor(undefined): the correct protocol');
  t.same(overridden(seamsFor('none')), [], "seamsFor('none'): the correct protocol");
  t.same(overridden(seamsFor('no-such-mutant' as never)), [], 'a name outside the union (refused elsewhere, loudly) gets no seams');
  // Which step each mutant overrides: the docs (docs/mutants.md) and the protocol files rely on it.
  t.same(Object.fromEntries(CLINK_MUTANT_NAMES.map((m) => [m, overridden(seamsFor(m)).sort()])), {
    'commit-at-prepare': ['afterStage'],
    'nosuchupload-rewrite': ['onNoSuchUpload'],
    'drop-restored-handles': ['restoredHandles'],
    'abort-on-unknown': ['onNoSuchUpload', 'onUnknownOutcome'],
    'keys-reused': ['objectKey'],
    'zero-byte-commit': ['stageEmptyBuffer'],
    'no-fencing': ['fence'],
    'offsets-off-by-one': ['startOffset'],
    'stall-flush': ['onStall'],
    'latest-by-wallclock': ['supersedes'],
    'torn-log-append': ['checkpointLog'],
    'trust-existing-object': ['acceptForeignObject'],
    'unchecked-log': ['checkpointLog'],
  });
  t.equal(namedMutant(undefined), undefined);
  t.equal(namedMutant('none'), undefined);
  t.equal(namedMutant(''), undefined);
  t.equal(namedMutant('keys-reused'), 'keys-reused');
});

function fakeSink(): SinkSeamContext & { logs: string[]; sent: unknown[]; retried: string[]; completed: string[] } {
  const logs: string[] = [];
  const sent: unknown[] = [];
  const retried: string[] = [];
  const completed: string[] = [];
  return {
    subtask: 3,
    prefix: 'run-1/',
    bucket: 'bkt',
    logs,
    sent,
    retried,
    completed,
    log: (l) => logs.push(l),
    send: async (c) => {
      sent.push(c);
      throw new Error('store down');
    },
    sendRetried: async (what, make) => {
      retried.push(what);
      const c = make();
      sent.push(c);
      return c instanceof GetObjectCommand ? { Body: { transformToByteArray: async () => new TextEncoder().encode('a\nb\n') } } : {};
    },
    complete: async (h) => {
      completed.push(h.key);
    },
  };
}

const handle = { key: 'run-1/subtask=3/epoch=2/chk=7.jsonl', uploadId: 'u-1', token: 'tok' } as UploadHandle;

t.test("a mutant's state is its protocol object's: each seamsFor call starts afresh (keys-reused)", async (t) => {
  const sink = fakeSink();
  const a = seamsFor('keys-reused');
  const place = { subtask: 3, epoch: 2, checkpointId: 7 };
  t.equal(a.objectKey!(sink, place), 'run-1/subtask=3/part-0.jsonl');
  t.equal(a.objectKey!(sink, { ...place, epoch: 9, checkpointId: 8 }), 'run-1/subtask=3/part-1.jsonl', 'neither the epoch nor the checkpoint is in the key');
  t.equal(seamsFor('keys-reused').objectKey!(sink, place), 'run-1/subtask=3/part-0.jsonl', 'a new sink (a restarted process) counts from 0 again');
});

t.test('the sink seams act through their context and log what they break', async (t) => {
  const sink = fakeSink();
  await seamsFor('commit-at-prepare').afterStage!(sink, handle);
  t.same(sink.completed, [handle.key], 'commit-at-prepare completes at prepare');

  t.equal(seamsFor('trust-existing-object').acceptForeignObject!(sink, handle, ['ETag x != expected y', 'size 1 != expected 2']), true);
  t.equal(sink.logs.at(-1), `clink sink mutant trust-existing-object: taking the object at ${handle.key} as committed (ETag x != expected y; size 1 != expected 2)`);

  t.same(seamsFor('drop-restored-handles').restoredHandles!(sink, [handle, handle]), []);
  t.equal(sink.logs.at(-1), 'clink sink mutant drop-restored-handles: ignoring 2 restored handles');

  const abort = seamsFor('abort-on-unknown');
  await abort.onNoSuchUpload!(sink, handle);
  t.equal(sink.sent.length, 0, 'abort-on-unknown takes NoSuchUpload as done without asking the store');
  await abort.onUnknownOutcome!(sink, handle, 'TimeoutError: late');
  t.equal(sink.logs.at(-1), `clink sink mutant abort-on-unknown: giving up ${handle.key} after TimeoutError: late`);
  t.ok(sink.sent.at(-1) instanceof AbortMultipartUploadCommand, 'then aborts the upload (its failure ignored)');
  t.same((sink.sent.at(-1) as AbortMultipartUploadCommand).input, { Bucket: 'bkt', Key: handle.key, UploadId: 'u-1' });

  const rw = fakeSink();
  await seamsFor('nosuchupload-rewrite').onNoSuchUpload!(rw, handle);
  t.same(rw.retried.map((w) => w.replace(/-rewrite-1-[0-9a-f]{6}\.jsonl$/, '-rewrite-1-R.jsonl')), [`mutant-get key=${handle.key}`, 'mutant-put key=run-1/subtask=3/epoch=2/chk=7-rewrite-1-R.jsonl']);
  const put = rw.sent.at(-1) as PutObjectCommand;
  t.ok(put instanceof PutObjectCommand);
  t.same(Buffer.from(put.input.Body as Buffer).toString(), 'a\nb\n', 'the same bytes, written again');
  t.same(put.input.Metadata, { 'clink-token': 'tok' });
  t.match(rw.logs.at(-1), /^clink sink mutant nosuchupload-rewrite: rewriting run-1\/subtask=3\/epoch=2\/chk=7\.jsonl as run-1\/subtask=3\/epoch=2\/chk=7-rewrite-1-[0-9a-f]{6}\.jsonl$/);

  t.equal(seamsFor('zero-byte-commit').stageEmptyBuffer, true);
});

function fakeWorker(n: number): WorkerSeamContext & { logs: string[]; leaseKept: number; flushed: number } {
  const w = {
    workerId: 'worker-2',
    logs: [] as string[],
    leaseKept: 0,
    flushed: 0,
    log: (l: string) => void w.logs.push(l),
    keepLease: () => void w.leaseKept++,
    tasks: Array.from({ length: n }, () => ({ autonomous: false, flushOnOwn: () => void w.flushed++ })),
  };
  return w;
}

t.test('the worker seams: stall-flush keeps the lease and flushes every task; no-fencing makes them autonomous', async (t) => {
  const w = fakeWorker(3);
  seamsFor('stall-flush').onStall!(w, 6543.6);
  t.equal(w.leaseKept, 1);
  t.equal(w.flushed, 3);
  t.same(w.logs, ['clink worker worker-2: MUTANT stall-flush: stalled for 6544 ms; committing buffered records of 3 tasks on our own']);
  const f = fakeWorker(2);
  seamsFor('no-fencing').fence!(f, 4100);
  t.same(f.tasks.map((x) => x.autonomous), [true, true]);
  t.equal(f.leaseKept, 0, 'the lease is not touched: the worker stays fenced');
  t.same(f.logs, ['clink worker worker-2: MUTANT no-fencing: no word from the coordinator for 4100 ms; tasks keep running and commit on their own']);
});

t.test('the subtask and coordinator seams', async (t) => {
  const start = seamsFor('offsets-off-by-one').startOffset!;
  t.equal(start(100), 99, 'one record before the checkpointed offset');
  t.equal(start(0), 0, 'never before the first offset');
  const sup = seamsFor('latest-by-wallclock').supersedes!;
  const cp = (id: number, at: string) => ({ t: 'complete', id, epoch: 1, at, offsets: {}, handles: {} }) as CompletedCheckpoint;
  t.equal(sup(cp(6, '2026-01-01T00:00:16.000Z'), cp(5, '2026-01-01T00:01:08.000Z')), false, 'a later checkpoint with an earlier time does not supersede');
  t.equal(sup(cp(6, '2026-01-01T00:01:16.000Z'), cp(5, '2026-01-01T00:01:08.000Z')), true);
  t.same(seamsFor('torn-log-append').checkpointLog, { keepTornAppends: true, stopOnFailedAppend: false });
  t.same(seamsFor('unchecked-log').checkpointLog, { keepTornAppends: false, stopOnFailedAppend: true, uncheckedRecords: true }, 'unchecked-log: only the checksums go; appends as the correct log');
});
