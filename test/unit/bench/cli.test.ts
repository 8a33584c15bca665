/**
 * The benchmarks and the rig lock, through `npm run bench` (node bench/index.ts), with no rig:
 * the state dir is a temporary one (CLINK_QUAL_STATE) that holds no rig state, so a benchmark
 * that went past the lock would stop at "no rig is up" instead of touching a rig.
 *  - while a live unrelated process holds the lock, each benchmark on the rig exits 2 naming
 *    the holder, before it reads the rig's state; --help still answers;
 *  - while a benchmark runs (held at its first rig access: a rig.json that is a FIFO), the
 *    lock names it and a second rig user is refused naming it; its exit releases the lock.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, constants, existsSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { repoRoot } from '../../../lib/paths.ts';
import { acquireRigLock, procStat, readRigLock, type RigLockHolder } from '../../../rig/lock.ts';

const bench = path.join(repoRoot, 'bench', 'index.ts');
const tmp = mkdtempSync(path.join(os.tmpdir(), 'cq-bench-lock-'));
t.teardown(() => rmSync(tmp, { recursive: true, force: true }));

/** An environment whose state dir is `stateDir` and whose store is the rig's (no external endpoint). */
function envFor(stateDir: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, CLINK_QUAL_STATE: stateDir, NODE_OPTIONS: '' };
  delete env.CLINK_QUAL_S3_ENDPOINT;
  return env;
}
const exited = (p: ChildProcess) => new Promise<number | null>((r) => (p.exitCode !== null || p.signalCode !== null ? r(p.exitCode) : p.on('exit', (code) => r(code))));

t.test('another holder has the rig: each benchmark on the rig exits 2 naming it, before any rig access', async (t) => {
  const stateDir = path.join(tmp, 'held');
  const sleeper = spawn('sleep', ['60']);
  t.teardown(() => sleeper.kill('SIGKILL'));
  const holder: RigLockHolder = { pid: sleeper.pid!, procStart: procStat(sleeper.pid!)!.start, command: 'campaign run', runId: 'qual03-held', startedAt: '2026-12-05T00:00:00.000Z' };
  spawnSync('mkdir', ['-p', stateDir]);
  const lockFile = path.join(stateDir, 'rig.lock');
  writeFileSync(lockFile, JSON.stringify(holder) + '\n');
  for (const name of ['engine', 'engine-sustained', 'scale', 'oracle']) {
    const r = spawnSync(process.execPath, [bench, name], { encoding: 'utf8', env: envFor(stateDir), timeout: 60_000 });
    t.equal(r.status, 2, `${name}: exit 2\n${r.stdout}${r.stderr}`);
    t.match(r.stderr, new RegExp(`bench ${name}: the rig is in use by pid ${sleeper.pid} \\(campaign run, run qual03-held, since 2026-12-05T00:00:00.000Z\\)`), `${name}: names the holder`);
    t.notMatch(r.stdout + r.stderr, /no rig is up/, `${name}: refused before it read the rig's state`);
    t.same(readRigLock(lockFile), holder, `${name}: the holder's lock is untouched`);
  }
  const help = spawnSync(process.execPath, [bench, 'engine', '--help'], { encoding: 'utf8', env: envFor(stateDir), timeout: 60_000 });
  t.equal(help.status, 0, '--help needs no lock');
  t.match(help.stdout, /Usage: npm run bench -- engine \[options\][\s\S]*Takes the rig lock/);
  const list = spawnSync(process.execPath, [bench, '--help'], { encoding: 'utf8', env: envFor(stateDir), timeout: 60_000 });
  t.match(list.stdout, /engine\s+Exactly-once[^\n]*\n\s+\(rig, takes the rig lock\)/, 'the listing says which benchmarks take the lock');
});

t.test('a running benchmark holds the lock: a second rig user is refused naming it; its exit releases it', async (t) => {
  const stateDir = path.join(tmp, 'running');
  spawnSync('mkdir', ['-p', stateDir]);
  const fifo = path.join(stateDir, 'rig.json'); // rig/state.ts's rigStatePath() under this state dir
  t.equal(spawnSync('mkfifo', [fifo]).status, 0, 'mkfifo');
  const lockFile = path.join(stateDir, 'rig.lock');
  // Its own process group: bench/index.ts runs the benchmark as a child, and a kill must reach
  // both (a benchmark left blocked opening the FIFO would hold the test's output open).
  const proc = spawn(process.execPath, [bench, 'engine', '--events', '10'], { env: envFor(stateDir), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let out = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const killAll = (): void => {
    try {
      process.kill(-proc.pid!, 'SIGKILL');
    } catch {
      /* already gone */
    }
  };
  t.teardown(killAll);
  const until = Date.now() + 30_000;
  while (!readRigLock(lockFile) && Date.now() < until && proc.exitCode === null) await new Promise((r) => setTimeout(r, 50));
  const h = readRigLock(lockFile);
  t.match(h, { command: 'bench engine' }, `the benchmark holds the lock\n${out}`);
  t.not(h?.pid, process.pid, 'held by the benchmark, not by this test');
  t.throws(() => acquireRigLock('campaign run', { file: lockFile }), new RegExp(`the rig is in use by pid ${h?.pid} \\(bench engine, since `), 'a second rig user is refused, naming the benchmark');
  // Let the benchmark read its (unusable) rig state: it fails and exits. The lock comes before
  // the state is read, so wait (up to 30 s) for the benchmark to open the FIFO: until it does,
  // a non-blocking open for writing fails (ENXIO) instead of hanging.
  let fd: number | undefined;
  let lastErr: unknown;
  const readerBy = Date.now() + 30_000;
  while (fd === undefined && Date.now() < readerBy && proc.exitCode === null) {
    try {
      fd = openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
    } catch (err) {
      lastErr = err;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  if (fd === undefined) {
    t.fail(`the benchmark never read its rig state: ${(lastErr as Error | undefined)?.message ?? 'it exited'}\n${out}`);
    killAll();
  } else {
    writeSync(fd, '{}');
    closeSync(fd);
  }
  const code = await exited(proc);
  t.not(code, 0, `the benchmark ended on the unusable state\n${out}`);
  t.notOk(existsSync(lockFile), 'its exit released the lock');
});
