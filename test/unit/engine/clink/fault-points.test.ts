import t from 'tap';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync, utimesSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FaultPoints } from '../../../../engine/clink/fault-points.ts';

t.test('an armed point fires its count, records durably, then disarms', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'clink-fp-'));
  const fp = new FaultPoints(dir, 'worker-2', 'worker');
  let kills = 0;
  fp.kill = () => void kills++;
  t.notOk(fp.reach('sink.before-commit'), 'nothing armed: no file');
  mkdirSync(path.join(dir, 'faults'), { recursive: true });
  writeFileSync(fp.armedFile, JSON.stringify({ 'sink.before-commit': 2, 'sink.after-prepare': 1 }));
  t.notOk(fp.reach('sink.before-prepare'), 'another point is not armed');
  t.ok(fp.reach('sink.before-commit', { checkpointId: 7, epoch: 3 }));
  t.equal(kills, 1);
  t.same(JSON.parse(readFileSync(fp.armedFile, 'utf8')), { 'sink.before-commit': 1, 'sink.after-prepare': 1 });
  t.ok(fp.reach('sink.before-commit'));
  t.notOk(fp.reach('sink.before-commit'), 'count used up');
  t.equal(kills, 2);
  const fired = readFileSync(fp.firedFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  t.equal(fired.length, 2);
  t.match(fired[0], { point: 'sink.before-commit', host: 'worker-2', role: 'worker', pid: process.pid, checkpointId: 7, epoch: 3 });
  t.ok(!Number.isNaN(Date.parse(fired[0].at)));
});

t.test('re-arming is seen even within the same second (mtime+size+inode cache key)', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'clink-fp-'));
  const fp = new FaultPoints(dir, 'coordinator', 'coordinator');
  fp.kill = () => undefined;
  mkdirSync(path.join(dir, 'faults'), { recursive: true });
  writeFileSync(fp.armedFile, '{}');
  t.notOk(fp.isArmed('coordinator.before-complete-record'));
  const tmp = `${fp.armedFile}.x`;
  writeFileSync(tmp, JSON.stringify({ 'coordinator.before-complete-record': 1 }));
  const now = new Date();
  utimesSync(tmp, now, now);
  // Replace the file by rename, as the plug does.
  (await import('node:fs')).renameSync(tmp, fp.armedFile);
  t.ok(fp.isArmed('coordinator.before-complete-record'));
});

t.test('a point armed to pause stops the process there, records action pause, and goes on once continued', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'clink-fp-'));
  const fp = new FaultPoints(dir, 'worker-1', 'worker');
  let kills = 0;
  let stops = 0;
  const logged: string[] = [];
  fp.kill = () => void kills++;
  fp.stop = () => void stops++;
  fp.log = (l) => void logged.push(l);
  mkdirSync(path.join(dir, 'faults'), { recursive: true });
  writeFileSync(fp.armedFile, JSON.stringify({ 'pause@sink.after-prepare': 1 }));
  t.ok(fp.isArmed('sink.after-prepare'), 'a pause arms the point');
  t.notOk(fp.reach('sink.after-prepare', { checkpointId: 12, epoch: 4 }), 'a pause returns: the caller goes on from the point');
  t.equal(stops, 1, 'stopped itself once');
  t.equal(kills, 0, 'never killed');
  t.same(JSON.parse(readFileSync(fp.armedFile, 'utf8')), {}, 'the pause count is used up');
  const fired = JSON.parse(readFileSync(fp.firedFile, 'utf8').trim());
  t.match(fired, { point: 'sink.after-prepare', host: 'worker-1', pid: process.pid, checkpointId: 12, epoch: 4, action: 'pause' });
  t.match(logged[0], /sink\.after-prepare: pid \d+ stopping itself \(SIGSTOP\) at epoch 4, checkpoint 12/);
  t.match(logged[1], /sink\.after-prepare: pid \d+ resumed after \d+ ms stopped at epoch 4, checkpoint 12; going on from the point/);
  t.notOk(fp.reach('sink.after-prepare'), 'used up: nothing happens');
  t.equal(stops, 1);
});

