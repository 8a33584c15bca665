/**
 * timeline.svg: the run at a glance, hand-written SVG, no dependency.
 *
 * - a phase lane (gate, soak, drain, settle, recount from phases.jsonl), with the phase
 *   boundaries drawn as dashed lines through both panels;
 * - committed events over time (samples.jsonl `events`) as a solid line, produced events
 *   (`produced`) as a dashed one;
 * - every landed fault as a shaded band from landed to healed (or to its last record when
 *   it never healed), through every panel, coloured by kind, with a legend; its id is
 *   written in the band when the band is wide enough, else upright in the id lane above the
 *   plot when there is room, else in the list under the picture (faultMarks). A fault that
 *   did not recover or whose heal failed has a red dashed outline and a ✗; one that did not
 *   land is a red dashed line where it was due. Every failed fault is also in the list;
 * - every completed checkpoint (checkpoints.jsonl) as a tick under the time axis, on the
 *   harness's clock (lib/checkpoint-clock.ts: the engine's stamp when it agrees with when
 *   the harness saw the checkpoint, else that sighting; the engine's stamp, said so in the
 *   legend, for evidence without seenAt);
 * - a commit-lag panel: produced − committed events per sample (samples.jsonl `lag`);
 * - a produce→visible latency panel: per sample, the time since the produced count first
 *   reached that sample's committed count, interpolated between samples
 *   (reports/timeline-latency.ts; the caption says so, and how many samples were left out);
 * - a resources panel (resources.jsonl): controller RSS, RSS summed per rig role, store and
 *   broker disk, in MiB.
 *
 * Time counts from the soak's start, like the plan and the fault log (the gate is before
 * 0); runs without a soak mark fall back to the plan's records, and runs with neither to
 * the oracle's first sample. The axis title names the origin. Output is a pure function of
 * the evidence.
 */
import { FAULT_SPECS } from '../chaos/kinds.ts';
import { RUN_PHASES, type FaultKind } from '../lib/evidence.ts';
import { FAULT_KINDS } from '../chaos/kinds.ts';
import { resourceSeries } from '../lib/resource-trend.ts';
import { phaseSpans, soakStart, type RunEvidence } from './evidence.ts';
import { faultOutcomes, type FaultOutcome } from './faults.ts';
import { checkpointTimes, SEEN_WINDOW_MS } from '../lib/checkpoint-clock.ts';
import { visibleLatency } from './timeline-latency.ts';
import { esc, fmtClock, fmtInt } from './format.ts';

/** Each kind's band colour, from its package's spec (chaos/kinds.ts). */
export const KIND_COLOURS: Record<FaultKind, string> = Object.fromEntries(Object.entries(FAULT_SPECS).map(([k, spec]) => [k, spec.colour])) as Record<FaultKind, string>;

const PHASE_COLOURS: Record<string, string> = { gate: '#fde0c5', soak: '#dbe9f6', drain: '#e2f0d9', settle: '#efe3f3', recount: '#f3f3c8' };
const SERIES_COLOURS: Record<string, string> = {
  controller: '#000000',
  'rss:worker': '#d62728',
  'rss:coordinator': '#9467bd',
  'rss:broker': '#8c6d31',
  'rss:store': '#e377c2',
  'disk:store': '#1f77b4',
  'disk:broker': '#17becf',
};

export const W = 1200;
export const M = { left: 80, right: 24 };
export const PW = W - M.left - M.right;
const PHASE_Y = 40;
const LANE_Y = 60; // fault-id lane: 60..100
const TOP = 104; // events plot
const PH = 230;
const BOTTOM = TOP + PH;
const LTOP = BOTTOM + 66; // commit-lag panel
const LH = 80;
const LBOTTOM = LTOP + LH;
const VTOP = LBOTTOM + 30; // produce→visible latency panel
const VH = 80;
const VBOTTOM = VTOP + VH;
const RTOP = VBOTTOM + 40; // resources panel
const RH = 120;
const RBOTTOM = RTOP + RH;
/** Approximate width of one character at 11 px. */
const CH = 6.4;
const NOT_RECOVERED = '#d62728';

