import t from 'tap';
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BudgetSpent, ddmin, minimalCampaignYaml, readState, shrink, unitsOf, type CandidateRun, type Outcome } from '../../../campaigns/shrink.ts';
import { loadStoredRun } from '../../../campaigns/replay.ts';
import { parseCampaign } from '../../../campaigns/load.ts';
import { planCampaign } from '../../../campaigns/plan.ts';
import type { PlannedFault } from '../../../lib/evidence.ts';

const FIXTURE = path.join(import.meta.dirname, '../../fixtures/run-fail');

/** A fake predicate: fails when the chosen set contains every element of `needed`. */
const needs = <T>(needed: T[], calls: T[][]) => async (c: T[]): Promise<Outcome> => {
  calls.push(c);
  return needed.every((x) => c.includes(x)) ? 'fail' : 'pass';
};

t.test('ddmin finds the one needed element, and a needed pair, among many', async (t) => {
  const all = Array.from({ length: 16 }, (_, i) => i);
  const calls: number[][] = [];
  const one = await ddmin(all, needs([11], calls));
  t.same(one, { minimal: [11], complete: true });
  t.ok(calls.length <= 2 * Math.ceil(Math.log2(16)) + 2, `logarithmic for one element (${calls.length} tests)`);
  const pair = await ddmin(all, needs([2, 13], []));
  t.same(pair.minimal, [2, 13]);
  const three = await ddmin(all, needs([0, 7, 15], []));
  t.same(three.minimal, [0, 7, 15]);
  t.same((await ddmin(all, needs(all, []))).minimal, all, 'everything needed: nothing removed');
  t.same((await ddmin([5], needs([5], []))).minimal, [5]);
});

t.test('the result is 1-minimal under a predicate that is not monotone', async (t) => {
  // Fails with {1,2} or with {3}: ddmin may return either, but each returned element is needed.
  const pred = async (c: number[]): Promise<Outcome> => ((c.includes(1) && c.includes(2)) || c.includes(3) ? 'fail' : 'pass');
  const r = await ddmin([0, 1, 2, 3, 4, 5], pred);
  t.equal(await pred(r.minimal), 'fail');
  for (const x of r.minimal) t.equal(await pred(r.minimal.filter((y) => y !== x)), 'pass', `removing ${x} passes`);
});

t.test('a spent budget stops ddmin with the smallest failing set seen so far', async (t) => {
  let n = 0;
  const inner = needs([3], []);
  const r = await ddmin([0, 1, 2, 3, 4, 5, 6, 7], async (c) => {
    if (++n > 1) throw new BudgetSpent('budget');
    return inner(c);
  });
  t.same(r, { minimal: [0, 1, 2, 3], complete: false, stoppedBy: 'budget' });
});

t.test('units: a composition is one unit with all its faults', async (t) => {
  const plan: PlannedFault[] = [
    { id: 'f001', kind: 'worker-kill', atS: 1 },
    { id: 'f002', kind: 'store-outage', atS: 5, composition: 'c#1' },
    { id: 'f003', kind: 'partition', atS: 6 },
    { id: 'f004', kind: 'worker-kill', atS: 8, composition: 'c#1' },
  ];
  t.same(unitsOf(plan), [{ id: 'f001', faults: ['f001'] }, { id: 'c#1', faults: ['f002', 'f004'] }, { id: 'f003', faults: ['f003'] }]);
});

/** A fake rig: a candidate FAILs on duplicates when its plan has every fault of `needed`. */
function fakeRig(needed: string[]) {
  const runs = new Map<string, CandidateRun>();
  const seen: { runId: string; faults: string[]; soakS: number; times: number[] }[] = [];
  return {
    runs,
    seen,
    runCandidate: async (runId: string, plan: PlannedFault[], soakS: number): Promise<CandidateRun | null> => {
      seen.push({ runId, faults: plan.map((f) => f.id), soakS, times: plan.map((f) => f.atS) });
      const fails = needed.every((id) => plan.some((f) => f.id === id));
      const r = { verdict: fails ? 'FAIL' : 'PASS', counterValue: fails ? 7 : 0 };
      runs.set(runId, r);
      return r;
    },
    readRun: (runId: string) => runs.get(runId) ?? null,
  };
}

