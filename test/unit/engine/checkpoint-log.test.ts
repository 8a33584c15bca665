import t from 'tap';
import { appendFileSync, mkdtempSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DurableLog, encodeRecord, parseLog } from '../../../engine/clink/durable-log.ts';

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