const r1 = (n: number) => Math.round(n * 10) / 10;

function niceStep(range: number, target: number): number {
  const raw = range / Math.max(1, target);
  const mag = 10 ** Math.floor(Math.log10(raw || 1));
  for (const m of [1, 2, 5, 10]) if (m * mag >= raw) return m * mag;
  return 10 * mag;
}

function timeStep(range: number): number {
  const steps = [10, 15, 30, 60, 120, 300, 600, 900, 1200, 1800, 3600, 7200];
  return steps.find((s) => range / s <= 12) ?? niceStep(range, 10);
}

/** Seconds → "mm:ss" / "h:mm:ss" (always h:mm:ss with `hours`), with a minus sign before the origin. */
export function fmtSignedClock(s: number, hours = false): string {
  const c = fmtClock(Math.abs(s));
  const full = hours && !c.includes(':', c.indexOf(':') + 1) ? `0:${c}` : c;
  return s < -0.5 ? `−${full}` : full;
}

export interface TimeAxis {
  /** The origin (ms epoch) and what it is. */
  originMs: number;
  origin: 'soak' | 'oracle' | 'first record';
  /** The span drawn, in seconds from the origin (startS ≤ 0 when the gate is before the soak). */
  startS: number;
  endS: number;
  xOf(ms: number): number;
  label: string;
}

/** The time axis of the picture: origin, span, and the x of an instant. */
export function timeAxis(ev: RunEvidence): TimeAxis | undefined {
  const stamps = [
    ...ev.samples.map((s) => Date.parse(s.t)),
    ...ev.chaos.map((c) => Date.parse(c.t)),
    ...checkpointTimes(ev.checkpoints).ms,
    ...ev.resources.map((r) => Date.parse(r.t)),
    ...ev.phases.map((p) => Date.parse(p.t)),
  ].filter(Number.isFinite);
  if (!stamps.length) return undefined;
  const soak = soakStart(ev);
  const first = ev.samples[0];
  let originMs: number;
  let origin: TimeAxis['origin'];
  if (soak) {
    originMs = soak.ms;
    origin = 'soak';
  } else if (first) {
    originMs = Date.parse(first.t) - first.elapsedS * 1000;
    origin = 'oracle';
  } else {
    originMs = Math.min(...stamps);
    origin = 'first record';
  }
  const startS = Math.min(0, (Math.min(...stamps) - originMs) / 1000);
  const endS = Math.max(startS + 1, (Math.max(...stamps) - originMs) / 1000);
  const xOf = (ms: number) => r1(M.left + (((ms - originMs) / 1000 - startS) * PW) / (endS - startS));
  const label =
    origin === 'soak'
      ? `time since the soak started (${endS >= 3600 ? 'h:mm:ss' : 'mm:ss'}), as in the plan and the fault log${startS < 0 ? '; the gate runs before 0' : ''}`
      : origin === 'oracle'
        ? `time since the oracle started (${endS >= 3600 ? 'h:mm:ss' : 'mm:ss'}); no soak start in the evidence`
        : `time since the first record (${endS >= 3600 ? 'h:mm:ss' : 'mm:ss'}); no soak start in the evidence`;
  return { originMs, origin, startS, endS, xOf, label };
}

/** How a fault is shown in the picture: its band (landed) or due mark (not landed), and where its id is written. */
export interface FaultMark {
  id: string;
  outcome: FaultOutcome;
  /** Left edge and width of the band (px); a not-landed fault has width 0 at the time it was due. */
  x1: number;
  w: number;
  landed: boolean;
  /** Not landed, not recovered, heal failed: drawn in red and marked ✗. */
  failed: boolean;
  /** Where its id is written: inside its band, upright in the lane above the plot, or only in the list under the picture. */
  label: 'band' | 'lane' | 'listed';
}

