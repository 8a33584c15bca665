import t from 'tap';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readEngineLogs, zombieTrails, zombieWindows } from '../../../../campaigns/runner/zombies.ts';
import type { ChaosRecord } from '../../../../lib/evidence.ts';

const chaos: ChaosRecord[] = [
  { t: '2026-12-05T05:00:00.000Z', faultId: 'f001', kind: 'process-pause', phase: 'landed', target: 'worker-2', evidence: { host: 'worker-2', role: 'worker', pid: 101, signal: 'SIGSTOP', stateAfter: 'T' } },
  { t: '2026-12-05T05:00:15.000Z', faultId: 'f001', kind: 'process-pause', phase: 'healed', target: 'worker-2', evidence: { host: 'worker-2', pid: 101, signal: 'SIGCONT' } },
  // A paused point: stopped when it recorded the firing, before the harness saw it land.
  { t: '2026-12-05T05:01:02.000Z', faultId: 'f002', kind: 'protocol-point', phase: 'landed', point: 'sink.after-prepare', evidence: { point: 'sink.after-prepare', firedOn: 'worker-1', pid: 202, action: 'pause', stateAfter: 'T', at: '2026-12-05T05:01:01.500Z' } },
  { t: '2026-12-05T05:01:17.000Z', faultId: 'f002', kind: 'protocol-point', phase: 'healed', point: 'sink.after-prepare', evidence: {} },
  // A point that killed its process is no zombie; nor is a pause never healed.
  { t: '2026-12-05T05:02:00.000Z', faultId: 'f003', kind: 'protocol-point', phase: 'landed', point: 'sink.before-commit', evidence: { point: 'sink.before-commit', firedOn: 'worker-3', pid: 303, pidGone: true } },
  { t: '2026-12-05T05:02:01.000Z', faultId: 'f003', kind: 'protocol-point', phase: 'healed', point: 'sink.before-commit', evidence: {} },
  { t: '2026-12-05T05:03:00.000Z', faultId: 'f004', kind: 'process-pause', phase: 'landed', target: 'worker-3', evidence: { host: 'worker-3', pid: 404 } },
];

t.test('zombie windows: pauses and paused points that were healed, with when each stopped and resumed', async (t) => {
  t.same(zombieWindows(chaos), [
    { faultId: 'f001', kind: 'process-pause', host: 'worker-2', pid: 101, stoppedAt: '2026-12-05T05:00:00.000Z', resumedAt: '2026-12-05T05:00:15.000Z' },
    { faultId: 'f002', kind: 'protocol-point', host: 'worker-1', pid: 202, point: 'sink.after-prepare', stoppedAt: '2026-12-05T05:01:01.500Z', resumedAt: '2026-12-05T05:01:17.000Z' },
  ]);
});

t.test('the trails: the engine reads each window over the collected logs; none without a reader', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'zombies-'));
  mkdirSync(path.join(dir, 'worker-2'));
  writeFileSync(path.join(dir, 'worker-2', 'out.log'), '2026-12-05T05:00:16.000Z hello\n');
  writeFileSync(path.join(dir, 'worker-2', 'armed.json'), '{}');
  t.same(readEngineLogs(dir).map((f) => f.path), ['worker-2/out.log'], 'only the .log files');
  const seen: string[] = [];
  const trails = zombieTrails(chaos, dir, (w, logs) => {
    seen.push(`${w.faultId}:${logs.length}`);
    return { ...w, declaredLost: null, replacedBy: null, attempts: [], fences: [], token: { before: null, after: null }, outcome: 'not-lost' };
  });
  t.same(seen, ['f001:1', 'f002:1']);
  t.equal(trails.length, 2);
  t.same(zombieTrails(chaos, dir, undefined), []);
  t.same(zombieTrails([], dir, () => { throw new Error('not called'); }), []);
});
