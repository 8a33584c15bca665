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
