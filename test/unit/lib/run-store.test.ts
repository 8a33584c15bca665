/**
 * The run store: one registry of evidence file names (unique, the report's required order),
 * typed writes that are atomic for JSON and line by line for JSON Lines, and reads that say
 * missing from unreadable and keep a torn JSON Lines file's good lines.
 */
import { appendFileSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { gzipSync } from 'node:zlib';
import { EVIDENCE, EVIDENCE_DESCRIPTIONS, REQUIRED_EVIDENCE, RunStore } from '../../../lib/run-store.ts';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'cq-run-store-'));
t.teardown(() => rmSync(tmp, { recursive: true, force: true }));

t.test('the registry: unique names, the required files in the report order, descriptions by name', async (t) => {
  const files = Object.values(EVIDENCE).map((s) => s.file);
  t.equal(new Set(files).size, files.length, 'no file name twice');
  t.same(REQUIRED_EVIDENCE, ['campaign.yaml', 'campaign.resolved.json', 'provenance.json', 'plan.json', 'gate.json', 'chaos.jsonl', 'samples.jsonl', 'ledger.jsonl', 'checkpoints.jsonl', 'recount.json', 'verdict.json']);
  t.equal(EVIDENCE_DESCRIPTIONS['recount.json'], 'the separate full re-read of the settled bucket');
  t.notOk('run.log' in EVIDENCE_DESCRIPTIONS, 'a file without a description is not given an empty one');
  for (const [key, spec] of Object.entries(EVIDENCE)) {
    const ext = spec.format === 'jsonl' ? '.jsonl' : spec.format === 'json' ? '.json' : '';
    if (ext) t.ok(spec.file.endsWith(ext), `${key}: ${spec.file} is ${spec.format}`);
  }
});

t.test('writes: JSON atomically, JSON Lines appended; reads: value, missing, unreadable, torn tail', async (t) => {
  const store = new RunStore(path.join(tmp, 'r1'), { fresh: true });
  t.equal(store.read('verdict').ok, false);
  t.same(store.read('verdict'), { ok: false, missing: true });
  store.write('produced', { perPartition: [3, 4] });
  t.same(store.get('produced'), { perPartition: [3, 4] });
  t.notOk(readdirSync(store.dir).some((f) => f.endsWith('.tmp')), 'no temporary file left');
  store.append('phases', { t: '2026-12-04T00:00:00.000Z', phase: 'gate', edge: 'start' });
  store.append('phases', { t: '2026-12-04T00:00:01.000Z', phase: 'gate', edge: 'end' });
  appendFileSync(store.path('phases'), '{"t":"2026-12-04T00:0');
  const lines = store.lines('phases');
  t.equal(lines.values.length, 2, 'the good lines kept');
  t.same(lines.skipped, [3], 'the torn line named');
  t.same(store.lines('chaos'), { missing: true, values: [], skipped: [] });
  writeFileSync(store.path('gate'), '{"passed": tru');
  const bad = store.read('gate');
  t.equal(bad.ok, false);
  t.equal(!bad.ok && bad.missing, false, 'unreadable is not missing');
  t.match(!bad.ok ? bad.error : '', /JSON/);
  t.equal(store.get('gate'), undefined);
  t.equal(store.path('runLog'), path.join(store.dir, 'run.log'));
  t.equal(store.path('logs/worker-1'), path.join(store.dir, 'logs/worker-1'), 'a plain name is a path in the run');
  t.ok(store.has('produced'));
  t.notOk(store.has('recount'));
});

t.test('fresh: an existing run directory is refused', async (t) => {
  t.throws(() => new RunStore(path.join(tmp, 'r1'), { fresh: true }), /already exists; a run id is used once/);
});

t.test('a published run: NAME.gz reads as NAME (has, read, lines)', async (t) => {
  const dir = path.join(tmp, 'published');
  const store = new RunStore(dir, { create: true });
  t.notOk(store.has('recount'));
  writeFileSync(store.path('recount') + '.gz', gzipSync(JSON.stringify({ objects: 3 })));
  writeFileSync(store.path('chaos') + '.gz', gzipSync('{"faultId":"f1"}\n{"torn'));
  t.ok(store.has('recount'));
  t.same(store.read('recount'), { ok: true, value: { objects: 3 } });
  t.same(store.lines('chaos'), { missing: false, values: [{ faultId: 'f1' }], skipped: [2] });
  t.equal(store.text('runLog'), undefined, 'no run.log: no text');
  writeFileSync(store.path('runLog') + '.gz', gzipSync('2026-12-04T00:00:00.000Z preflight: ok\n'));
  t.equal(store.text('runLog'), '2026-12-04T00:00:00.000Z preflight: ok\n', 'run.log.gz reads as run.log');
  writeFileSync(store.path('runLog'), 'plain\n');
  t.equal(store.text('runLog'), 'plain\n', 'the file itself before its .gz');
});
