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