t.test('a kill armed beside a pause of the same point fires first', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'clink-fp-'));
  const fp = new FaultPoints(dir, 'worker-1', 'worker');
  let kills = 0;
  let stops = 0;
  fp.kill = () => void kills++;
  fp.stop = () => void stops++;
  fp.log = () => undefined;
  mkdirSync(path.join(dir, 'faults'), { recursive: true });
  writeFileSync(fp.armedFile, JSON.stringify({ 'sink.before-commit': 1, 'pause@sink.before-commit': 1 }));
  t.ok(fp.reach('sink.before-commit'));
  t.equal(kills, 1);
  t.notOk(fp.reach('sink.before-commit'));
  t.equal(stops, 1);
});

t.test('beforeKill: a point armed to kill waits until nothing counted is in flight, then fires at once; a pause and an unarmed point never wait', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'clink-fp-'));
  const fp = new FaultPoints(dir, 'worker-1', 'worker');
  let busy = 0;
  let release: () => void = () => undefined;
  const logged: string[] = [];
  const kills: number[] = [];
  fp.kill = () => void kills.push(busy);
  fp.stop = () => undefined;
  fp.log = (l) => void logged.push(l);
  fp.beforeKill = { what: 'completion(s)', busy: () => busy, settled: () => new Promise<void>((r) => (release = r)), maxWaitMs: 60_000 };
  mkdirSync(path.join(dir, 'faults'), { recursive: true });
  busy = 1;
  await fp.reachAsync('sink.before-commit');
  t.same(kills, [], 'not armed: no wait, no kill');
  writeFileSync(fp.armedFile, JSON.stringify({ 'pause@sink.after-prepare': 1 }));
  await fp.reachAsync('sink.after-prepare');
  t.same(kills, [], 'a pause goes on without waiting for the completion');
  t.notOk(logged.some((l) => /waited/.test(l)));
  writeFileSync(fp.armedFile, JSON.stringify({ 'sink.after-commit': 1 }));
  void fp.reachAsync('sink.after-commit', { checkpointId: 29, epoch: 18 });
  await new Promise((r) => setTimeout(r, 20));
  t.same(kills, [], 'armed to kill, one completion in flight: waiting');
  t.equal(readFileSync(fp.armedFile, 'utf8'), JSON.stringify({ 'sink.after-commit': 1 }), 'not fired yet: still armed, nothing recorded');
  // The first completion ends but another has started meanwhile: the point waits for it too.
  release();
  await new Promise((r) => setTimeout(r, 20));
  t.same(kills, [], 'still one in flight (busy() is read again after each settle)');
  busy = 0;
  release();
  await new Promise((r) => setTimeout(r, 20));
  t.same(kills, [0], 'fired once none was in flight, with none in flight at the kill');
  t.match(logged.at(-1), /clink fault point sink\.after-commit: pid \d+ waited \d+ ms for 1 completion\(s\) in flight in this process before its kill$/);
  t.match(JSON.parse(readFileSync(fp.firedFile, 'utf8').trim().split('\n').at(-1)!), { point: 'sink.after-commit', checkpointId: 29, epoch: 18 });
});

t.test('beforeKill: the wait is bounded; the kill goes ahead after maxWaitMs and says what was left in flight', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'clink-fp-'));
  const fp = new FaultPoints(dir, 'worker-1', 'worker');
  const kills: number[] = [];
  const logged: string[] = [];
  fp.kill = () => void kills.push(1);
  fp.log = (l) => void logged.push(l);
  fp.beforeKill = { what: 'completion(s)', busy: () => 2, settled: () => new Promise<void>(() => undefined), maxWaitMs: 50 };
  mkdirSync(path.join(dir, 'faults'), { recursive: true });
  writeFileSync(fp.armedFile, JSON.stringify({ 'sink.before-prepare': 1 }));
  const t0 = Date.now();
  void fp.reachAsync('sink.before-prepare');
  await new Promise((r) => setTimeout(r, 300));
  t.same(kills, [1], 'killed after the bound');
  t.ok(Date.now() - t0 >= 50);
  t.match(logged.at(-1), /waited \d+ ms for 2 completion\(s\) in flight in this process before its kill; killing with 2 still in flight \(the wait is at most 50 ms\)$/);
});
