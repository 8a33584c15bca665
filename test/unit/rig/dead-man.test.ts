/**
 * Dead-man timers (rig/dead-man.ts), run for real on this machine through the local test
 * Remote (bash -c here instead of over SSH): a timer fires its undo by itself after its
 * delay, outliving the command that set it; a disarmed one never fires and leaves no
 * process; and each undo script does what it says.
 */
import t from 'tap';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { armCommand, armDeadMan, deadManMarker, disarmDeadMan, undoBallast, undoClockStep, undoPause, undoRules } from '../../../rig/dead-man.ts';
import { localRemote } from '../../helpers/local-remote.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const dir = mkdtempSync(path.join(os.tmpdir(), 'cq-dead-man-'));
const remote = localRemote(dir);
// Fault ids unique to this test process, so that a parallel test file's timers are never touched.
const id = (n: string) => `t${process.pid}-${n}`;
const timers = (faultId: string) => Number(spawnSync('bash', ['-c', `pgrep -f -- '[c]${deadManMarker(faultId).slice(1)}' | wc -l`], { encoding: 'utf8' }).stdout.trim());

t.teardown(async () => {
  for (const n of ['fires', 'stopped', 'a', 'b']) await disarmDeadMan(remote, id(n));
});

t.test('a timer undoes the fault by itself after its delay, and is gone afterwards', async (t) => {
  const mark = path.join(dir, 'fired');
  const armed = await armDeadMan(remote, id('fires'), 1, { host: 'local', script: `touch ${mark}`, what: 'touch a file' });
  t.ok(armed.pid > 1, 'its PID is recorded');
  t.equal(armed.afterS, 1);
  t.equal(timers(id('fires')), 1, 'the timer runs, detached from the command that set it');
  t.notOk(existsSync(mark), 'nothing undone before the delay');
  for (let i = 0; i < 50 && !existsSync(mark); i++) await sleep(100);
  t.ok(existsSync(mark), 'the undo ran');
  await sleep(200);
  t.equal(timers(id('fires')), 0, 'and the timer is gone');
});

t.test('a disarmed timer never fires and leaves no process, its sleep included', async (t) => {
  const mark = path.join(dir, 'never');
  const armed = await armDeadMan(remote, id('stopped'), 2, { host: 'local', script: `touch ${mark}`, what: 'touch a file' });
  await sleep(200);
  const child = Number(spawnSync('bash', ['-c', `pgrep -P ${armed.pid}`], { encoding: 'utf8' }).stdout.trim());
  t.ok(child > 1 && existsSync(`/proc/${child}`), "the timer's sleep runs");
  t.equal(await disarmDeadMan(remote, id('stopped')), 1, 'one timer stopped');
  await sleep(3000);
  t.notOk(existsSync(mark), 'the undo never ran');
  t.equal(timers(id('stopped')), 0);
  t.notOk(existsSync(`/proc/${child}`), 'its sleep was stopped with it');
  t.equal(await disarmDeadMan(remote, id('stopped')), 0, 'disarming again finds nothing');
});

t.test("disarming one fault's timer leaves the others", async (t) => {
  await armDeadMan(remote, id('a'), 60, { host: 'local', script: 'true', what: 'nothing' });
  await armDeadMan(remote, id('b'), 60, { host: 'local', script: 'true', what: 'nothing' });
  t.equal(await disarmDeadMan(remote, id('a')), 1);
  t.equal(timers(id('b')), 1, "b's timer still runs");
  t.equal(await disarmDeadMan(remote, id('b')), 1);
});

t.test('the undo scripts', async (t) => {
  const clock = path.join(dir, 'faketime');
  writeFileSync(clock, '+3600s\n');
  spawnSync('bash', ['-c', undoClockStep('local', clock).script]);
  t.equal(readFileSync(clock, 'utf8').trim(), '+0', 'the clock file back to +0');

  writeFileSync(path.join(dir, '.clink-qual-ballast-f007'), 'x');
  writeFileSync(path.join(dir, '.clink-qual-ballast-f007.1'), 'x');
  writeFileSync(path.join(dir, '.clink-qual-ballast-f008'), 'x');
  spawnSync('bash', ['-c', undoBallast('local', dir, '.clink-qual-ballast', 'f007').script]);
  t.notOk(existsSync(path.join(dir, '.clink-qual-ballast-f007')), "the fault's ballast is gone");
  t.notOk(existsSync(path.join(dir, '.clink-qual-ballast-f007.1')));
  t.ok(existsSync(path.join(dir, '.clink-qual-ballast-f008')), "another fault's is left");

  const child = spawn('sleep', ['30'], { stdio: 'ignore' });
  t.teardown(() => child.kill('SIGKILL'));
  await sleep(100);
  process.kill(child.pid!, 'SIGSTOP');
  await sleep(100);
  const state = () => readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[0];
  t.equal(state(), 'T', 'stopped');
  spawnSync('bash', ['-c', undoPause('local', child.pid!).script]);
  await sleep(100);
  t.not(state(), 'T', 'running again after the undo');
  t.equal(spawnSync('bash', ['-c', undoPause('local', 999_999_999 % 4_000_000 + 4_000_000).script]).status, 0, 'a PID that is gone is no error');

  t.match(undoRules('worker-1', 'f003').script, /clink-qual:f003\("\| \|\$\)/, "only that fault's tagged rules");
  t.throws(() => undoPause('local', 1), 'never PID 1');
});

t.test('bad ids and delays are refused before anything runs', async (t) => {
  t.throws(() => armCommand('f001; rm -rf /', 10, 'true'));
  t.throws(() => armCommand('f001', 0, 'true'));
  t.throws(() => armCommand('f001', Number.NaN, 'true'));
  t.match(armCommand('f001', 10.2, 'true'), /^setsid bash -c ': clink-qual-deadman:f001; sleep 11; true' /);
});
