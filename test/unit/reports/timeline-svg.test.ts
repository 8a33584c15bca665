/**
 * timeline.svg's own parts: the fault marks and the list under the picture, the commit-lag
 * and latency panel, and checkpoints placed on the harness's clock.
 */
import t from 'tap';
import type { ChaosRecord, PhaseMark, PlannedFault, Sample } from '../../../lib/evidence.ts';
import type { RunEvidence } from '../../../reports/evidence.ts';
import { faultOutcomes } from '../../../reports/faults.ts';
import { faultMarks, LATENCY_CAPTION, renderTimelineSvg, timeAxis } from '../../../reports/timeline-svg.ts';
import { visibleLatency } from '../../../reports/timeline-latency.ts';

const T = Date.parse('2026-12-03T07:00:00.000Z');
const iso = (s: number) => new Date(T + s * 1000).toISOString();

/** A 10-minute soak: samples every 5 s, f001 a wide store outage, f002-f004 kills a second apart, f005 recovered-not, f006 not landed. */
function run(): RunEvidence {
  const samples: Sample[] = Array.from({ length: 121 }, (_, i) => ({
    t: iso(i * 5),
    elapsedS: i * 5,
    objects: i,
    events: Math.max(0, i * 500 - 1500),
    produced: i * 500,
    lag: Math.min(i * 500, 1500),
    counters: { duplicates: 0, gaps: 0, foreign: 0, corrupted: 0, mutations: 0, pastProduced: 0 },
    errors: 0,
  }));
  const plan: PlannedFault[] = [
    { id: 'f001', kind: 'store-outage', atS: 60, durationS: 60, target: 'store' },
    { id: 'f002', kind: 'worker-kill', atS: 200, target: 'worker-1' },
    { id: 'f003', kind: 'worker-kill', atS: 200.5, target: 'worker-2' },
    { id: 'f004', kind: 'worker-kill', atS: 201, target: 'worker-3' },
    { id: 'f005', kind: 'partition', atS: 300, durationS: 2, target: 'worker-1' },
    { id: 'f006', kind: 'protocol-point', atS: 400, point: 'sink.after-commit' },
  ];
  const chaos: ChaosRecord[] = plan.map((f) => ({ t: iso(0), faultId: f.id, kind: f.kind, phase: 'planned' }));
  for (const f of plan.slice(0, 5)) {
    chaos.push({ t: iso(f.atS + 0.2), faultId: f.id, kind: f.kind, phase: 'landed' });
    chaos.push({ t: iso(f.atS + (f.durationS ?? 0.3)), faultId: f.id, kind: f.kind, phase: 'healed' });
    chaos.push({ t: iso(f.atS + (f.durationS ?? 0.3) + 4), faultId: f.id, kind: f.kind, phase: f.id === 'f005' ? 'not-recovered' : 'recovered', ...(f.id === 'f005' ? {} : { recoveryS: 4 }) });
  }
  chaos.push({ t: iso(460), faultId: 'f006', kind: 'protocol-point', point: 'sink.after-commit', phase: 'not-landed', detail: 'no process reached it' });
  const phases: PhaseMark[] = [{ t: iso(0), phase: 'soak', edge: 'start' }, { t: iso(600), phase: 'soak', edge: 'end' }];
  const checkpoints = Array.from({ length: 60 }, (_, i) => ({ id: i + 1, epoch: 1, at: iso(i * 10 + 9.5), seenAt: iso(i * 10 + 10) }));
  return { dirName: 'small', plan, chaos, samples, ledger: [], checkpoints, phases, resources: [], missing: [], unreadable: [], files: [] };
}

t.test('fault marks: every fault drawn has its id in the plot or in the list, and every failed one is listed', async (t) => {
  const ev = run();
  const axis = timeAxis(ev)!;
  const { marks, listed, notAttempted } = faultMarks(faultOutcomes(ev), axis.xOf, axis.originMs);
  t.same(marks.map((m) => m.id), ['f001', 'f002', 'f003', 'f004', 'f005', 'f006']);
  t.equal(marks.find((m) => m.id === 'f001')!.label, 'band', 'a minute-long band carries its id');
  t.same(marks.filter((m) => m.label === 'listed').map((m) => m.id), ['f003', 'f004'], 'kills a fraction of a second after f002 have no room');
  t.same(listed.map((m) => m.id), ['f003', 'f004', 'f005', 'f006'], 'the unlabelled and the failed');
  t.same(marks.filter((m) => m.failed).map((m) => m.id), ['f005', 'f006']);
  const f006 = marks.find((m) => m.id === 'f006')!;
  t.same([f006.landed, f006.w, f006.x1], [false, 0, axis.xOf(T + 400_000)], 'a fault that did not land is drawn where it was due');
  t.equal(notAttempted, 0);
});

