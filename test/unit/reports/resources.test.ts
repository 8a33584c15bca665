import t from 'tap';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ChaosRecord, PhaseMark, PlannedFault, ResourceSample, Sample, Verdict } from '../../../lib/evidence.ts';
import { growthPerMillionEvents, resourceSeries } from '../../../lib/resource-trend.ts';
import { readRunEvidence, type RunEvidence } from '../../../reports/evidence.ts';
import { renderReport } from '../../../reports/report.ts';
import { fmtMiB } from '../../../reports/resources.ts';
import { SEED } from '../../../reports/seed-comparison.ts';
import { renderTimelineSvg, timeAxis } from '../../../reports/timeline-svg.ts';
import { copyFixtureRun } from '../../helpers/fixture-run.ts';

const fixtures = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'fixtures');
const fx = (name: string) => path.join(fixtures, name);
const jsonl = <T>(file: string): T[] =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as T);


/** A small run: the oracle starts 60 s before the soak, the gate 50 s before it, f001 planned at +14 s. */
function smallRun(withPhases: boolean): RunEvidence {
  const T = Date.parse('2026-12-03T07:00:00.000Z');
  const iso = (s: number) => new Date(T + s * 1000).toISOString();
  const samples: Sample[] = Array.from({ length: 40 }, (_, i) => ({
    t: iso(-60 + i * 5),
    elapsedS: i * 5,
    objects: i,
    events: i * 100,
    produced: i * 110,
    lag: i * 10,
    counters: { duplicates: 0, gaps: 0, foreign: 0, corrupted: 0, mutations: 0, pastProduced: 0 },
    errors: 0,
  }));
  const plan: PlannedFault[] = [{ id: 'f001', kind: 'store-outage', atS: 14, durationS: 6, target: 'store' }];
  const chaos: ChaosRecord[] = [
    { t: iso(0), faultId: 'f001', kind: 'store-outage', phase: 'planned', detail: 'at +14s' },
    { t: iso(14), faultId: 'f001', kind: 'store-outage', phase: 'landed', evidence: { sigstop: true } },
    { t: iso(20), faultId: 'f001', kind: 'store-outage', phase: 'healed' },
    { t: iso(25), faultId: 'f001', kind: 'store-outage', phase: 'recovered', recoveryS: 5 },
  ];
  const phases: PhaseMark[] = [
    { t: iso(-50), phase: 'gate', edge: 'start' },
    { t: iso(0), phase: 'gate', edge: 'end' },
    { t: iso(0), phase: 'soak', edge: 'start' },
    { t: iso(120), phase: 'soak', edge: 'end' },
    { t: iso(120), phase: 'drain', edge: 'start' },
    { t: iso(135), phase: 'drain', edge: 'end' },
  ];
  return { dirName: 'small', plan, chaos, samples, ledger: [], checkpoints: [], phases: withPhases ? phases : [], resources: [], missing: [], unreadable: [], files: [] };
}

t.test('the timeline counts from the soak start: a fault landed at soak + 14 s is drawn 14 s right of 00:00', async (t) => {
  for (const withPhases of [true, false]) {
    const ev = smallRun(withPhases);
    const axis = timeAxis(ev)!;
    t.equal(axis.origin, 'soak', withPhases ? 'from the soak phase mark' : 'from the plan records when there are no phase marks');
    t.equal(axis.originMs, Date.parse('2026-12-03T07:00:00.000Z'));
    const svg = renderTimelineSvg(ev);
    const band = /<rect class="fault-band" data-fault="f001"[^>]* x="([\d.]+)"/.exec(svg);
    t.ok(band, 'the band is drawn');
    const zero = /<text class="tick" data-s="0" x="([\d.]+)"[^>]*>00:00<\/text>/.exec(svg);
    t.ok(zero, 'a 00:00 tick');
    const perS = (axis.xOf(axis.originMs + 100_000) - axis.xOf(axis.originMs)) / 100;
    t.ok(Math.abs(Number(band![1]) - Number(zero![1]) - 14 * perS) < 0.2, `band at ${band![1]}, 00:00 at ${zero![1]}: 14 s apart at ${perS.toFixed(3)} px/s`);
    t.match(svg, /time since the soak started \(mm:ss\), as in the plan and the fault log; the gate runs before 0/);
    t.match(svg, />−00:30</, 'times before the soak are negative');
  }
  // The old base (the oracle's first sample) would have put it 60 s further right: make sure it is not that.
  const ev = smallRun(true);
  const axis = timeAxis(ev)!;
  const oracleStart = Date.parse(ev.samples[0]!.t);
  t.not(axis.xOf(Date.parse('2026-12-03T07:00:14.000Z')) - axis.xOf(oracleStart), axis.xOf(axis.originMs + 14_000) - axis.xOf(axis.originMs));
  // Phases are drawn, each named; and with no soak at all, the axis says what it counts from.
  const svg = renderTimelineSvg(ev);
  for (const p of ['gate', 'soak', 'drain']) t.match(svg, `<rect class="phase" data-phase="${p}"`);
  const bare = { ...smallRun(false), chaos: [], plan: [] };
  t.match(renderTimelineSvg(bare), /time since the oracle started/);
});

