/**
 * Per-mutant schedules (campaigns/per-mutant.ts, the loader's perMutant checks) and
 * campaigns/mutants.yaml, the campaign that gives every Clink mutant a short schedule of
 * its own while the control runs the base schedule (issue 16).
 */
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseCampaign } from '../../../campaigns/load.ts';
import { applyOverrides, describeOverrides } from '../../../campaigns/overrides.ts';
import { campaignForMutant, exposable, loadForEngine, mutantSchedule, scheduledKinds } from '../../../campaigns/per-mutant.ts';
import { formatPlanJson, planCampaign, totalsByKind } from '../../../campaigns/plan.ts';
import { loadStoredRun, replaySchedule } from '../../../campaigns/replay.ts';
import { loadForRun } from '../../../campaigns/runner/run.ts';
import { MANDATORY_FAULT_POINTS, type ResolvedCampaign } from '../../../campaigns/types.ts';
import { CLINK_MUTANTS, CLINK_MUTANT_NAMES } from '../../../engine/clink/mutants/index.ts';
import { problems } from '../../helpers/campaign-problems.ts';
import { repoRoot } from '../../../lib/paths.ts';
import { loadEngine } from '../../../engine/index.ts';
import type { QualError } from '../../../lib/errors.ts';
import { EVIDENCE } from '../../../lib/run-store.ts';

process.chdir(repoRoot);
const FILE = 'campaigns/mutants.yaml';
const cli = path.join(repoRoot, 'bin', 'clink-qual.ts');


const points = (c: Pick<ResolvedCampaign, 'faults' | 'compositions'>) =>
  new Set([...c.faults.flatMap((f) => f.points ?? []), ...c.compositions.flatMap((x) => x.steps.flatMap((s) => (s.point ? [s.point] : [])))]);

const slots = (c: Pick<ResolvedCampaign, 'faults' | 'compositions'>) =>
  c.faults.reduce((n, f) => n + f.count * (f.kind === 'protocol-point' ? (f.points?.length ?? 0) : 1), 0) + c.compositions.reduce((n, x) => n + x.count, 0);

/**
 * What each mutant's own schedule must hold: the kinds on its timeline and how many slots.
 * A change to mutants.yaml that drops the fault a mechanism needs fails here.
 */
const EXPECTED: Record<(typeof CLINK_MUTANT_NAMES)[number], { kinds: string[]; slots: number; points?: string[]; compositions?: string[] }> = {
  'commit-at-prepare': { kinds: ['protocol-point'], slots: 2, points: ['sink.after-prepare', 'coordinator.before-complete-record'] },
  'nosuchupload-rewrite': { kinds: ['protocol-point', 'worker-kill'], slots: 2, points: ['sink.after-commit'] },
  'drop-restored-handles': { kinds: ['protocol-point'], slots: 3, points: ['sink.before-commit', 'coordinator.after-complete-record'] },
  'abort-on-unknown': { kinds: ['protocol-point', 'store-outage'], slots: 2, compositions: ['store-down-during-coordinator-recovery'] },
  'keys-reused': { kinds: ['worker-kill'], slots: 2 },
  'zero-byte-commit': { kinds: ['worker-kill'], slots: 1 },
  'no-fencing': { kinds: ['partition'], slots: 2 },
  'offsets-off-by-one': { kinds: ['worker-kill'], slots: 2 },
  'stall-flush': { kinds: ['process-pause'], slots: 3 },
  'latest-by-wallclock': { kinds: ['clock-step', 'worker-kill'], slots: 2, compositions: ['clock-back-during-restore'] },
  'torn-log-append': { kinds: ['disk-full', 'coordinator-kill'], slots: 2, compositions: ['full-disk-then-coordinator-restart'] },
  'trust-existing-object': { kinds: ['store-tamper', 'worker-kill'], slots: 2, compositions: ['foreign-object-at-recommit'] },
  'unchecked-log': { kinds: ['state-corruption'], slots: 2 },
};

/**
 * Mutants whose exposure is not a fault but the settle's idle checkpoints, which every run
 * ends with: their soak only has to hold the one fault a campaign needs, and its recovery.
 */
const EXPOSED_BY_THE_SETTLE = ['zero-byte-commit'];