const FAILED: readonly string[] = ['not landed', 'not recovered', 'heal failed'];

/**
 * Every fault the picture shows, in time order, and where its id goes: in its band when the
 * band is wide enough, else upright in the lane when it is at least 12 px from the previous
 * upright id, else nowhere in the plot. `listed` is what the list under the picture names:
 * every fault whose id is not written in the plot, and every fault that did not land, did not
 * recover or whose heal failed, so no fault is drawn without its name being somewhere.
 * `notAttempted` counts the plan's faults that never started (a run that ended first).
 */
export function faultMarks(outcomes: FaultOutcome[], xOf: (ms: number) => number, soakMs: number | undefined): { marks: FaultMark[]; listed: FaultMark[]; notAttempted: number } {
  const placed: { o: FaultOutcome; x1: number; w: number; landed: boolean }[] = [];
  let notAttempted = 0;
  for (const o of outcomes) {
    if (o.landedAt !== undefined) {
      const x1 = xOf(Date.parse(o.landedAt));
      const end = o.healedAt ?? o.endedAt ?? o.landedAt;
      placed.push({ o, x1, w: r1(Math.max(x1 + 2, xOf(Date.parse(end))) - x1), landed: true });
    } else if (o.status === 'not landed') {
      // Drawn where it was due: its planned time when the soak's start is known, else when it was given up.
      const due = o.planned && soakMs !== undefined ? soakMs + o.planned.atS * 1000 : Date.parse(o.endedAt ?? '');
      if (Number.isFinite(due)) placed.push({ o, x1: xOf(due), w: 0, landed: false });
    } else if (o.status === 'not attempted') notAttempted++;
  }
  placed.sort((a, b) => a.x1 - b.x1);
  const marks: FaultMark[] = [];
  let lastLaneX = -Infinity;
  for (const p of placed) {
    let label: FaultMark['label'] = 'listed';
    if (p.landed && p.w >= p.o.id.length * CH + 4) label = 'band';
    else if (p.x1 - lastLaneX >= 12) {
      label = 'lane';
      lastLaneX = p.x1;
    }
    marks.push({ id: p.o.id, outcome: p.o, x1: p.x1, w: p.w, landed: p.landed, failed: FAILED.includes(p.o.status), label });
  }
  return { marks, listed: marks.filter((m) => m.label === 'listed' || m.failed), notAttempted };
}

/** The caption under the latency panel: how the latency is derived. */
export const LATENCY_CAPTION = "produce→visible latency, s: per sample, the time since the produced count first reached its committed count (interpolated between samples)";