t.test('fault ids: written in a band wide enough, else upright in the lane while there is room, the rest counted', async (t) => {
  const ev = smallRun(true);
  t.match(renderTimelineSvg(ev), /<text class="fault-id" data-fault="f001"[^>]*>f001<\/text>/);
  // 60 kills one second apart over two hours: no room for all, the rest counted.
  const T = Date.parse('2026-12-03T07:00:00.000Z');
  const many: ChaosRecord[] = [];
  const plan: PlannedFault[] = [];
  for (let i = 0; i < 60; i++) {
    const id = `f${String(i + 1).padStart(3, '0')}`;
    const at = i < 30 ? 100 + i : 3600 + i * 60;
    plan.push({ id, kind: 'worker-kill', atS: at, target: 'worker-1' });
    many.push({ t: new Date(T).toISOString(), faultId: id, kind: 'worker-kill', phase: 'planned' });
    many.push({ t: new Date(T + at * 1000).toISOString(), faultId: id, kind: 'worker-kill', phase: 'landed' });
    many.push({ t: new Date(T + at * 1000 + 500).toISOString(), faultId: id, kind: 'worker-kill', phase: 'healed' });
  }
  const svg = renderTimelineSvg({ ...ev, plan, chaos: many, samples: [...ev.samples, { ...ev.samples[0]!, t: new Date(T + 7200_000).toISOString() }] });
  const written = (svg.match(/<text class="fault-id"/g) ?? []).length;
  t.ok(written > 10 && written < 60, `${written} ids written`);
  const lane = [...svg.matchAll(/<text class="fault-id" data-fault="f\d+" x="([\d.]+)"[^>]* transform=/g)].map((m) => Number(m[1]));
  t.ok(lane.length > 10);
  t.ok(lane.every((x, i) => i === 0 || x - lane[i - 1]! >= 11.9), 'upright ids never closer than 12 px');
  t.match(svg, `${60 - written} fault ids not written (too close to the previous one)`);
  t.match(svg, /h:mm:ss/);
});