t.test('the SVG: the lag and latency panel, failed faults marked, the list under the picture', async (t) => {
  const ev = run();
  const svg = renderTimelineSvg(ev);
  t.match(svg, /<g class="panel-lag">/);
  t.match(svg, /<polyline class="lag" points="[^"]+"/);
  t.match(svg, /<g class="panel-latency">/);
  const lat = /<polyline class="latency" points="([^"]+)"/.exec(svg);
  t.ok(lat, 'the latency line');
  t.equal(lat![1]!.split(' ').length, visibleLatency(ev.samples).points.length, 'one point per sample it could be derived for');
  t.match(svg, LATENCY_CAPTION);
  t.match(svg, /<rect class="fault-band" data-fault="f005" data-kind="partition" data-failed="not recovered"[^>]*stroke="#d62728"/, 'the fault that did not recover is outlined in red');
  t.match(svg, /<line class="fault-not-landed" data-fault="f006" data-failed="not landed"/);
  // Landed 0.2 s after their planned 200.5 s and 201 s.
  t.match(svg, /<text class="fault-listed" data-fault="f003"[^>]*>f003 worker-kill worker-2 03:21: survived<\/text>/);
  t.match(svg, /<text class="fault-listed" data-fault="f004"[^>]*>f004 worker-kill worker-3 03:21: survived<\/text>/);
  t.match(svg, /<text class="fault-listed" data-fault="f005"[^>]*>✗ f005 partition worker-1 05:00: not recovered<\/text>/);
  t.match(svg, /<text class="fault-listed" data-fault="f006"[^>]*>✗ f006 protocol-point sink\.after-commit due 06:40: not landed<\/text>/);
  t.match(svg, '2 fault ids not written (too close to the previous one): listed here');
  const written = new Set([...svg.matchAll(/<text class="fault-(?:id|listed)" data-fault="(f\d+)"/g)].map((m) => m[1]));
  t.same([...written].sort(), ['f001', 'f002', 'f003', 'f004', 'f005', 'f006'], 'no fault without its id somewhere');
  const height = Number(/^<svg [^>]*height="(\d+)"/.exec(svg)![1]);
  const lowest = Math.max(...[...svg.matchAll(/ y="([\d.]+)"/g)].map((m) => Number(m[1])));
  t.ok(lowest < height, `the list (down to y=${lowest}) fits in the picture (${height})`);
});

t.test("a stepped engine clock: checkpoints are drawn at harness times, and old evidence says it uses the engine's", async (t) => {
  const ev = run();
  // A clock-step fault put the engine's clock 120 s back for checkpoints 31-35: their stamps lie before the soak's 3rd minute.
  for (const c of ev.checkpoints.slice(30, 35)) c.at = new Date(Date.parse(c.at) - 120_000).toISOString();
  const axis = timeAxis(ev)!;
  const xs = [...renderTimelineSvg(ev).matchAll(/<line class="checkpoint" x1="([\d.]+)"/g)].map((m) => Number(m[1]));
  t.equal(xs.length, 60);
  t.same(xs.slice(30, 35), ev.checkpoints.slice(30, 35).map((c) => axis.xOf(Date.parse(c.seenAt!))), 'at when the harness saw them');
  t.same(xs.slice(0, 30), ev.checkpoints.slice(0, 30).map((c) => axis.xOf(Date.parse(c.at))), 'the others at their own (agreeing) stamps');
  t.ok(xs.every((x, i) => i === 0 || x > xs[i - 1]!), 'in order along the axis');
  t.match(renderTimelineSvg(ev), '5 at when the harness saw them: engine stamp off by over 10 s');
  // A negative step before the soak: with seenAt, nothing lands before 0; the axis does not stretch back.
  const back = run();
  back.checkpoints[0]!.at = iso(-300);
  t.equal(timeAxis(back)!.startS, 0, 'the axis starts at the soak, not at the stepped stamp');
  const old = run();
  for (const c of old.checkpoints) delete c.seenAt;
  t.match(renderTimelineSvg(old), "checkpoint (60; all on the engine's clock: checkpoints.jsonl has no seenAt)");
});
