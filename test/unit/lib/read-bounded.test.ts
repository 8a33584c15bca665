import t from 'tap';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { QualError } from '../../../lib/errors.ts';
import { readBoundedJson, readBoundedText, readRegularText } from '../../../lib/read-bounded.ts';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'cq-read-bounded-'));

t.test('a regular file within the cap is read whole; a symlink to one is followed', async (t) => {
  const f = path.join(tmp, 'a.txt');
  const text = 'é'.repeat(100_000); // 200,000 bytes: more than one 64 KiB chunk
  writeFileSync(f, text);
  t.equal(readBoundedText(f, { maxBytes: 200_000, what: 'x' }), text);
  symlinkSync(f, path.join(tmp, 'link.txt'));
  t.equal(readRegularText(path.join(tmp, 'link.txt'), 'x'), text);
});

t.test('a file past the cap, a device, a FIFO and a missing file are BAD_INPUT_FILE naming the file', async (t) => {
  const f = path.join(tmp, 'big.txt');
  writeFileSync(f, 'x'.repeat(1001));
  t.throws(() => readBoundedText(f, { maxBytes: 1000, what: 'campaign' }), { code: 'BAD_INPUT_FILE', message: `campaign ${f} is 1001 bytes: at most 1000 bytes are read` });
  // /dev/zero reports size 0 and never ends: the read stops past the cap.
  t.throws(() => readRegularText('/dev/zero', 'evidence'), { code: 'BAD_INPUT_FILE', message: 'evidence /dev/zero is a character device: only a regular file is read' });
  const fifo = path.join(tmp, 'fifo');
  t.equal(spawnSync('mkfifo', [fifo]).status, 0);
  t.throws(() => readBoundedText(fifo, { maxBytes: 10, what: 'campaign' }), { code: 'BAD_INPUT_FILE', message: /is a FIFO \(named pipe\)/ });
  const err = t.throws(() => readBoundedText(path.join(tmp, 'none'), { maxBytes: 10, what: 'campaign' })) as unknown;
  t.ok(err instanceof QualError && err.code === 'BAD_INPUT_FILE' && /cannot read campaign .*none: ENOENT/.test(err.message));
});

t.test('readBoundedJson: parsed, or BAD_INPUT_FILE naming the file on a syntax error', async (t) => {
  const f = path.join(tmp, 'v.json');
  writeFileSync(f, '{"verdict": "PASS"}');
  t.same(readBoundedJson(f, { maxBytes: 100, what: 'verdict' }), { verdict: 'PASS' });
  writeFileSync(f, '{"verdict": ');
  t.throws(() => readBoundedJson(f, { maxBytes: 100, what: 'verdict' }), { code: 'BAD_INPUT_FILE', message: new RegExp(`verdict ${f} is not JSON`) });
});