t.test('campaigns/mutants.yaml: every mutant has its own schedule, resolved for its run', async (t) => {
  const { campaign: c, engine } = loadForEngine(FILE);
  t.equal(engine.name, 'clink');
  t.same(Object.keys(c.perMutant ?? {}).sort(), [...CLINK_MUTANT_NAMES].sort(), 'one schedule per mutant, no other key');
  for (const m of CLINK_MUTANTS) {
    const own = mutantSchedule(c, m.name);
    if (!own) {
      t.fail(`${m.name}: no schedule of its own`);
      continue;
    }
    const run = campaignForMutant(c, m.name);
    t.same(run.faults, own.faults, `${m.name}: its faults replace the base`);
    t.same(run.compositions, own.compositions, `${m.name}: its compositions replace the base`);
    t.equal(run.workload.soakS, own.soakS, `${m.name}: its soak`);
    const least = EXPOSED_BY_THE_SETTLE.includes(m.name) ? 25 : 60;
    t.ok(own.soakS !== undefined && own.soakS >= least && own.soakS <= 150, `${m.name}: soak ${own.soakS} s is within ${least}..150 s`);
    t.ok(c.schedule.startAfterS + slots(run) * c.schedule.spacingS <= run.workload.soakS, `${m.name}: its slots fit its soak`);
    t.notOk('perMutant' in run, `${m.name}: the run's campaign has no perMutant map`);
    t.same(run.overrides?.mutantSchedule, { mutant: m.name, soakS: { old: 300, new: own.soakS }, faultSlots: { old: slots(c), new: slots(run) } }, `${m.name}: recorded as an override`);
    t.same(run.engine, c.engine, `${m.name}: the rest of the campaign is the file's`);
    t.same(run.schedule, c.schedule);
    t.same(run.deadlines, c.deadlines);
    t.same(run.gate, { deadlineS: 60, fault: 'worker-kill' }, `${m.name}: the gate is quick.yaml's`);
    const kinds = scheduledKinds(run);
    for (const k of m.exposedBy ?? []) t.ok(kinds.has(k), `${m.name}: exposed by ${k}, which its schedule holds`);
    t.ok(exposable(c, m), `${m.name}: qualify-mutants would run it`);
    const want = EXPECTED[m.name];
    t.same([...kinds].sort(), [...want.kinds].sort(), `${m.name}: the kinds on its timeline`);
    t.equal(slots(run), want.slots, `${m.name}: ${want.slots} slots`);
    if (want.points) t.same([...points(run)].sort(), [...want.points].sort(), `${m.name}: its protocol points`);
    t.same(run.compositions.map((x) => x.name), want.compositions ?? [], `${m.name}: its compositions`);
    t.ok(slots(run) < slots(c), `${m.name}: fewer slots than the control`);
  }
});

/**
 * When each mutant run's last fault recovered, in seconds into its soak, in CI's kill table at
 * d7fcea3 (chaos.jsonl of each run; docs/mutants.md, "Where the kill table's time goes").
 */
const LAST_RECOVERY_S: Record<string, number> = {
  'commit-at-prepare': 36,
  'nosuchupload-rewrite': 28,
  'drop-restored-handles': 54,
  'abort-on-unknown': 58,
  'keys-reused': 34,
  'zero-byte-commit': 16,
  'no-fencing': 51,
  'offsets-off-by-one': 33,
  'stall-flush': 63,
  'latest-by-wallclock': 83,
  'torn-log-append': 119,
  'trust-existing-object': 59,
  'unchecked-log': 42,
};

t.test('campaigns/mutants.yaml: a soak shorter than 90 s leaves 25 s after the last recovery measured in CI', async (t) => {
  const { campaign: c } = loadForEngine(FILE);
  t.same(Object.keys(LAST_RECOVERY_S).sort(), [...CLINK_MUTANT_NAMES].sort(), 'a measurement for every mutant');
  for (const m of CLINK_MUTANTS) {
    const soakS = campaignForMutant(c, m.name).workload.soakS;
    // The soaks not cut since d7fcea3 (90 s and more) are as that run had them; a cut one keeps four checkpoint intervals after both exposures.
    if (EXPOSED_BY_THE_SETTLE.includes(m.name)) t.ok(soakS >= LAST_RECOVERY_S[m.name] + 10, `${m.name} (exposed by the settle): soak ${soakS} s >= last recovery ${LAST_RECOVERY_S[m.name]} s + 10 s`);
    else if (soakS < 90) t.ok(soakS >= LAST_RECOVERY_S[m.name] + 25, `${m.name}: soak ${soakS} s >= last recovery ${LAST_RECOVERY_S[m.name]} s + 25 s`);
    t.ok(soakS > LAST_RECOVERY_S[m.name], `${m.name}: the last fault recovered inside the soak`);
  }
});

