/**
 * `rig install`'s options for the optional parts: --engine names an engine (a bad one is
 * refused, 254, before anything is installed), --all; its help says what is installed when.
 * Only the refusals and the help run here: the cache is a temporary one all the same.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { repoRoot } from '../../../../lib/paths.ts';

const cache = mkdtempSync(path.join(os.tmpdir(), 'cq-rig-install-cmd-'));
t.teardown(() => rmSync(cache, { recursive: true, force: true }));

function cli(...args: string[]) {
  return spawnSync(process.execPath, [path.join(repoRoot, 'bin', 'clink-qual.ts'), 'rig', 'install', ...args], {
    cwd: repoRoot,
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, CLINK_QUAL_CACHE: cache },
  });
}

t.test('--engine spark: refused with the engines it knows, before anything is installed', async (t) => {
  const r = cli('--engine', 'spark');
  t.equal(r.status, 254, r.stderr);
  t.match(r.stderr, /--engine: clink or flink, not "spark"/);
  t.notMatch(r.stderr, /rig install: .*start/, 'no part started');
  t.notOk(existsSync(path.join(cache, 'manifest.json')), 'no manifest written');
});

t.test('--help says Flink is installed only when asked or on first use, and names --engine and --all', async (t) => {
  const r = cli('--help');
  t.equal(r.status, 0, r.stderr);
  const text = r.stdout.replace(/\s*\n\s*/g, ' ');
  t.match(text, /--engine NAME/);
  t.match(text, /flink \(flink, flink-s3-fs-hadoop, flink-job, flink-agent\)/, "the engine's parts by their manifest names");
  t.match(text, /--all/);
  t.match(text, /the first campaign or smoke with engine flink installs them before its rig work/);
  t.match(text, /The Clink engine needs none of them/);
});