export function renderTimelineSvg(ev: RunEvidence): string {
  const out: string[] = [];
  const title = `${ev.provenance?.runId ?? ev.dirName}: committed events, commit lag and latency, faults, checkpoints and resources`;
  const head = (h: number) => [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${h}" viewBox="0 0 ${W} ${h}" font-family="sans-serif" font-size="11">`,
    `<title>${esc(title)}</title>`,
    `<rect x="0" y="0" width="${W}" height="${h}" fill="#ffffff"/>`,
    `<text x="${M.left}" y="24" font-size="14" font-weight="bold">${esc(title)}</text>`,
  ];
  const axis = timeAxis(ev);
  if (!axis) {
    out.push(...head(RBOTTOM + 40));
    out.push(`<text x="${M.left}" y="${TOP + PH / 2}">No samples, faults or checkpoints in the evidence: nothing to draw.</text>`);
    out.push('</svg>');
    return out.join('\n') + '\n';
  }
  const { originMs, startS, endS, xOf } = axis;
  const maxY = Math.max(1, ...ev.samples.map((s) => Math.max(s.produced, s.events)));
  const yStep = niceStep(maxY, 5);
  const yMax = Math.ceil(maxY / yStep) * yStep;
  const yOf = (v: number) => r1(TOP + PH - (v * PH) / yMax);

  // Phase lane and boundaries.
  const spans = phaseSpans(ev);
  const lastMs = originMs + endS * 1000;
  out.push('<g class="phases">');
  for (const p of spans) {
    const x1 = xOf(p.startMs);
    const x2 = Math.max(x1 + 1, xOf(p.endMs ?? lastMs));
    const w = r1(x2 - x1);
    out.push(`<rect class="phase" data-phase="${p.phase}" x="${x1}" y="${PHASE_Y}" width="${w}" height="16" fill="${PHASE_COLOURS[p.phase] ?? '#eeeeee'}" stroke="#999999" stroke-width="0.5"><title>${p.phase}</title></rect>`);
    if (w >= p.phase.length * CH + 6) out.push(`<text x="${r1(x1 + w / 2)}" y="${PHASE_Y + 12}" text-anchor="middle" fill="#333333">${p.phase}</text>`);
    out.push(`<line class="phase-edge" x1="${x1}" y1="${PHASE_Y + 16}" x2="${x1}" y2="${RBOTTOM}" stroke="#888888" stroke-width="0.8" stroke-dasharray="2 3"/>`);
  }
  out.push('</g>');
  if (!spans.length) out.push(`<text x="${M.left}" y="${PHASE_Y + 12}" fill="#777777">no phase marks in the evidence (phases.jsonl)</text>`);

  // Grid and axes of the events plot.
  out.push('<g class="axes" stroke="#dddddd" stroke-width="1">');
  for (let v = 0; v <= yMax + 1e-9; v += yStep) out.push(`<line x1="${M.left}" y1="${yOf(v)}" x2="${M.left + PW}" y2="${yOf(v)}"/>`);
  out.push('</g>');
  out.push('<g class="y-labels" text-anchor="end" fill="#333333">');
  for (let v = 0; v <= yMax + 1e-9; v += yStep) out.push(`<text x="${M.left - 6}" y="${r1(yOf(v) + 4)}">${fmtInt(v)}</text>`);
  out.push('</g>');
  out.push(`<text x="16" y="${TOP + PH / 2}" transform="rotate(-90 16 ${TOP + PH / 2})" text-anchor="middle" fill="#333333">events</text>`);
  const tStep = timeStep(endS - startS);
  const ticks: number[] = [];
  for (let s = Math.ceil(startS / tStep) * tStep; s <= endS + 1e-9; s += tStep) ticks.push(s);
  out.push('<g class="x-labels" text-anchor="middle" fill="#333333">');
  for (const s of ticks) {
    const x = xOf(originMs + s * 1000);
    out.push(`<line x1="${x}" y1="${BOTTOM}" x2="${x}" y2="${BOTTOM + 14}" stroke="#333333"/><text class="tick" data-s="${s}" x="${x}" y="${BOTTOM + 26}">${fmtSignedClock(s, endS >= 3600)}</text>`);
  }
  out.push('</g>');
  out.push(`<text class="x-title" x="${M.left + PW / 2}" y="${BOTTOM + 42}" text-anchor="middle" fill="#333333">${esc(axis.label)}</text>`);

  // Fault windows: one band per landed fault, a red due mark per fault that did not land.
  const soak = soakStart(ev);
  const { marks, listed, notAttempted } = faultMarks(faultOutcomes(ev), xOf, soak?.ms);
  const landed = marks.filter((m) => m.landed);
  out.push('<g class="faults">');
  const labels: string[] = [];
  for (const m of marks) {
    const o = m.outcome;
    const what = [o.id, o.kind, o.point ?? o.target, o.composition, o.status].filter(Boolean).join(' · ');
    const name = `${m.failed ? '✗ ' : ''}${o.id}`;
    if (m.landed) {
      const outline = m.failed ? ` stroke="${NOT_RECOVERED}" stroke-width="1.5" stroke-dasharray="4 2"` : '';
      out.push(
        `<rect class="fault-band" data-fault="${esc(o.id)}" data-kind="${o.kind}"${m.failed ? ` data-failed="${o.status}"` : ''} x="${m.x1}" y="${TOP}" width="${m.w}" height="${RBOTTOM - TOP}" fill="${KIND_COLOURS[o.kind]}" fill-opacity="0.28"${outline}><title>${esc(what)}</title></rect>`,
      );
    } else {
      out.push(`<line class="fault-not-landed" data-fault="${esc(o.id)}" data-failed="${o.status}" x1="${m.x1}" y1="${TOP}" x2="${m.x1}" y2="${RBOTTOM}" stroke="${NOT_RECOVERED}" stroke-width="1.5" stroke-dasharray="4 2"><title>${esc(what)}</title></line>`);
    }
    const fill = m.failed ? ` fill="${NOT_RECOVERED}"` : '';
    const cx = r1(m.x1 + m.w / 2);
    if (m.label === 'band') labels.push(`<text class="fault-id" data-fault="${esc(o.id)}" x="${cx}" y="${TOP + 12}" text-anchor="middle"${fill}>${esc(name)}</text>`);
    else if (m.label === 'lane') {
      labels.push(`<text class="fault-id" data-fault="${esc(o.id)}" x="${r1(cx + 4)}" y="${LANE_Y + 38}" transform="rotate(-90 ${r1(cx + 4)} ${LANE_Y + 38})"${fill}>${esc(name)}</text>`);
      out.push(`<line x1="${cx}" y1="${LANE_Y + 38}" x2="${cx}" y2="${TOP}" stroke="${m.failed ? NOT_RECOVERED : KIND_COLOURS[o.kind]}" stroke-width="1"/>`);
    } else if (m.failed) labels.push(`<text class="fault-x" data-fault="${esc(o.id)}" x="${cx}" y="${TOP - 2}" text-anchor="middle"${fill}>✗</text>`);
  }
  out.push('</g>');
  out.push(`<g class="fault-ids" fill="#222222">${labels.join('')}</g>`);
  const unlabelled = marks.filter((m) => m.label === 'listed').length;

  // Lines.
  const pts = (f: (s: (typeof ev.samples)[number]) => number) => ev.samples.map((s) => `${xOf(Date.parse(s.t))},${yOf(f(s))}`).join(' ');
  if (ev.samples.length) {
    out.push(`<polyline class="produced" points="${pts((s) => s.produced)}" fill="none" stroke="#7f7f7f" stroke-width="1.5" stroke-dasharray="5 3"/>`);
    out.push(`<polyline class="committed" points="${pts((s) => s.events)}" fill="none" stroke="#1f77b4" stroke-width="2"/>`);
  }

  // Axis frame and checkpoint ticks, on the harness's clock (lib/checkpoint-clock.ts).
  out.push(`<line x1="${M.left}" y1="${BOTTOM}" x2="${M.left + PW}" y2="${BOTTOM}" stroke="#333333"/>`);
  out.push(`<line x1="${M.left}" y1="${TOP}" x2="${M.left}" y2="${BOTTOM}" stroke="#333333"/>`);
  const cps = checkpointTimes(ev.checkpoints);
  out.push('<g class="checkpoints" stroke="#1f77b4" stroke-width="1" stroke-opacity="0.6">');
  for (const ms of cps.ms) {
    const x = xOf(ms);
    out.push(`<line class="checkpoint" x1="${x}" y1="${BOTTOM + 2}" x2="${x}" y2="${BOTTOM + 10}"/>`);
  }
  out.push('</g>');

  // Commit lag and produce→visible latency, under the events plot on the same time axis.
  const lat = visibleLatency(ev.samples);
  out.push(
    ...seriesPanel({
      cls: 'lag',
      top: LTOP,
      h: LH,
      axisTitle: 'lag',
      caption: 'commit lag: events produced − events committed, per sample (samples.jsonl lag)',
      colour: '#ff7f0e',
      points: ev.samples.map((s) => ({ x: xOf(Date.parse(s.t)), v: s.lag })),
      empty: 'No samples in the evidence (samples.jsonl).',
    }),
    ...seriesPanel({
      cls: 'latency',
      top: VTOP,
      h: VH,
      axisTitle: 'latency s',
      caption: `${LATENCY_CAPTION}${lat.leftOut ? `; ${fmtInt(lat.leftOut)} sample${lat.leftOut === 1 ? '' : 's'} left out` : ''}`,
      captionTitle: 'A sample is left out when it committed nothing yet, when the first sample had already produced its committed count (the moment lies before the evidence), or when it committed more than was produced.',
      colour: '#9467bd',
      points: lat.points.map((p) => ({ x: xOf(p.tMs), v: p.latencyS })),
      empty: 'No sample to derive a latency from.',
    }),
  );
  for (const bottom of [LBOTTOM, VBOTTOM]) {
    out.push(`<g class="x-ticks" stroke="#333333">${ticks.map((s) => `<line x1="${xOf(originMs + s * 1000)}" y1="${bottom}" x2="${xOf(originMs + s * 1000)}" y2="${bottom + 4}"/>`).join('')}</g>`);
  }

  // Resources panel.
  out.push(...resourcesPanel(ev, xOf));

  // Legends.
  const items: string[] = [];
  let ly = RBOTTOM + 26;
  let x = M.left;
  items.push(`<line x1="${x}" y1="${ly}" x2="${x + 22}" y2="${ly}" stroke="#1f77b4" stroke-width="2"/><text x="${x + 26}" y="${ly + 4}">committed (oracle)</text>`);
  x += 140;
  items.push(`<line x1="${x}" y1="${ly}" x2="${x + 22}" y2="${ly}" stroke="#7f7f7f" stroke-width="1.5" stroke-dasharray="5 3"/><text x="${x + 26}" y="${ly + 4}">produced</text>`);
  x += 90;
  const cpClock = cps.byClock['engine clock, unchecked']
    ? `; ${cps.byClock['engine clock, unchecked'] === cps.ms.length ? 'all' : fmtInt(cps.byClock['engine clock, unchecked'])} on the engine's clock: checkpoints.jsonl has no seenAt`
    : cps.byClock['harness saw it']
      ? `; ${fmtInt(cps.byClock['harness saw it'])} at when the harness saw them: engine stamp off by over ${SEEN_WINDOW_MS / 1000} s`
      : '';
  const cpText = `checkpoint (${fmtInt(cps.ms.length)}${cpClock})`;
  items.push(`<line x1="${x + 10}" y1="${ly - 5}" x2="${x + 10}" y2="${ly + 5}" stroke="#1f77b4"/><text class="checkpoint-clock" x="${x + 18}" y="${ly + 4}">${esc(cpText)}</text>`);
  x += 40 + cpText.length * CH;
  for (const p of RUN_PHASES.filter((ph) => spans.some((s) => s.phase === ph))) {
    items.push(`<rect x="${x}" y="${ly - 6}" width="12" height="10" fill="${PHASE_COLOURS[p]}" stroke="#999999" stroke-width="0.5"/><text x="${x + 15}" y="${ly + 4}">${p}</text>`);
    x += 22 + p.length * CH;
  }
  ly += 22;
  let kx = M.left;
  // The kinds this run planned or landed (eleven kinds with zeros would bury the ones that matter).
  for (const k of FAULT_KINDS.filter((x) => landed.some((m) => m.outcome.kind === x) || (ev.plan ?? []).some((f) => f.kind === x))) {
    const n = landed.filter((m) => m.outcome.kind === k).length;
    if (kx + 110 > W) {
      kx = M.left;
      ly += 18;
    }
    items.push(`<rect x="${kx}" y="${ly - 9}" width="12" height="12" fill="${KIND_COLOURS[k]}" fill-opacity="0.5"/><text x="${kx + 16}" y="${ly + 1}">${k} (${n})</text>`);
    kx += 140;
  }
  if (kx + 200 > W) {
    kx = M.left;
    ly += 18;
  }
  items.push(`<rect x="${kx}" y="${ly - 9}" width="12" height="12" fill="none" stroke="${NOT_RECOVERED}" stroke-width="1.5" stroke-dasharray="4 2"/><text x="${kx + 16}" y="${ly + 1}" fill="${NOT_RECOVERED}">✗ not landed, not recovered or heal failed</text>`);
  out.push(`<g class="legend" fill="#333333">${items.join('')}</g>`);

  // The list under the picture: every fault whose id the plot does not carry, and every one that failed.
  ly += 24;
  const list: string[] = [];
  const clock = (m: FaultMark) => {
    const o = m.outcome;
    const s = o.landedS ?? (o.planned ? o.planned.atS : undefined);
    return s !== undefined && soak ? fmtSignedClock(s, endS >= 3600) : '';
  };
  if (listed.length || notAttempted) {
    const headParts = [
      unlabelled ? `${fmtInt(unlabelled)} fault id${unlabelled === 1 ? '' : 's'} not written (too close to the previous one): listed here` : '',
      listed.some((m) => m.failed) ? '✗: did not land, did not recover, or its heal failed' : '',
      notAttempted ? `${fmtInt(notAttempted)} planned fault${notAttempted === 1 ? '' : 's'} not attempted (the run ended first)` : '',
    ].filter(Boolean);
    list.push(`<text class="fault-list-head" x="${M.left}" y="${ly}">${esc(headParts.join('; '))}</text>`);
    ly += 16;
    let lx = M.left;
    for (const m of listed) {
      const o = m.outcome;
      const text = `${m.failed ? '✗ ' : ''}${o.id} ${o.kind}${o.point ? ` ${o.point}` : o.target ? ` ${o.target}` : ''}${clock(m) ? ` ${m.landed ? '' : 'due '}${clock(m)}` : ''}: ${o.status}`;
      const w = text.length * CH + 18;
      if (lx + w > W - M.right && lx > M.left) {
        lx = M.left;
        ly += 15;
      }
      list.push(`<text class="fault-listed" data-fault="${esc(o.id)}" x="${r1(lx)}" y="${ly}"${m.failed ? ` fill="${NOT_RECOVERED}"` : ''}>${esc(text)}</text>`);
      lx += w;
    }
  }
  out.push(`<g class="fault-list" fill="#333333">${list.join('')}</g>`);
  out.push('</svg>');
  return [...head(ly + 16), ...out].join('\n') + '\n';
}

