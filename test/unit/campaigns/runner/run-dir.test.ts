/**
 * --run-id: one safe path segment, used once. A bad or reused id is refused with exit 254
 * before the rig is touched (the check runs before the rig state is read).
 */
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkRunId } from '../../../../campaigns/runner/run-dir.ts';
import { RunStore } from '../../../../lib/run-store.ts';
import { QualError } from '../../../../lib/errors.ts';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');
const cli = path.join(repo, 'bin', 'clink-qual.ts');

function tmpRuns(t: { teardown(fn: () => void): void }): string {
  const d = mkdtempSync(path.join(os.tmpdir(), 'clink-qual-runid-'));
  t.teardown(() => rmSync(d, { recursive: true, force: true }));
  return path.join(d, 'runs');
}

const badArgs = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    return err instanceof QualError && err.code === 'BAD_ARGUMENTS' ? err.message : `other error: ${String(err)}`;
  }
  return 'accepted';
};

t.test('ids that are not one safe path segment are refused', async (t) => {
  const runs = tmpRuns(t);
  for (const id of ['../escape', '..', '.', 'a/b', '/abs', '', 'x..y', '-flag', 'sp ace', 'a;rm -rf', 'x'.repeat(129)]) {
    t.match(badArgs(() => checkRunId(id, runs)), /a run id is 1 to 128 characters/, JSON.stringify(id));
  }
  for (const id of ['quick-20261203T070000-abcd', 'r1', 'my_run.2']) t.equal(badArgs(() => checkRunId(id, runs)), 'accepted', id);
});

t.test('a reused id is refused, and a fresh RunStore never appends to an existing run', async (t) => {
  const runs = tmpRuns(t);
  mkdirSync(path.join(runs, 'old-run'), { recursive: true });
  writeFileSync(path.join(runs, 'old-run', 'chaos.jsonl'), '{}\n');
  t.match(badArgs(() => checkRunId('old-run', runs)), /already exists; a run id is used once/);
  t.match(badArgs(() => new RunStore(path.join(runs, 'old-run'), { fresh: true })), /already exists/);
  const d = new RunStore(path.join(runs, 'new-run'), { fresh: true });
  t.ok(existsSync(d.dir));
});

t.test('through the CLI: exit 254, nothing written outside runs/', async (t) => {
  const runs = tmpRuns(t);
  mkdirSync(path.join(runs, 'taken'), { recursive: true });
  const run = (id: string) => {
    try {
      execFileSync(process.execPath, [cli, 'campaign', 'run', 'campaigns/quick.yaml', '--run-id', id], {
        cwd: repo, encoding: 'utf8', stdio: 'pipe', env: { ...process.env, CLINK_QUAL_RUNS: runs, CLINK_QUAL_STATE: path.join(path.dirname(runs), 'no-rig-state') },
      });
      return { code: 0, stderr: '' };
    } catch (err) {
      const e = err as { status: number; stderr: string };
      return { code: e.status, stderr: e.stderr };
    }
  };
  const escape = run('../escaped');
  t.equal(escape.code, 254, escape.stderr);
  t.match(escape.stderr, /a run id is 1 to 128 characters/);
  t.notOk(existsSync(path.join(path.dirname(runs), 'escaped')), 'nothing created outside runs/');
  const reused = run('taken');
  t.equal(reused.code, 254, reused.stderr);
  t.match(reused.stderr, /already exists/);
  t.same(readdirSync(runs), ['taken']);
});