t.test('campaigns/mutants.yaml: the control runs the base, which holds everything a mutant uses', async (t) => {
  const { campaign: c } = loadForEngine(FILE);
  for (const control of [campaignForMutant(c, undefined), campaignForMutant(c, 'none')]) {
    t.same(control.faults, c.faults, 'the base battery');
    t.same(control.compositions, c.compositions, 'the base compositions');
    t.equal(control.workload.soakS, 300, 'the base soak');
    t.notOk('overrides' in control, 'nothing recorded');
    t.notOk('perMutant' in control);
  }
  const r = loadForRun(path.join(repoRoot, FILE));
  t.same(r.campaign.faults, c.faults, 'loadForRun without a mutant: the base');
  t.notOk(r.campaign.overrides);
  for (const p of MANDATORY_FAULT_POINTS) t.ok(points(c).has(p), `the control covers the mandatory point ${p}`);
  const baseKinds = scheduledKinds(c);
  const baseComps = new Map(c.compositions.map((x) => [x.name, x]));
  for (const m of CLINK_MUTANT_NAMES) {
    const run = campaignForMutant(c, m);
    for (const k of scheduledKinds(run)) t.ok(baseKinds.has(k), `${m}: ${k} is in the base`);
    for (const p of points(run)) t.ok(points(c).has(p), `${m}: ${p} is in the base`);
    for (const x of run.compositions) t.same(x.steps, baseComps.get(x.name)?.steps, `${m}: ${x.name} has the base's steps`);
  }
  t.same(c.seed, 'mutants-1', 'a fixed seed');
  t.ok(c.schedule.startAfterS + slots(c) * c.schedule.spacingS <= c.workload.soakS, 'the base fits its soak');
});

t.test('a mutant run loads with its own schedule; the plan is deterministic for the seed', async (t) => {
  for (const m of CLINK_MUTANT_NAMES) {
    const a = loadForRun(path.join(repoRoot, FILE), undefined, m).campaign;
    const b = loadForRun(path.join(repoRoot, FILE), undefined, m).campaign;
    t.same(a, campaignForMutant(loadForEngine(FILE).campaign, m), `${m}: loadForRun gives the mutant's campaign`);
    const plan = planCampaign(a);
    t.equal(formatPlanJson(plan), formatPlanJson(planCampaign(b)), `${m}: the same plan, byte for byte`);
    t.equal(plan.length, planCampaign(a).length);
    const totals = totalsByKind(plan);
    t.ok(EXPECTED[m].kinds.every((k) => totals[k as keyof typeof totals] > 0), `${m}: every expected kind is planned`);
    t.ok(plan.every((f) => f.atS >= a.schedule.startAfterS), `${m}: nothing before startAfterS`);
  }
  const m = 'stall-flush';
  const c = loadForRun(path.join(repoRoot, FILE), undefined, m).campaign;
  const other = planCampaign(applyOverrides(c, { seed: 'mutants-2' }));
  t.not(formatPlanJson(other), formatPlanJson(planCampaign(c)), 'another seed gives another timeline (the check can fail)');
});

t.test('overrides apply on top of a mutant schedule and travel with a replay', async (t) => {
  const { campaign: c } = loadForEngine(FILE);
  const run = applyOverrides(campaignForMutant(c, 'no-fencing'), { soakS: 160 });
  t.equal(run.workload.soakS, 160);
  t.same(run.overrides, {
    mutantSchedule: { mutant: 'no-fencing', soakS: { old: 300, new: 80 }, faultSlots: { old: 14, new: 2 } },
    soakS: { old: 80, new: 160 },
    schedule: { spacingS: { old: 15, new: 30 }, jitterS: { old: 3, new: 6 } },
  });
  t.equal(
    describeOverrides(run.overrides),
    "mutant no-fencing's own schedule (perMutant): soak 300 s → 80 s, fault slots 14 → 2, soak 80 s → 160 s, spacing 15 s → 30 s, jitter 3 s → 6 s (stretched with the soak)",
    'the longer soak stretches the schedule by 160 / 80',
  );
  t.throws(() => applyOverrides(campaignForMutant(c, 'stall-flush'), { soakS: 40 }), /does not fit in 40 s: startAfterS 10 s \+ 3 fault slots/, '--soak is checked against the mutant schedule');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'clink-qual-per-mutant-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const stored = { ...run, engine: { ...run.engine, mutant: 'no-fencing' }, runId: 'r1', topic: 'cq-r1', oracle: { ...run.oracle, seed: run.seed } };
  writeFileSync(path.join(dir, EVIDENCE.campaign.file), JSON.stringify(stored));
  writeFileSync(path.join(dir, EVIDENCE.plan.file), formatPlanJson(planCampaign(run)));
  const r = replaySchedule({ stored: loadStoredRun(dir) });
  t.same(r.campaign.faults, run.faults, "the replay runs the mutant's faults");
  t.same((r.campaign as typeof run).overrides, run.overrides, 'and keeps the record');
});

