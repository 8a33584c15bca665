/**
 * rig/lock.ts with real processes: a child holding the lock refuses a second taker (naming
 * it), releases on SIGTERM; a dead holder's lock, and a live pid whose start time is not the
 * holder's (a reused pid), are recovered; a child of the holder shares its lock.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import t from 'tap';
import { repoRoot } from '../../../lib/paths.ts';
import { acquireRigLock, procStat, readRigLock, rigHolder, type RigLockHolder } from '../../../rig/lock.ts';

const lockModule = pathToFileURL(path.join(repoRoot, 'rig', 'lock.ts')).href;
/** Children without tap's process hooks (NODE_OPTIONS), whose own signal handlers would keep a signalled child alive. */
const env = { ...process.env, NODE_OPTIONS: '' };
const tmp = mkdtempSync(path.join(os.tmpdir(), 'cq-rig-lock-'));
t.teardown(() => rmSync(tmp, { recursive: true, force: true }));

/** A node child running `code` with acquireRigLock imported; resolves once it printed `ready`. */
function child(code: string): Promise<{ proc: ChildProcess; out: () => string }> {
  const proc = spawn(process.execPath, ['--input-type=module', '-e', `import { acquireRigLock } from ${JSON.stringify(lockModule)};\n${code}`], { stdio: ['ignore', 'pipe', 'pipe'], env });
  let out = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`child never ready: ${out}`)), 30_000);
    proc.stdout!.on('data', () => {
      if (out.includes('ready')) {
        clearTimeout(timer);
        resolve({ proc, out: () => out });
      }
    });
    proc.on('exit', () => {
      clearTimeout(timer);
      if (!out.includes('ready')) reject(new Error(`child exited: ${out}`));
    });
  });
}
const exited = (p: ChildProcess) => new Promise<void>((r) => (p.exitCode !== null || p.signalCode !== null ? r() : p.on('exit', () => r())));

t.test('a child holds the lock: a second taker is refused, naming it; SIGTERM releases it', async (t) => {
  const file = path.join(tmp, 'a.lock');
  // like a command that handles SIGTERM itself (campaign run heals its faults, then exits): 'exit' releases
  const c = await child(`acquireRigLock('campaign run', { file: ${JSON.stringify(file)}, runId: 'qual03-x' }); process.on('SIGTERM', () => process.exit(143)); console.log('ready'); setInterval(() => {}, 1000);`);
  t.teardown(() => c.proc.kill('SIGKILL'));
  const h = readRigLock(file)!;
  t.equal(h.pid, c.proc.pid);
  t.equal(h.procStart, procStat(c.proc.pid!)!.start, "the holder's start time");
  t.match(h, { command: 'campaign run', runId: 'qual03-x' });
  t.same(rigHolder(file), h, 'the live holder');
  t.throws(() => acquireRigLock('rig up', { file }), new RegExp(`the rig is in use by pid ${c.proc.pid} \\(campaign run, run qual03-x, since `));
  c.proc.kill('SIGTERM');
  await exited(c.proc);
  t.equal(c.proc.exitCode, 143, 'the child ended on the signal');
  t.notOk(existsSync(file), 'released when it exited');
  const mine = acquireRigLock('rig up', { file });
  t.equal(mine.holder.pid, process.pid);
  mine.release();
  t.notOk(existsSync(file), 'released');
});

t.test("a SIGKILLed holder's lock is recovered (its pid is dead)", async (t) => {
  const file = path.join(tmp, 'b.lock');
  const c = await child(`acquireRigLock('smoke', { file: ${JSON.stringify(file)} }); console.log('ready'); setInterval(() => {}, 1000);`);
  c.proc.kill('SIGKILL');
  await exited(c.proc);
  t.equal(readRigLock(file)?.pid, c.proc.pid, 'the lock outlives a SIGKILL');
  t.equal(rigHolder(file), undefined, 'but holds nothing');
  const logs: string[] = [];
  const l = acquireRigLock('rig down', { file, log: (x) => logs.push(x) });
  t.equal(readRigLock(file)?.pid, process.pid);
  t.match(logs.join('\n'), new RegExp(`recovered a stale rig lock of pid ${c.proc.pid} \\(smoke, since `));
  l.release();
});

t.test("a live pid that started at another time is not the holder (pid reuse)", async (t) => {
  const file = path.join(tmp, 'c.lock');
  const sleeper = spawn('sleep', ['30']);
  t.teardown(() => sleeper.kill('SIGKILL'));
  const real = procStat(sleeper.pid!)!;
  const forged: RigLockHolder = { pid: sleeper.pid!, procStart: real.start + 1, command: 'campaign run', startedAt: '2026-01-01T00:00:00.000Z' };
  writeFileSync(file, JSON.stringify(forged));
  t.equal(rigHolder(file), undefined, 'another start time: stale');
  writeFileSync(file, JSON.stringify({ ...forged, procStart: real.start }));
  t.equal(rigHolder(file)?.pid, sleeper.pid, 'the same start time: the holder');
  t.throws(() => acquireRigLock('smoke', { file }), /in use by pid/);
  writeFileSync(file, JSON.stringify(forged));
  const l = acquireRigLock('smoke', { file });
  t.equal(readRigLock(file)?.pid, process.pid, 'recovered');
  l.release();
});

t.test("a child of the holder runs under its lock (smoke's campaign, the test runner's rig tests)", async (t) => {
  const file = path.join(tmp, 'd.lock');
  const l = acquireRigLock('test', { file });
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', `import { acquireRigLock } from ${JSON.stringify(lockModule)};\nconst l = acquireRigLock('campaign run', { file: ${JSON.stringify(file)} }); console.log(JSON.stringify({ own: l.own, pid: l.holder.pid })); l.release();`], { encoding: 'utf8', env });
  t.equal(r.status, 0, r.stderr);
  t.same(JSON.parse(r.stdout), { own: false, pid: process.pid }, "shares the parent's lock");
  t.equal(readRigLock(file)?.pid, process.pid, "the child's release leaves the parent's lock");
  l.setRunId('quick-1');
  t.equal(readRigLock(file)?.runId, 'quick-1', 'the run id is recorded once known');
  l.release();
  t.notOk(existsSync(file));
  t.notOk(existsSync(`${file}.${process.pid}.tmp`), 'no temporary file left');
});
