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

// The rig's worker and coordinator hosts (campaigns/runner/phases.ts passes them from the rig).
const engineHosts = new Set(['worker-1', 'worker-2', 'worker-3', 'coordinator']);

t.test('zombie windows: pauses and paused points that were healed, with when each stopped and resumed', async (t) => {
  t.same(zombieWindows(chaos, engineHosts), [
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
  const trails = zombieTrails(chaos, dir, engineHosts, (w, logs) => {
    seen.push(`${w.faultId}:${logs.length}`);
    return { ...w, declaredLost: null, replacedBy: null, attempts: [], fences: [], token: { before: null, after: null }, outcome: 'not-lost' };
  });
  t.same(seen, ['f001:1', 'f002:1']);
  t.equal(trails.length, 2);
  t.same(zombieTrails(chaos, dir, engineHosts, undefined), []);
  t.same(zombieTrails([], dir, engineHosts, () => { throw new Error('not called'); }), []);
});

// A partition as chaos.jsonl holds it: f001 of the flink-qual03-seaweedfs run of 2026-12-05
// (worker-3 cut off from the coordinator for 20 s), records copied whole. Its landing
// evidence names the host and the undo timer's PID (deadMan.pid), not the TaskManager's.
const partitionF001: ChaosRecord[] = [
  { t: '2026-12-05T06:54:30.026Z', faultId: 'f001', kind: 'partition', phase: 'planned', target: 'worker-3', detail: 'at +113s' },
  { t: '2026-12-05T06:56:27.149Z', faultId: 'f001', kind: 'partition', phase: 'landed', target: 'worker-3', evidence: { host: 'worker-3', peerHost: 'coordinator', faultId: 'f001', peer: '10.231.0.20', aToB: false, bToA: false, deadMan: { host: 'worker-3', pid: 14332, afterS: 50, undo: 'remove the iptables rules tagged clink-qual:f001' } } },
  { t: '2026-12-05T06:56:47.414Z', faultId: 'f001', kind: 'partition', phase: 'healed', target: 'worker-3', evidence: { host: 'worker-3', peerHost: 'coordinator', faultId: 'f001', peer: '10.231.0.20', aToB: true, bToA: true, removedRules: 2 } },
  { t: '2026-12-05T06:57:02.756Z', faultId: 'f001', kind: 'partition', phase: 'recovered', target: 'worker-3', recoveryS: 14.1, evidence: { checkpointAt: '2026-12-05T06:57:01.561Z' } },
];

t.test('a partition of an engine host that healed: a window from its landing to its heal, with no PID (the deadMan PID is not the engine\'s)', async (t) => {
  const w = zombieWindows(partitionF001, engineHosts);
  t.same(w, [{ faultId: 'f001', kind: 'partition', host: 'worker-3', stoppedAt: '2026-12-05T06:56:27.149Z', resumedAt: '2026-12-05T06:56:47.414Z' }]);
  t.notOk('pid' in w[0]!, 'no PID is made up');
});

t.test('a partition whose landing says when the rules went in (cutAt): the window starts there, before the probes that showed it', async (t) => {
  const withCut = partitionF001.map((c) => (c.phase === 'landed' ? { ...c, evidence: { ...c.evidence, cutAt: '2026-12-05T06:56:23.020Z' } } : c));
  t.equal(zombieWindows(withCut, engineHosts)[0]?.stoppedAt, '2026-12-05T06:56:23.020Z');
});

t.test('no partition window for a host that runs no engine process, for a cut never healed, or for an unnamed host', async (t) => {
  // The same records, moved to a broker host (partitions may target brokers and the store).
  const onBroker = partitionF001.map((c) => ({ ...c, target: 'broker-2', ...(c.evidence ? { evidence: { ...c.evidence, host: 'broker-2' } } : {}) }));
  t.same(zombieWindows(onBroker, engineHosts), []);
  t.same(zombieWindows(partitionF001.filter((c) => c.phase !== 'healed'), engineHosts), []);
  t.same(zombieWindows(partitionF001, new Set(['worker-1'])), [], 'only the hosts given as the engine\'s');
  t.same(zombieWindows(partitionF001.map((c) => (c.phase === 'landed' ? { ...c, evidence: {} } : c)), engineHosts), []);
});