t.test('qualify-mutants exposes a mutant by the schedule it will run', async (t) => {
  const stall = CLINK_MUTANTS.find((m) => m.name === 'stall-flush')!;
  const text = (own: string) =>
    [
      'name: x',
      'seed: s',
      'workload: { rate: 5, soakS: 200 }',
      'faults:',
      '  - { kind: worker-kill }',
      '  - { kind: process-pause, durationS: 12 }',
      'schedule: { spacingS: 15 }',
      'perMutant:',
      '  stall-flush:',
      `    faults: [ ${own} ]`,
    ].join('\n');
  t.ok(exposable(parseCampaign(text('{ kind: process-pause, durationS: 12 }'), 'x.yaml'), stall), 'its schedule pauses a worker');
  t.notOk(exposable(parseCampaign(text('{ kind: worker-kill }'), 'x.yaml'), stall), 'the base pauses one, but its own schedule does not');
  const quick = loadForEngine('campaigns/quick.yaml').campaign;
  t.notOk(exposable(quick, stall), 'quick.yaml (no perMutant): the base decides, as before');
  t.ok(exposable(quick, CLINK_MUTANTS.find((m) => m.name === 'no-fencing')!));
});

const MUTANTS = [...CLINK_MUTANT_NAMES];
const base = [
  'name: x', // 1
  'seed: s', // 2
  'workload: { rate: 5, soakS: 200 }', // 3
  'faults:', // 4
  '  - { kind: worker-kill, targets: [worker-1, worker-2] }', // 5
  '  - { kind: partition, durationS: 10 }', // 6
  '  - { kind: protocol-point, points: [sink.after-commit, coordinator.after-complete-record] }', // 7
  'compositions:', // 8
  '  - name: c', // 9
  '    steps: [ { kind: store-outage, durationS: 5 }, { kind: worker-kill, afterS: 2 } ]', // 10
  'schedule: { spacingS: 15 }', // 11
  'perMutant:', // 12
];
const load = (...lines: string[]) => parseCampaign([...base, ...lines].join('\n'), 'x.yaml', { mutants: MUTANTS });

t.test('a perMutant key must be a mutant of the engine', async (t) => {
  t.same(problems(() => load('  no-such-mutant:', '    faults: [ { kind: worker-kill, targets: [worker-1] } ]')), [
    `x.yaml:13: perMutant.no-such-mutant: unknown mutant 'no-such-mutant' (the engine clink has: ${MUTANTS.join(', ')})`,
  ]);
  t.same(problems(() => parseCampaign([...base, '  none:', '    faults: [ { kind: worker-kill, targets: [worker-1] } ]'].join('\n'), 'x.yaml')), [
    "x.yaml:13: perMutant.none: 'none' is the correct engine, whose schedule is the base one: perMutant names mutants only",
  ], "'none' is refused even when the engine's mutants are not known");
  t.equal(Object.keys(load('  no-fencing:', '    faults: [ { kind: partition, durationS: 10 } ]').perMutant ?? {}).length, 1, 'a known mutant loads');
});

