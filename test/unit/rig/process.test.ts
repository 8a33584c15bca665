/**
 * rig/process.ts: a service's PID is its process's only while that process lives. PIDs are
 * reused (pid_max is 32768 on this machine), so a pid file left by a stopped or killed
 * service may come to name another process; the start time recorded beside it (pid.start)
 * tells them apart, and then the service counts as not running: servicePid and listServices
 * see nothing, stopService signals nothing. Run with bash on this machine as the host.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { pidAlive, serviceDir, servicePid, startService, stopService } from '../../../rig/process.ts';
import type { ExecOptions, Remote } from '../../../rig/remote.ts';
import { listServices } from '../../../rig/services.ts';

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'cq-process-'));
t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));

const remote: Remote = {
  host: { name: 'here', address: '127.0.0.1', roles: [], dataDir, ssh: { user: 'root', port: 22 } } as unknown as Remote['host'],
  async exec(cmd: string, opts: ExecOptions = {}) {
    const r = spawnSync('bash', ['-c', cmd], { encoding: 'utf8', input: opts.input, timeout: opts.timeoutMs ?? 60_000 });
    if ((opts.check ?? true) && r.status !== 0) throw new Error(`exit ${r.status}: ${r.stderr}`);
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  },
  async writeFile(p: string, content: string | Buffer, o: { mode?: number } = {}) {
    writeFileSync(p, content, { mode: o.mode ?? 0o644 });
  },
  upload: () => Promise.reject(new Error('not here')),
  readFile: () => Promise.reject(new Error('not here')),
  download: () => Promise.reject(new Error('not here')),
  close: async () => {},
};

/** /proc/PID/stat's 22nd field: the process's start time. */
const startTime = (pid: number) => readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ')[19];

t.test('a started service: its PID and start time recorded; alive, listed, stopped', async (t) => {
  const pid = await startService(remote, { name: 'sleeper', command: 'sleep 60' });
  const dir = serviceDir(remote, 'sleeper');
  t.equal(readFileSync(`${dir}/pid`, 'utf8').trim(), String(pid));
  t.equal(readFileSync(`${dir}/pid.start`, 'utf8').trim(), startTime(pid), 'pid.start holds the start time of that process');
  t.equal(await servicePid(remote, 'sleeper'), pid);
  t.same(await listServices(remote), [{ name: 'sleeper', pid, state: 'running' }]);
  await stopService(remote, 'sleeper', 2000);
  t.equal(await servicePid(remote, 'sleeper'), null, 'stopped: no PID');
  t.same(await listServices(remote), [{ name: 'sleeper', pid: null, state: 'dead' }]);
});

t.test('a PID reused by another process: the service is not running, and that process is left alone', async (t) => {
  const dir = serviceDir(remote, 'sleeper');
  // What a reuse looks like: the pid file names a live process that the service did not start.
  const other = spawn('sleep', ['60'], { stdio: 'ignore' });
  t.teardown(() => other.kill('SIGKILL'));
  const otherPid = other.pid!;
  writeFileSync(`${dir}/pid`, `${otherPid}\n`);
  t.not(readFileSync(`${dir}/pid.start`, 'utf8').trim(), startTime(otherPid), "the recorded start time is the stopped service's");
  t.equal(await servicePid(remote, 'sleeper'), null, 'servicePid: none');
  t.same(await listServices(remote), [{ name: 'sleeper', pid: null, state: 'dead' }], 'listServices: dead');
  await stopService(remote, 'sleeper', 1000);
  t.ok(await pidAlive(remote, otherPid), 'stopService signalled nothing: the other process lives');

  // A pid file from before pid.start existed: taken at its PID alone, as before.
  rmSync(`${dir}/pid.start`);
  t.equal(await servicePid(remote, 'sleeper'), otherPid, 'no pid.start: the PID alone');
  writeFileSync(`${dir}/pid.start`, `${startTime(otherPid)}\n`);
  t.equal(await servicePid(remote, 'sleeper'), otherPid, 'the same start time: the same process');
});
