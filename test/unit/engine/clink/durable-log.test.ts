import t from 'tap';
import { appendFileSync, mkdtempSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { DurableLog, encodeRecord, parseLog } from '../../../../engine/clink/durable-log.ts';

const tmp = () => mkdtempSync(path.join(os.tmpdir(), 'clink-log-'));

t.test('records round-trip with checksums', async (t) => {
  const file = path.join(tmp(), 'cp.log');
  const { log, records } = DurableLog.open<{ id: number }>(file);
  t.same(records, []);
  log.append({ id: 1 });
  log.append({ id: 2 });
  log.close();
  const again = DurableLog.open<{ id: number }>(file);
  t.same(again.records, [{ id: 1 }, { id: 2 }]);
  t.equal(again.tornBytes, 0);
  again.log.close();
  t.match(readFileSync(file, 'utf8'), /^[0-9a-f]{8} \{"id":1\}\n[0-9a-f]{8} \{"id":2\}\n$/);
});

t.test('a torn tail (no newline) is ignored and truncated before the next append', async (t) => {
  const file = path.join(tmp(), 'cp.log');
  writeFileSync(file, encodeRecord({ id: 1 }) + encodeRecord({ id: 2 }));
  const full = statSync(file).size;
  // A kill mid-append: half of a third record.
  appendFileSync(file, encodeRecord({ id: 3, big: 'x'.repeat(50) }).slice(0, 30));
  const { log, records, tornBytes } = DurableLog.open<{ id: number }>(file);
  t.same(records.map((r) => r.id), [1, 2]);
  t.equal(tornBytes, 30);
  t.equal(statSync(file).size, full, 'file truncated back to the good prefix');
  log.append({ id: 4 });
  log.close();
  t.same(DurableLog.open<{ id: number }>(file).records.map((r) => r.id), [1, 2, 4]);
});

t.test('a complete line with a bad checksum ends the good prefix', async (t) => {
  const good = encodeRecord({ id: 1 });
  const bad = encodeRecord({ id: 2 }).replace('"id":2', '"id":7');
  const parsed = parseLog(good + bad + encodeRecord({ id: 3 }));
  t.same(parsed.records, [{ id: 1 }]);
  t.equal(parsed.goodBytes, Buffer.byteLength(good));
});

t.test('a complete last line that fails its checksum is corruption at rest: opening refuses it (a torn append never ends in its newline)', async (t) => {
  const file = path.join(tmp(), 'cp.log');
  const good = encodeRecord({ id: 1 });
  const flipped = encodeRecord({ id: 2, offsets: { '0': 2405 } }).replace('2405', '2404');
  writeFileSync(file, good + flipped);
  const parsed = parseLog(readFileSync(file));
  t.equal(parsed.recordsAfterTear, 0);
  t.equal(parsed.badLineComplete, true);
  t.throws(() => DurableLog.open(file), { name: 'DurableLogCorruptError', atRest: true, message: `the complete line at byte ${Buffer.byteLength(good)} fails its checksum (a record corrupted at rest, not a torn append)` });
  t.equal(readFileSync(file, 'utf8'), good + flipped, 'nothing cut: the record stays for whoever repairs it');
  // Cut before its newline, the same bytes are a torn append, cut as before.
  writeFileSync(file, good + flipped.slice(0, -1));
  const torn = DurableLog.open<{ id: number }>(file);
  t.same(torn.records, [{ id: 1 }]);
  torn.log.close();
});

t.test('MUTANT unchecked-log reads a flipped record as written; MUTANT torn-log-append reads the prefix', async (t) => {
  const file = path.join(tmp(), 'cp.log');
  const flipped = encodeRecord({ id: 2, offsets: { '0': 2405 } }).replace('2405', '2404');
  writeFileSync(file, encodeRecord({ id: 1 }) + flipped);
  const unchecked = DurableLog.open<{ id: number; offsets?: Record<string, number> }>(file, { uncheckedRecords: true });
  t.same(unchecked.records, [{ id: 1 }, { id: 2, offsets: { '0': 2404 } }], 'the wrong offset, restored from');
  unchecked.log.close();
  writeFileSync(file, encodeRecord({ id: 1 }) + encodeRecord({ id: 2 }).replace('"id":2', '"id":x'));
  const dropped = DurableLog.open<{ id: number }>(file, { uncheckedRecords: true });
  t.same(dropped.records, [{ id: 1 }], 'a corrupted last line that no longer parses: dropped as if torn, silently');
  dropped.log.close();
  writeFileSync(file, encodeRecord({ id: 1 }) + flipped);
  t.same(DurableLog.open<{ id: number }>(file, { tornAppends: true }).records, [{ id: 1 }]);
});

t.test('a record cut exactly before its newline is torn, not accepted', async (t) => {
  const rec = encodeRecord({ id: 9 });
  const parsed = parseLog(encodeRecord({ id: 1 }) + rec.slice(0, -1));
  t.same(parsed.records, [{ id: 1 }]);
  t.equal(parsed.tornBytes, rec.length - 1);
});

t.test('an empty file and a file truncated to nothing', async (t) => {
  const file = path.join(tmp(), 'cp.log');
  writeFileSync(file, encodeRecord({ id: 1 }));
  truncateSync(file, 0);
  const { log, records } = DurableLog.open(file);
  t.same(records, []);
  log.close();
});

t.test('good records after a corrupt line: the log refuses to open (never resumes from a truncated history)', async (t) => {
  const file = path.join(tmp(), 'cp.log');
  // What a failed append that kept its partial bytes leaves: a torn record, then later good ones.
  writeFileSync(file, encodeRecord({ id: 1 }) + encodeRecord({ id: 2, pad: 'x'.repeat(40) }).slice(0, 25) + encodeRecord({ id: 3 }) + encodeRecord({ id: 4 }));
  const parsed = parseLog(readFileSync(file));
  t.same(parsed.records, [{ id: 1 }]);
  t.equal(parsed.recordsAfterTear, 1, 'the record glued to the torn bytes is lost; the next one is good');
  t.throws(() => DurableLog.open(file), { name: 'DurableLogCorruptError' }, 'open refuses');
  t.equal(readFileSync(file).length, statSync(file).size, 'the file was left as it was');
  const mutant = DurableLog.open<{ id: number }>(file, { tornAppends: true });
  t.same(mutant.records.map((r) => r.id), [1], 'MUTANT torn-log-append: reads only the prefix, silently');
  mutant.log.close();
});

/** Appends records in a child whose file-size limit (ulimit -f, 1 KiB) makes one append fail half-way (EFBIG). */
function appendUntilFailure(file: string, tornAppends: boolean): { appended: number; error: string } {
  const mod = path.resolve('engine/clink/durable-log.ts');
  const script = `
    import { DurableLog } from ${JSON.stringify(mod)};
    const { log } = DurableLog.open(${JSON.stringify(file)}, { tornAppends: ${tornAppends} });
    let appended = 0, error = '';
    try { for (;;) { log.append({ n: appended, pad: 'y'.repeat(180) }); appended++; } } catch (e) { error = e.name + ': ' + e.message; }
    try { log.append({ n: 'after' }); } catch (e) { /* no room for it */ }
    console.log(JSON.stringify({ appended, error }));`;
  const r = spawnSync('bash', ['-c', `ulimit -f 2 && exec ${JSON.stringify(process.execPath)} --input-type=module -e "$0"`, script], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } });
  if (r.status !== 0) throw new Error(`child failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as { appended: number; error: string };
}

t.test('an append that fails half-way is cut back: the log holds exactly the appended records', async (t) => {
  const file = path.join(tmp(), 'cp.log');
  const { appended, error } = appendUntilFailure(file, false);
  t.ok(appended > 0, `${appended} records appended before the limit`);
  t.match(error, /DurableLogAppendError: .*append failed \(EFBIG\); cut back to \d+ bytes/);
  const parsed = parseLog(readFileSync(file));
  t.equal(parsed.tornBytes, 0, 'no partial bytes left');
  t.same(
    parsed.records.map((r) => (r as { n: unknown }).n),
    [...Array.from({ length: appended }, (_, i) => i), 'after'],
    'every appended record, then the small one appended after the failure on a line of its own',
  );
  t.equal(statSync(file).size, parsed.goodBytes);
});

t.test('MUTANT torn-log-append keeps the partial bytes of the failed append', async (t) => {
  const file = path.join(tmp(), 'cp.log');
  const { appended } = appendUntilFailure(file, true);
  const parsed = parseLog(readFileSync(file));
  t.equal(parsed.records.length, appended);
  t.ok(parsed.tornBytes > 0, `${parsed.tornBytes} partial bytes stay in the log`);
});