t.test('everything a mutant schedule uses must be in the base schedule', async (t) => {
  const why = 'every fault a mutant runs must be in the base schedule, which the control runs';
  t.same(problems(() => load('  no-fencing:', '    faults:', '      - { kind: process-pause, durationS: 12 }')), [
    `x.yaml:15: perMutant.no-fencing.faults[0].kind: process-pause is not in the base battery (faults): ${why}`,
  ], 'a kind the base battery lacks');
  t.same(problems(() => load('  no-fencing:', '    faults:', '      - { kind: partition, durationS: 20 }')), [
    `x.yaml:15: perMutant.no-fencing.faults[0]: partition (durationS 20) on worker-1, worker-2, worker-3 is not a fault of the base battery (it has: partition (durationS 10) on worker-1, worker-2, worker-3): ${why}`,
  ], 'other settings');
  t.same(problems(() => load('  keys-reused:', '    faults:', '      - { kind: worker-kill }')), [
    `x.yaml:15: perMutant.keys-reused.faults[0]: worker-kill on worker-1, worker-2, worker-3 is not a fault of the base battery (it has: worker-kill on worker-1, worker-2): ${why}`,
  ], 'a target the base entry does not pick from');
  t.same(problems(() => load('  drop-restored-handles:', '    faults:', '      - kind: protocol-point', '        points: [sink.after-commit, sink.before-commit]')), [
    `x.yaml:16: perMutant.drop-restored-handles.faults[0].points[1]: protocol point 'sink.before-commit' is not in the base battery's protocol-point entries: ${why}`,
  ], 'a protocol point the base lacks');
  t.same(problems(() => load('  abort-on-unknown:', '    compositions:', '      - { name: c, count: 2 }', '      - { name: d }')), [
    `x.yaml:16: perMutant.abort-on-unknown.compositions[1].name: no composition 'd' in the base schedule (it has: c): ${why}`,
  ], 'a composition the base lacks');
  t.same(problems(() => load('  abort-on-unknown:', '    compositions:', '      - { name: c, steps: [ { kind: worker-kill } ] }')), [
    'x.yaml:15: perMutant.abort-on-unknown.compositions[0].steps: unknown field (allowed here: name, count)',
  ], "a composition is the base's, by name: no steps of its own");
  t.same(problems(() => load('  no-fencing:', '    faults: [ { kind: partition, durationS: 10, targets: [broker-1] } ]')), [
    "x.yaml:14: perMutant.no-fencing.faults[0]: partition (durationS 10) on broker-1 is not a fault of the base battery (it has: partition (durationS 10) on worker-1, worker-2, worker-3): every fault a mutant runs must be in the base schedule, which the control runs",
  ], 'targets are checked against the base entry');
  t.same(problems(() => load('  no-fencing:', '    faults: [ { kind: worker-kill, targets: [broker-1] } ]')), [
    `x.yaml:14: perMutant.no-fencing.faults[0]: worker-kill on broker-1 is not a fault of the base battery (it has: worker-kill on worker-1, worker-2): ${why}`,
    "x.yaml:14: perMutant.no-fencing.faults[0].targets[0]: 'broker-1' cannot be a worker-kill target (worker-kill targets workers: worker-1, worker-2, worker-3)",
  ], "a mutant's faults get the battery's own checks too");
  const ok = load('  abort-on-unknown:', '    faults: [ { kind: protocol-point, points: [sink.after-commit], targets: [worker-3] } ]', '    compositions: [ { name: c, count: 2 } ]');
  const own = ok.perMutant!['abort-on-unknown']!;
  t.same(own.compositions, [{ ...ok.compositions[0]!, count: 2 }], "a composition by name: the base's steps, its own count");
  t.same(own.faults, [{ kind: 'protocol-point', count: 1, targets: ['worker-3'], points: ['sink.after-commit'] }], 'a base protocol point with no targets is any worker');
  t.equal(own.soakS, undefined, 'no soakS: the base soak');
});

t.test("a mutant's schedule must fit its soak, and have a fault", async (t) => {
  t.same(problems(() => load('  no-fencing:', '    soakS: 40', '    faults: [ { kind: partition, durationS: 10, count: 3 } ]')), [
    'x.yaml:14: perMutant.no-fencing.soakS: the schedule does not fit in the soak: startAfterS 10 s + 3 fault slots × spacingS 15 s = 55 s > soakS 40 s',
  ]);
  // soakS 55: the base's last slot may start at 42 s, and its 10 s partition must end inside the soak.
  const noSoak = [...base.slice(0, 2), 'workload: { rate: 5, soakS: 55 }', ...base.slice(3, 7), 'schedule: { spacingS: 10 }', 'perMutant:'];
  t.same(problems(() => parseCampaign([...noSoak, '  keys-reused:', '    faults: [ { kind: worker-kill, count: 5, targets: [worker-1] } ]'].join('\n'), 'y.yaml')), [
    'y.yaml:10: perMutant.keys-reused: the schedule does not fit in the soak: startAfterS 10 s + 5 fault slots × spacingS 10 s = 60 s > workload.soakS (this schedule gives no soakS) 55 s',
  ], 'no soakS: checked against the base soak, at the key');
  t.same(problems(() => load('  keys-reused:', '    soakS: 90')), ["x.yaml:13: perMutant.keys-reused: a mutant's schedule has at least one fault: list some in its faults or compositions"]);
  t.match(problems(() => load('  keys-reused:', '    soakS: 0', '    faults: [ { kind: worker-kill, targets: [worker-1] } ]')), [/^x\.yaml:14: perMutant\.keys-reused\.soakS: must be >= 1$/]);
  t.same(problems(() => load('  keys-reused:', '    soak: 90')), ['x.yaml:14: perMutant.keys-reused.soak: unknown field (allowed here: soakS, faults, compositions)']);
  const c = load('  keys-reused:', '    soakS: 70', '    faults: [ { kind: worker-kill, count: 4, targets: [worker-2] } ]');
  t.equal(campaignForMutant(c, 'keys-reused').workload.soakS, 70, 'it fits: 10 + 4 × 15 = 70');
});

