/**
 * The runner's checks before anything is touched: a --rehearsal that is not a finished run
 * stops `campaign run` with 254 before any rig is looked for, and nothing is written under
 * runs/. (The phases themselves: phases.test.ts; a whole run: the rig tests.)
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { repoRoot } from '../../../../lib/paths.ts';

t.test('CLI: a bad --rehearsal is refused with 254 before the rig, nothing written', async (t) => {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'cq-run-'));
  t.teardown(() => rmSync(tmp, { recursive: true, force: true }));
  mkdirSync(path.join(tmp, 'state'));
  mkdirSync(path.join(tmp, 'runs'));
  const env = { ...process.env, CLINK_QUAL_STATE: path.join(tmp, 'state'), CLINK_QUAL_RUNS: path.join(tmp, 'runs') };
  const run = (args: string[]) => spawnSync(process.execPath, [path.join(repoRoot, 'bin', 'clink-qual.ts'), 'campaign', 'run', ...args], { cwd: repoRoot, env, encoding: 'utf8', timeout: 60_000 });
  const cases: [string, RegExp][] = [
    [path.join(tmp, 'nowhere'), /--rehearsal .*nowhere: not a run directory/],
    ['test/fixtures/run-aborted', /--rehearsal test\/fixtures\/run-aborted: the run has no verdict\.json, so it did not finish/],
  ];
  for (const [dir, re] of cases) {
    const r = run(['campaigns/quick.yaml', '--rehearsal', dir]);
    t.equal(r.status, 254, dir);
    t.match(r.stderr, re, dir);
    t.notMatch(r.stderr, /rig/i, 'stopped before any rig was looked for');
  }
  t.same(readdirSync(path.join(tmp, 'runs')), [], 'nothing written under runs/');
  const h = run(['--help']);
  t.match(h.stdout, /--rehearsal RUN_DIR\s/);
});