t.test('shrink on a stored run: minimal faults, state, report and a minimal.yaml that plans to the same faults', async (t) => {
  const stored = loadStoredRun(FIXTURE);
  const comp = stored.plan.find((f) => f.composition)!;
  const lone = stored.plan.find((f) => !f.composition && f.kind === 'partition')!;
  const needed = [lone.id, comp.id];
  const rig = fakeRig(needed);
  const dir = path.join(mkdtempSync(path.join(os.tmpdir(), 'cq-shrink-')), 'shrink');
  const lines: string[] = [];
  const st = await shrink({ stored, dir, counter: 'duplicates', maxRuns: 100, maxTimeS: 3600, marginS: 30, newRunId: (k) => `cand-${k}`, runCandidate: rig.runCandidate, readRun: rig.readRun, log: (l) => lines.push(l) });
  const compFaults = stored.plan.filter((f) => f.composition === comp.composition).map((f) => f.id);
  t.same(st.result?.minimal.sort(), [lone.id, comp.composition!].sort());
  t.equal(st.result?.complete, true);
  for (const s of rig.seen) {
    for (const c of compFaults) t.equal(s.faults.includes(c), s.faults.includes(compFaults[0]!), 'a composition is never split');
    t.same(s.times, s.faults.map((id) => stored.plan.find((f) => f.id === id)!.atS), 'faults keep their own times');
    t.ok(s.soakS <= stored.campaign.workload.soakS);
  }
  const onDisk = readState(dir)!;
  t.equal(onDisk.candidates.length, rig.seen.length, 'every candidate recorded');
  t.ok(onDisk.candidates.every((c) => c.runIds.length === 1 && c.verdict && c.outcome));
  const report = readFileSync(path.join(dir, 'report.md'), 'utf8');
  t.match(report, /The failure needs only these faults: /);
  t.match(report, new RegExp(lone.id));
  t.ok(lines.some((l) => /candidate 1 /.test(l)), 'progress lines');
  // minimal.yaml loads and plans to the same kinds, targets, points and times.
  const yamlFile = path.join(dir, 'minimal.yaml');
  const replanned = planCampaign(parseCampaign(readFileSync(yamlFile, 'utf8'), yamlFile));
  const kept = stored.plan.filter((f) => [lone.id, ...compFaults].includes(f.id));
  const shape = (f: PlannedFault) => [f.kind, f.atS, f.target ?? null, f.point ?? null, f.durationS ?? null];
  t.same(replanned.map(shape), kept.map(shape));
});

t.test("minimal.yaml keeps the store the shrunk run ran on (none named: the loader's default, MinIO)", async (t) => {
  const stored = loadStoredRun(FIXTURE);
  const plan = stored.plan.slice(0, 1);
  const onWeed = minimalCampaignYaml({ ...stored, campaign: { ...stored.campaign, store: 'seaweedfs' } }, plan, 60);
  t.match(onWeed, /^store: seaweedfs$/m);
  t.equal(parseCampaign(onWeed, 'm.yaml').store, 'seaweedfs');
  const { store: _s, ...older } = stored.campaign;
  const before = minimalCampaignYaml({ ...stored, campaign: older as typeof stored.campaign }, plan, 60);
  t.notMatch(before, /^store:/m);
  t.equal(parseCampaign(before, 'm.yaml').store, 'minio');
});

