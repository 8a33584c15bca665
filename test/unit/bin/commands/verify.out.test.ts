import t from 'tap';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// Issue 29 item 3, through the CLI: a --out that cannot be written is exit 254 before the
// recount starts (it used to show as exit 255 after the whole recount). The endpoint is a
// closed loopback port that is never contacted: the check comes first.
const repo = path.join(import.meta.dirname, '../../../..');
const cli = path.join(repo, 'bin', 'clink-qual.ts');
const tmp = mkdtempSync(path.join(os.tmpdir(), 'cq-verify-out-'));

const verify = (out: string) =>
  spawnSync(process.execPath, [cli, 'verify', '--endpoint', 'http://127.0.0.1:1', '--bucket', 'b', '--seed', 's', '--partitions', '1', '--keys', '1', '--produced', '1', '--out', out], {
    cwd: repo,
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, AWS_ACCESS_KEY_ID: 'k', AWS_SECRET_ACCESS_KEY: 's' },
  });

t.test('verify --out into a missing folder, or onto a directory, is exit 254 naming --out, before any recount', async (t) => {
  const missing = path.join(tmp, 'no-such-dir', 'recount.json');
  const r = verify(missing);
  t.equal(r.status, 254, r.stderr);
  t.match(r.stderr, /--out: cannot write .*no-such-dir\/recount\.json: ENOENT/);
  t.equal(r.stdout, '', 'nothing was recounted (no table printed)');
  const dir = path.join(tmp, 'a-dir.json');
  mkdirSync(dir);
  const d = verify(dir);
  t.equal(d.status, 254, d.stderr);
  t.match(d.stderr, /--out: cannot write .*a-dir\.json: EISDIR/);
});

t.test('a writable --out passes the check and is not left behind by it', async (t) => {
  const out = path.join(tmp, 'ok.json');
  const r = verify(out);
  t.equal(r.status, 2, `the check passed and the recount ran: the store could not be read (exit 2): ${r.stderr}`);
  t.notMatch(r.stderr, /--out: cannot write/);
  t.notOk(existsSync(out), 'no empty file left behind by the check');
});
