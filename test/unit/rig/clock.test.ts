/**
 * rig/clock.ts on this machine: the clock file is created at '+0' only when missing, so an
 * engine process restarted while its host's clock is stepped starts on the stepped clock;
 * a process under the preload sees the offset (real libfaketime, skipped when it is not
 * installed). The Remote here runs bash locally in a temporary dataDir: only the transport
 * differs from the rig's SSH.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { clockFile, controlledClockEnv, findFaketime, probeClockOffset, setClockOffset } from '../../../rig/clock.ts';
import { localRemote } from '../../helpers/local-remote.ts';

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'clock-test-'));
t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
const local = localRemote(dataDir);
const host = local.host;

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