/** A small line panel on the shared time axis: frame, 0 and top grid, y labels, its caption above it. */
function seriesPanel(o: { cls: string; top: number; h: number; axisTitle: string; caption: string; captionTitle?: string; colour: string; points: { x: number; v: number }[]; empty: string }): string[] {
  const out: string[] = [];
  const bottom = o.top + o.h;
  out.push(`<g class="panel-${o.cls}">`);
  out.push(`<text class="caption" x="${M.left}" y="${o.top - 6}" fill="#333333">${esc(o.caption)}${o.captionTitle ? `<title>${esc(o.captionTitle)}</title>` : ''}</text>`);
  out.push(`<text x="16" y="${o.top + o.h / 2}" transform="rotate(-90 16 ${o.top + o.h / 2})" text-anchor="middle" fill="#333333">${esc(o.axisTitle)}</text>`);
  out.push(`<line x1="${M.left}" y1="${bottom}" x2="${M.left + PW}" y2="${bottom}" stroke="#333333"/>`);
  out.push(`<line x1="${M.left}" y1="${o.top}" x2="${M.left}" y2="${bottom}" stroke="#333333"/>`);
  if (!o.points.length) {
    out.push(`<text x="${M.left + 8}" y="${o.top + o.h / 2}" fill="#777777">${esc(o.empty)}</text>`, '</g>');
    return out;
  }
  const lo = Math.min(0, ...o.points.map((p) => p.v));
  const hi = Math.max(1, ...o.points.map((p) => p.v));
  const step = niceStep(hi - lo, 3);
  const vMin = Math.floor(lo / step) * step;
  const vMax = Math.ceil(hi / step) * step;
  const yOf = (v: number) => r1(bottom - ((v - vMin) * o.h) / (vMax - vMin));
  out.push('<g stroke="#eeeeee">');
  for (let v = vMin + step; v <= vMax + 1e-9; v += step) out.push(`<line x1="${M.left}" y1="${yOf(v)}" x2="${M.left + PW}" y2="${yOf(v)}"/>`);
  out.push('</g>');
  out.push('<g text-anchor="end" fill="#333333">');
  for (let v = vMin; v <= vMax + 1e-9; v += step) out.push(`<text x="${M.left - 6}" y="${r1(yOf(v) + 4)}">${fmtInt(v, step < 1 ? 1 : 0)}</text>`);
  out.push('</g>');
  out.push(`<polyline class="${o.cls}" points="${o.points.map((p) => `${p.x},${yOf(p.v)}`).join(' ')}" fill="none" stroke="${o.colour}" stroke-width="1.5"/>`);
  out.push('</g>');
  return out;
}

