/** lib/jsonl.ts: values a line, blank lines and a torn line skipped (and reported), a missing file empty, X.gz read where X is absent. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { gzipSync } from 'node:zlib';
import { existsOrGz, parseJsonl, readJsonl, readTextOrGz } from '../../../lib/jsonl.ts';

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

t.test('a file stored gzipped (a published run) reads as the file, which wins when both exist', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cq-jsonl-gz-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const f = path.join(dir, 'chaos.jsonl');
  t.equal(readTextOrGz(f), undefined, 'neither: undefined');
  t.notOk(existsOrGz(f));
  writeFileSync(f + '.gz', gzipSync('{"a":1}\n{"a":2}\n'));
  t.ok(existsOrGz(f));
  t.same(readJsonl(f), [{ a: 1 }, { a: 2 }]);
  writeFileSync(f, '{"a":3}\n');
  t.same(readJsonl(f), [{ a: 3 }], 'the plain file when it is there');
  writeFileSync(path.join(dir, 'bad.jsonl.gz'), 'not gzip');
  t.throws(() => readTextOrGz(path.join(dir, 'bad.jsonl')), 'a damaged .gz is an error, not an absent file');
});
