/**
 * bench/input-probes.ts: its options, its median and table, and a short run through
 * `npm run bench` (node bench/index.ts) while another process holds the rig lock: it touches
 * no rig, takes no lock, and prints each probe's exit code, wall time against the
 * `--version` baseline and RSS, and a RESULT line.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { PROBES, median, parseProbeOptions, probeTable } from '../../../bench/input-probes.ts';
import { repoRoot } from '../../../lib/paths.ts';
import { procStat, readRigLock } from '../../../rig/lock.ts';

t.test('options: runs, only (known probes), help', async (t) => {
  t.same(parseProbeOptions([]), { runs: 5 });
  t.same(parseProbeOptions(['--runs', '2', '--only', 'fifo,dev-zero']), { runs: 2, only: ['fifo', 'dev-zero'] });
  t.equal(parseProbeOptions(['-h']), 'help');
  t.throws(() => parseProbeOptions(['--runs', '0']), /--runs: an integer from 1 to 100, not 0/);
  t.throws(() => parseProbeOptions(['--only', 'fifo,nope']), /--only: no probe 'nope'/);
  t.throws(() => parseProbeOptions(['--bogus']), /Unknown option '--bogus'/);
  t.ok(PROBES.length >= 15 && new Set(PROBES.map((p) => p.name)).size === PROBES.length, 'probes with distinct names');
});

t.test('median and the table: ratios against the baseline, targets, a wrong exit code marked', async (t) => {
  t.equal(median([3, 1, 2]), 2);
  t.equal(median([4, 1, 3, 2]), 2.5);
  const table = probeTable(500, 80, [
    { name: 'a', what: 'x', expect: 254, statuses: [254, 254], medianMs: 1000, ratio: 2, maxRssMb: 150 },
    { name: 'b', what: 'y', expect: 254, statuses: [255, 254], medianMs: 6000, ratio: 12, maxRssMb: 320 },
  ]);
  t.match(table, 'baseline clink-qual --version: median 500 ms, max RSS 80 MB');
  t.match(table, /\na\s+254 \(254\)\s+1000 ms\s+2\.00\s+150 MB\s+yes\s+yes\n/);
  t.match(table, /\nb\s+255\/254 \(254\) WRONG\s+6000 ms\s+12\.00\s+320 MB\s+NO\s+NO$/);
});

t.test('a short run through npm run bench, beside a rig lock held by another process: no lock needed, figures and RESULT printed', async (t) => {
  const state = mkdtempSync(path.join(os.tmpdir(), 'cq-bench-probes-'));
  t.teardown(() => rmSync(state, { recursive: true, force: true }));
  const sleeper = spawn('sleep', ['120']);
  t.teardown(() => sleeper.kill('SIGKILL'));
  const holder = { pid: sleeper.pid!, procStart: procStat(sleeper.pid!)!.start, command: 'campaign run', startedAt: '2026-12-05T00:00:00.000Z' };
  writeFileSync(path.join(state, 'rig.lock'), JSON.stringify(holder));
  const r = spawnSync(process.execPath, [path.join(repoRoot, 'bench', 'index.ts'), 'input-probes', '--runs', '1', '--only', 'runs-dir-file,engine-proto'], { encoding: 'utf8', env: { ...process.env, CLINK_QUAL_STATE: state, NODE_OPTIONS: '' }, timeout: 180_000 });
  t.equal(r.status, 0, r.stdout + r.stderr);
  t.match(r.stdout, /baseline clink-qual --version: median \d+ ms, max RSS \d+ MB/);
  t.match(r.stdout, /\nruns-dir-file\s+254 \(254\)\s+\d+ ms\s+\d+\.\d\d\s+\d+ MB\s+(yes|NO)\s+(yes|NO)\n/);
  t.match(r.stdout, /\nengine-proto\s+254 \(254\)\s+\d+ ms/);
  t.match(r.stdout, /RESULT input-probes probes=2 runs=1 baseline_ms=\d+ worst_wall_ms=\d+ worst_ratio=\d+\.\d\d worst_rss_mb=\d+ within_targets=(yes|no) exit_codes=ok\n?$/);
  t.same(readRigLock(path.join(state, 'rig.lock')), holder, "the holder's lock is untouched");
});
