/**
 * rig/clock.ts on this machine: the clock file is created at '+0' only when missing, so an
 * engine process restarted while its host's clock is stepped starts on the stepped clock;
 * a process under the preload sees the offset (real libfaketime, skipped when it is not
 * installed). The Remote here runs bash locally in a temporary dataDir: only the transport
 * differs from the rig's SSH.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { clockFile, controlledClockEnv, findFaketime, probeClockOffset, setClockOffset } from '../../../rig/clock.ts';
import type { ExecResult, Remote } from '../../../rig/remote.ts';
import type { HostSpec } from '../../../rig/types.ts';

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'clock-test-'));
t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
const host = { name: 'local', address: '127.0.0.1', roles: ['worker'], ssh: {}, dataDir } as unknown as HostSpec;
const unused = () => Promise.reject(new Error('not used by rig/clock.ts'));
const local: Remote = {
  host,
  exec: (cmd, opts) =>
    new Promise<ExecResult>((resolve, reject) =>
      execFile('bash', ['-c', cmd], { timeout: opts?.timeoutMs ?? 60_000 }, (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        if (code !== 0 && opts?.check !== false) reject(new Error(`exit ${code}: ${stderr}`));
        else resolve({ code, stdout, stderr });
      }),
    ),
  upload: unused,
  writeFile: unused,
  readFile: unused,
  download: unused,
  close: async () => {},
};

const lib = await findFaketime(local);

t.test('the clock file: created at +0 when missing, left alone when stepped', { skip: lib ? false : 'libfaketime is not installed here' }, async (t) => {
  const env = await controlledClockEnv(local);
  t.equal(env.FAKETIME_TIMESTAMP_FILE, clockFile(host));
  t.equal(env.LD_PRELOAD, lib);
  t.equal(readFileSync(clockFile(host), 'utf8').trim(), '+0', 'created at +0');
  await setClockOffset(local, -120);
  await controlledClockEnv(local);
  t.equal(readFileSync(clockFile(host), 'utf8').trim(), '-120s', 'a start during a step keeps the step');
  const probe = await probeClockOffset(local);
  t.ok(Math.abs(probe.offsetS + 120) <= 2, `a process under the preload is 120 s behind (${probe.offsetS} s)`);
  await setClockOffset(local, 0);
  await controlledClockEnv(local);
  t.equal(readFileSync(clockFile(host), 'utf8').trim(), '+0', 'back at +0 after the heal');
  t.ok(Math.abs((await probeClockOffset(local)).offsetS) <= 2, 'and the process clock with it');
});