t.test('CLI: campaign plan --mutant plans that mutant\'s schedule; --json records it in the header', async (t) => {
  const run = (args: string[]) => spawnSync(process.execPath, [cli, 'campaign', 'plan', FILE, ...args], { cwd: repoRoot, encoding: 'utf8', timeout: 60_000 });
  const r = run(['--mutant', 'no-fencing', '--json']);
  t.equal(r.status, 0, r.stderr);
  const doc = JSON.parse(r.stdout) as { header: Record<string, unknown>; faults: unknown[] };
  const expected = campaignForMutant(loadForEngine(FILE).campaign, 'no-fencing');
  t.same(doc.faults, planCampaign(expected), "the mutant's timeline");
  t.match(doc.header, { campaign: 'mutants', soakS: 80, faultCount: 2, engine: { name: 'clink', mutant: 'no-fencing' } });
  t.same((doc.header.overrides as Record<string, unknown>).mutantSchedule, { mutant: 'no-fencing', soakS: { old: 300, new: 80 }, faultSlots: { old: 14, new: 2 } });
  const table = run(['--mutant', 'torn-log-append']);
  t.equal(table.status, 0, table.stderr);
  t.match(table.stdout, /soak 2 min\b/);
  t.match(table.stdout, /compositions: 2 \(full-disk-then-coordinator-restart ×2\)/);
  t.match(table.stdout, /^overrides: mutant torn-log-append's own schedule \(perMutant\): soak 300 s → 120 s, fault slots 14 → 2$/m);
  const control = run(['--json']);
  t.equal(control.status, 0, control.stderr);
  const cdoc = JSON.parse(control.stdout) as { header: Record<string, unknown> };
  t.match(cdoc.header, { soakS: 300, faultCount: 18, overrides: {}, engine: { mutant: 'none' } });
  const bad = run(['--mutant', 'no-such']);
  t.equal(bad.status, 254);
  t.match(bad.stderr, /--mutant: unknown mutant 'no-such' for engine clink/);
  const quick = spawnSync(process.execPath, [cli, 'campaign', 'plan', 'campaigns/quick.yaml', '--mutant', 'no-fencing'], { cwd: repoRoot, encoding: 'utf8', timeout: 60_000 });
  t.equal(quick.status, 0, quick.stderr);
  t.match(quick.stdout, /^mutant: no-fencing \(no schedule of its own in this file: the base schedule\)$/m);
});

t.test('loadForEngine builds the engine with the campaign\'s job profile, and refuses a profile the engine lacks at its line', async (t) => {
  const wide = loadForEngine('campaigns/flink-wide-quick.yaml');
  t.equal(wide.campaign.engine.profile, 'wide');
  t.equal(wide.engine.name, 'flink');
  t.equal(wide.engine.jobProfile, 'wide', 'the plug deploys the profile the campaign names');
  t.match(wide.engine.profile, 'RocksDB keyed state');
  const simple = loadForEngine('campaigns/flink-quick.yaml');
  t.equal(simple.campaign.engine.profile, undefined);
  t.equal(simple.engine.jobProfile, 'simple', "no profile named: the plug's default");
  t.same(problems(() => loadForEngine('test/fixtures/campaigns/bad-profile-clink.yaml')), ['test/fixtures/campaigns/bad-profile-clink.yaml:7: engine.profile: the engine clink deploys one job and has no profiles: remove engine.profile']);
  const err = (() => {
    try {
      loadForEngine('campaigns/flink-wide-quick.yaml', loadEngine('flink'));
    } catch (e) {
      return e as QualError;
    }
    return undefined;
  })();
  t.equal(err?.code, 'BAD_ARGUMENTS', 'a given plug of another profile is refused, not silently used');
  t.match(err?.message, "names job profile 'wide', the given flink plug deploys 'simple'");
});