t.test('shrink resumes: an interrupted search continues without re-running decided candidates', async (t) => {
  const stored = loadStoredRun(FIXTURE);
  const needed = [stored.plan[3]!.id];
  const dir = path.join(mkdtempSync(path.join(os.tmpdir(), 'cq-shrink-')), 'shrink');
  const base = { stored, dir, counter: 'duplicates', maxTimeS: 3600, marginS: 30, log: () => {} };
  // Reference: one uninterrupted search.
  const ref = fakeRig(needed);
  const refDir = path.join(mkdtempSync(path.join(os.tmpdir(), 'cq-shrink-')), 'shrink');
  const full = await shrink({ ...base, dir: refDir, maxRuns: 100, newRunId: (k) => `r-${k}`, ...ref });
  // Interrupted: the budget allows 2 runs, then a crash mid-candidate, then a resume.
  const rig = fakeRig(needed);
  const first = await shrink({ ...base, maxRuns: 2, newRunId: (k) => `c-${k}`, ...rig });
  t.equal(first.result?.complete, false);
  t.match(first.result?.stoppedBy, /max-runs 2/);
  t.equal(rig.seen.length, 2);
  await t.rejects(shrink({ ...base, maxRuns: 100, newRunId: (k) => `c-${k}`, runCandidate: async () => { throw new Error('killed'); }, readRun: rig.readRun }), /killed/);
  const mid = readState(dir)!;
  const unfinished = mid.candidates.filter((c) => !c.outcome);
  t.equal(unfinished.length, 1, 'the interrupted candidate is recorded with its run id and no verdict');
  const before = rig.seen.length;
  const done = await shrink({ ...base, maxRuns: 100, newRunId: (k) => `c-${k}`, ...rig });
  t.same(done.result?.minimal, full.result?.minimal);
  t.equal(done.result?.complete, true);
  t.equal(rig.seen.length - before + 2, ref.seen.length, 'decided candidates are not run again; the interrupted one is run again');
  t.same(done.candidates.map((c) => c.units), full.candidates.map((c) => c.units), 'the same ddmin path');
  const again = done.candidates.find((c) => c.runIds.length === 2);
  t.ok(again, 'the interrupted candidate has a second run id');
  t.ok(new Set(done.candidates.flatMap((c) => c.runIds)).size === done.candidates.flatMap((c) => c.runIds).length, 'run ids are never reused');
  await t.rejects(shrink({ ...base, counter: 'gaps', maxRuns: 100, newRunId: (k) => `c-${k}`, ...rig }), /counter duplicates/);
});

t.test('the loader takes an empty battery when compositions carry the faults, and refuses a campaign with no fault at all', async (t) => {
  const head = 'name: x\nseed: "s"\nworkload: { rate: 10, partitions: 1, keys: 10, checkpointIntervalS: 5, soakS: 60 }\nschedule: { startAfterS: 12, spacingS: 1, jitterS: 0 }\n';
  const ok = parseCampaign(head + 'faults: []\ncompositions:\n  - { name: m, steps: [{ kind: worker-kill, targets: [worker-2] }, { kind: partition, afterS: 9, targets: [worker-1], durationS: 5 }] }\n', 'ok.yaml');
  t.same(planCampaign(ok).map((f) => [f.kind, f.atS, f.target]), [['worker-kill', 12, 'worker-2'], ['partition', 21, 'worker-1']], 'pinned times and targets');
  t.throws(() => parseCampaign(head + 'faults: []\n', 'none.yaml'), /none\.yaml:5: faults: a campaign schedules at least one fault/);
});

t.test('a one-unit schedule is already minimal: no candidate runs', async (t) => {
  const stored = { ...loadStoredRun(FIXTURE) };
  stored.plan = stored.plan.filter((f) => f.id === 'f002');
  const rig = fakeRig(['f002']);
  const dir = path.join(mkdtempSync(path.join(os.tmpdir(), 'cq-shrink-')), 'shrink');
  const st = await shrink({ stored, dir, counter: 'duplicates', maxRuns: 5, maxTimeS: 60, marginS: 30, newRunId: (k) => `o-${k}`, ...rig, log: () => {} });
  t.same(st.result?.minimal, ['f002']);
  t.equal(rig.seen.length, 0);
  t.match(readFileSync(path.join(dir, 'report.md'), 'utf8'), /single unit, so there was nothing to remove: f002 partition/);
});
