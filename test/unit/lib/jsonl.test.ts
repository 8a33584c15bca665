/** lib/jsonl.ts: values a line, blank lines and a torn line skipped (and reported), a missing file empty. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { parseJsonl, readJsonl } from '../../../lib/jsonl.ts';

t.test('parseJsonl: values in order, blank lines skipped, bad lines reported by number', async (t) => {
  const bad: number[] = [];
  t.same(parseJsonl('{"a":1}\n\n  \n[2]\n"x"\n{"torn":', (n) => bad.push(n)), [{ a: 1 }, [2], 'x']);
  t.same(bad, [6]);
  t.same(parseJsonl(''), []);
  t.same(parseJsonl('1\n{oops}\n2\n'), [1, 2], 'a bad line in the middle is skipped too');
});

t.test('readJsonl: a file, a missing file, a directory', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'jsonl-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(path.join(dir, 'a.jsonl'), '{"k":"v"}\n{"k":');
  t.same(readJsonl(path.join(dir, 'a.jsonl')), [{ k: 'v' }]);
  t.same(readJsonl(path.join(dir, 'missing.jsonl')), []);
  t.throws(() => readJsonl(dir), { code: 'EISDIR' }, 'other read errors are thrown');
});
