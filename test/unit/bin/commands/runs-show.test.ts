/**
 * A live run (the rig lock's live holder runs it): `runs show` prints its phase, progress and
 * ETA from its own files, and `report` refuses to render it (exit 2), writing nothing. A run
 * whose holder is gone is no longer live.
 */
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { repoRoot } from '../../../../lib/paths.ts';
import { procStat, type RigLockHolder } from '../../../../rig/lock.ts';

t.test('runs show and report on a live run', async (t) => {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'cq-live-'));
  t.teardown(() => rmSync(tmp, { recursive: true, force: true }));
  const state = path.join(tmp, 'state');
  mkdirSync(state);
  const run = path.join(tmp, 'runs', 'live-run');
  cpSync(path.join(repoRoot, 'test', 'fixtures', 'run-pass'), run, { recursive: true });
  for (const f of ['verdict.json', 'recount.json', 'report.md', 'timeline.svg', 'junit.xml']) rmSync(path.join(run, f));
  const env = { ...process.env, CLINK_QUAL_STATE: state, CLINK_QUAL_RUNS: path.join(tmp, 'runs') };
  const cli = (args: string[]) => spawnSync(process.execPath, [path.join(repoRoot, 'bin', 'clink-qual.ts'), ...args], { cwd: repoRoot, env, encoding: 'utf8', timeout: 60_000 });

  const holder = spawn('sleep', ['60']);
  t.teardown(() => holder.kill('SIGKILL'));
  const lock: RigLockHolder = { pid: holder.pid!, procStart: procStat(holder.pid!)!.start, command: 'campaign run', runId: 'live-run', startedAt: new Date().toISOString() };
  writeFileSync(path.join(state, 'rig.lock'), JSON.stringify(lock));

  const show = cli(['runs', 'show', run]);
  t.equal(show.status, 0, show.stderr);
  t.match(show.stdout, new RegExp(`^LIVE {7}held by campaign run \\(pid ${holder.pid}, since `, 'm'));
  t.match(show.stdout, /^phase {6}\S/m);
  t.match(show.stdout, /^progress {3}[\d,]+ events produced, [\d,]+ committed/m);
  t.match(show.stdout, /^faults {5}\d+ of \d+ planned landed$/m);
  t.match(show.stdout, /^ETA {8}/m);
  t.match(show.stdout, /report {5}none yet \(the run is live/);

  const rep = cli(['report', run]);
  t.equal(rep.status, 2, rep.stderr);
  t.match(rep.stderr, /is a live run \(the rig is held by pid \d+ \(campaign run, run live-run/);
  t.notOk(existsSync(path.join(run, 'report.md')), 'nothing rendered');

  holder.kill('SIGKILL');
  await new Promise((r) => holder.on('exit', r));
  const after = cli(['runs', 'show', run]);
  t.notMatch(after.stdout, /^LIVE/m, 'its holder is gone: not live');
});