t.test('the Resources section: peaks and growth from resources.jsonl', async (t) => {
  const md = renderReport(fx('run-pass'));
  const rs = jsonl<ResourceSample>(path.join(fx('run-pass'), 'resources.jsonl'));
  t.ok(rs.length > 10);
  const at = md.indexOf('\n## Resources\n');
  t.ok(at > md.indexOf('\n## Measured outcome\n') && at < md.indexOf('\n## Claim boundaries\n'), 'after the measured outcome');
  const ctl = Math.max(...rs.map((r) => r.controller.rssBytes));
  t.match(md, `The controller (generator, chaos controller, oracle) peaked at ${fmtMiB(ctl)} RSS`);
  const series = resourceSeries(rs);
  const store = series.find((s) => s.key === 'disk:store')!;
  const peak = Math.max(...store.points.map((p) => p.value));
  const g = growthPerMillionEvents(store.points)!;
  t.match(md, `| store disk | ${fmtMiB(peak)} |`);
  t.match(md, new RegExp(`\\| store disk \\| [^\\n]*\\| \\+${fmtMiB(g).replace(/[.]/g, '\\.')} \\|`), 'growth per million events');
  for (const role of ['worker', 'coordinator', 'broker', 'store']) t.match(md, new RegExp(`\\| ${role} \\| \\S+ \\| [\\d,.]+ MiB \\| `), `a peak for ${role}`);
  t.match(md, /The oracle's lag behind the bucket .*: at most \d+ objects?/);
  t.match(md, /\| Resource \| At the end \| Trend per hour \| Limit \| Reaches it in \| Within the horizon \|/);
  t.notMatch(md, /\| \*\*yes\*\* \|\n/, 'no exhaustion in the clean run');
  // A run without resources.jsonl says so.
  const dir = copyFixtureRun(t, 'run-pass');
  rmSync(path.join(dir, 'resources.jsonl'));
  t.match(renderReport(dir), 'Not available: `resources.jsonl` is not in the run directory');
  // The panel is drawn, one line per series.
  const svg = readFileSync(path.join(fx('run-pass'), 'timeline.svg'), 'utf8');
  t.equal((svg.match(/<polyline class="resource"/g) ?? []).length, series.length);
});

t.test('a resource trend that would exhaust the machine is a verdict warning and a "yes" in the table, not a FAIL reason', async (t) => {
  const v = JSON.parse(readFileSync(path.join(fx('run-fail'), 'verdict.json'), 'utf8')) as Verdict;
  const w = v.warnings.filter((x) => x.startsWith('resources: '));
  t.equal(w.length, 1);
  t.notOk(v.reasons.some((r) => r.startsWith('resources')));
  const md = renderReport(fx('run-fail'));
  t.match(md, `- ${w[0]}`);
  t.match(md, /\| memory of machine 5f0c2d7e \(8 hosts and the controller\) \| [^\n]* \| MemTotal 6,144 MiB \| [^|]+ \| \*\*yes\*\* \|/);
});

t.test('the comparison with QUAL-03: shown for qual03 campaigns, row by row from the evidence, like with like', async (t) => {
  t.notMatch(renderReport(fx('run-pass')), '## Compared with QUAL-03', 'not for the quick campaign');
  const dir = copyFixtureRun(t, 'run-pass');
  const cf = path.join(dir, 'campaign.resolved.json');
  writeFileSync(cf, JSON.stringify({ ...JSON.parse(readFileSync(cf, 'utf8')), name: 'qual03' }));
  const v = JSON.parse(readFileSync(path.join(dir, 'verdict.json'), 'utf8')) as Verdict;
  const n = (x: number) => Math.round(x).toLocaleString('en-US');
  let md = renderReport(dir);
  t.match(md, '## Compared with QUAL-03');
  t.match(md, 'The durations differ (5 min here), so the figures that grow with time are compared per hour of soak.', "the fixture's soak is 5 min");
  t.match(md, `| Events produced | 7,477,200 (3,738,600 per hour) | ${n(v.produced)} (${n(v.produced * 12)} per hour) | set |`);
  t.match(md, /\| Checkpoint interval \| 8 s \| 6 s \| set \|/, "the fixture's interval is not QUAL-03's, and it is a setting either way");
  t.match(md, /\| Completed checkpoints \| not stated \| \d+ \([\d,]+ per hour\) \| not compared: QUAL-03 states no count \|/);
  t.match(md, /\| Multipart uploads left pending \| 110 \| \d+ \| not compared: QUAL-03 records it as evidence, not as a fault; fewer is no shortfall \|/);
  t.match(md, /\| Transient sample errors \(met and retried\) \| 3 \(all during injected outages\) \| \d+: \d+ of \d+ inside a store-outage window \| like QUAL-03's/);
  t.notMatch(md, '4 subtasks × 900 windows', "no fixed sentence about Clink's commits");
  t.match(md, 'The engine plug declares that each subtask commits at most one object per completed checkpoint');
  t.match(md, /\| Soak duration \| 2 h \| 5 min \| set \|/);
  t.match(md, /\| Worker-PID stability checks after coordinator kills \| 7 \| 3: /);
  t.match(md, /\| Store down during a worker recovery \(decisive composition\) survived \| 4 \| 1 \| \*\*short\*\* \|/);
  // Raise the figures past the seed's: settings stay settings, never met.
  writeFileSync(path.join(dir, 'verdict.json'), JSON.stringify({ ...v, produced: SEED.events + 1, pendingUploads: 0 }));
  const rc = JSON.parse(readFileSync(cf, 'utf8'));
  writeFileSync(cf, JSON.stringify({ ...rc, workload: { ...rc.workload, checkpointIntervalS: 8 } }));
  md = renderReport(dir);
  t.match(md, `| Events produced | 7,477,200 (3,738,600 per hour) | 7,477,201 (${n((SEED.events + 1) * 12)} per hour) | set |`);
  t.match(md, '| Checkpoint interval | 8 s | 8 s | set |', 'the same interval is still a setting');
  t.match(md, /\| Multipart uploads left pending \| 110 \| 0 \| not compared: /, 'none left pending is no shortfall');
  t.match(md, /\d+ of the 11 outcomes compared meets? or exceeds? QUAL-03; \d+ falls? short: /);
  t.match(md, new RegExp(`\\| Oracle samples \\| 377 \\(189 per hour\\) \\| ${readRunEvidence(dir).samples.length} \\([\\d,]+ per hour\\) \\| set \\|`));
  // Flink under QUAL-03's battery is compared with the two-hour run; the rehearsal with QUAL-03's rehearsal.
  for (const [name, seed] of [
    ['flink-qual03', "QUAL-03's two-hour run"],
    ['qual03-smoke', "QUAL-03's 45-minute rehearsal"],
  ] as const) {
    writeFileSync(cf, JSON.stringify({ ...JSON.parse(readFileSync(cf, 'utf8')), name }));
    const m = renderReport(dir);
    t.match(m, '## Compared with QUAL-03', name);
    t.match(m, `This run is compared with ${seed}`, name);
  }
});