/** The resources panel under the events plot, on the same time axis. */
function resourcesPanel(ev: RunEvidence, xOf: (ms: number) => number): string[] {
  const out: string[] = [];
  out.push(`<text x="16" y="${RTOP + RH / 2}" transform="rotate(-90 16 ${RTOP + RH / 2})" text-anchor="middle" fill="#333333">MiB</text>`);
  out.push(`<line x1="${M.left}" y1="${RBOTTOM}" x2="${M.left + PW}" y2="${RBOTTOM}" stroke="#333333"/>`);
  out.push(`<line x1="${M.left}" y1="${RTOP}" x2="${M.left}" y2="${RBOTTOM}" stroke="#333333"/>`);
  const series = resourceSeries(ev.resources).filter((s) => s.points.length);
  if (!series.length) {
    out.push(`<text x="${M.left + 8}" y="${RTOP + RH / 2}" fill="#777777">No resource samples in the evidence (resources.jsonl).</text>`);
    return out;
  }
  const MiB = 1048576;
  const maxV = Math.max(1, ...series.flatMap((s) => s.points.map((p) => p.value / MiB)));
  const step = niceStep(maxV, 4);
  const vMax = Math.ceil(maxV / step) * step;
  const yOf = (v: number) => r1(RTOP + RH - (v * RH) / vMax);
  out.push('<g class="r-grid" stroke="#eeeeee">');
  for (let v = step; v <= vMax + 1e-9; v += step) out.push(`<line x1="${M.left}" y1="${yOf(v)}" x2="${M.left + PW}" y2="${yOf(v)}"/>`);
  out.push('</g>');
  out.push('<g class="r-labels" text-anchor="end" fill="#333333">');
  for (let v = 0; v <= vMax + 1e-9; v += step) out.push(`<text x="${M.left - 6}" y="${r1(yOf(v) + 4)}">${fmtInt(v)}</text>`);
  out.push('</g>');
  const legend: string[] = [];
  let lx = M.left + 6;
  for (const s of series) {
    const colour = SERIES_COLOURS[s.key] ?? '#555555';
    const dash = s.kind === 'disk' ? ' stroke-dasharray="6 3"' : '';
    out.push(`<polyline class="resource" data-series="${esc(s.key)}" points="${s.points.map((p) => `${xOf(p.tMs)},${yOf(p.value / MiB)}`).join(' ')}" fill="none" stroke="${colour}" stroke-width="1.5"${dash}/>`);
    legend.push(`<line x1="${lx}" y1="${RTOP - 8}" x2="${lx + 18}" y2="${RTOP - 8}" stroke="${colour}" stroke-width="1.5"${dash}/><text x="${lx + 22}" y="${RTOP - 4}">${esc(s.label)}</text>`);
    lx += 22 + s.label.length * CH + 16;
  }
  out.push(`<g class="r-legend" fill="#333333">${legend.join('')}</g>`);
  return out;
}
