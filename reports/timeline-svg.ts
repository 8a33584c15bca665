/**
 * timeline.svg: the run at a glance, hand-written SVG, no dependency.
 *
 * - a phase lane (gate, soak, drain, settle, recount from phases.jsonl), with the phase
 *   boundaries drawn as dashed lines through both panels;
 * - committed events over time (samples.jsonl `events`) as a solid line, produced events
 *   (`produced`) as a dashed one;
 * - every landed fault as a shaded band from landed to healed (or to its last record when
 *   it never healed), coloured by kind, with a legend; its id is written in the band when
 *   the band is wide enough, else upright in the id lane above the plot when there is room;
 * - every completed checkpoint (checkpoints.jsonl) as a tick under the time axis;
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
import { faultOutcomes } from './faults.ts';
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
const H = 660;
export const M = { left: 80, right: 24 };
export const PW = W - M.left - M.right;
const PHASE_Y = 40;
const LANE_Y = 60; // fault-id lane: 60..100
const TOP = 104; // events plot
const PH = 230;
const BOTTOM = TOP + PH;
const RTOP = BOTTOM + 76; // resources panel
const RH = 120;
const RBOTTOM = RTOP + RH;
/** Approximate width of one character at 11 px. */
const CH = 6.4;

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
    ...ev.checkpoints.map((c) => Date.parse(c.at)),
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

export function renderTimelineSvg(ev: RunEvidence): string {
  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="11">`);
  const title = `${ev.provenance?.runId ?? ev.dirName}: committed events, faults, checkpoints and resources`;
  out.push(`<title>${esc(title)}</title>`);
  out.push(`<rect x="0" y="0" width="${W}" height="${H}" fill="#ffffff"/>`);
  out.push(`<text x="${M.left}" y="24" font-size="14" font-weight="bold">${esc(title)}</text>`);
  const axis = timeAxis(ev);
  if (!axis) {
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
  out.push('<g class="x-labels" text-anchor="middle" fill="#333333">');
  for (let s = Math.ceil(startS / tStep) * tStep; s <= endS + 1e-9; s += tStep) {
    const x = xOf(originMs + s * 1000);
    out.push(`<line x1="${x}" y1="${BOTTOM}" x2="${x}" y2="${BOTTOM + 14}" stroke="#333333"/><text class="tick" data-s="${s}" x="${x}" y="${BOTTOM + 26}">${fmtSignedClock(s, endS >= 3600)}</text>`);
  }
  out.push('</g>');
  out.push(`<text class="x-title" x="${M.left + PW / 2}" y="${BOTTOM + 42}" text-anchor="middle" fill="#333333">${esc(axis.label)}</text>`);

  // Fault windows: one band per landed fault, labelled by id when there is room.
  const landed = faultOutcomes(ev)
    .filter((o) => o.landedAt !== undefined)
    .sort((a, b) => Date.parse(a.landedAt!) - Date.parse(b.landedAt!));
  out.push('<g class="faults">');
  const labels: string[] = [];
  let lastLaneX = -Infinity;
  let unlabelled = 0;
  for (const o of landed) {
    const x1 = xOf(Date.parse(o.landedAt!));
    const end = o.healedAt ?? o.endedAt ?? o.landedAt!;
    const x2 = Math.max(x1 + 2, xOf(Date.parse(end)));
    const w = r1(x2 - x1);
    const what = [o.id, o.kind, o.point ?? o.target, o.composition, o.status].filter(Boolean).join(' · ');
    out.push(
      `<rect class="fault-band" data-fault="${esc(o.id)}" data-kind="${o.kind}" x="${x1}" y="${TOP}" width="${w}" height="${RBOTTOM - TOP}" fill="${KIND_COLOURS[o.kind]}" fill-opacity="0.28"><title>${esc(what)}</title></rect>`,
    );
    if (w >= o.id.length * CH + 4) labels.push(`<text class="fault-id" data-fault="${esc(o.id)}" x="${r1(x1 + w / 2)}" y="${TOP + 12}" text-anchor="middle">${esc(o.id)}</text>`);
    else if (x1 - lastLaneX >= 12) {
      const cx = r1(x1 + w / 2 + 4);
      labels.push(`<text class="fault-id" data-fault="${esc(o.id)}" x="${cx}" y="${LANE_Y + 38}" transform="rotate(-90 ${cx} ${LANE_Y + 38})">${esc(o.id)}</text>`);
      out.push(`<line x1="${r1(x1 + w / 2)}" y1="${LANE_Y + 38}" x2="${r1(x1 + w / 2)}" y2="${TOP}" stroke="${KIND_COLOURS[o.kind]}" stroke-width="1"/>`);
      lastLaneX = x1;
    } else unlabelled++;
  }
  out.push('</g>');
  out.push(`<g class="fault-ids" fill="#222222">${labels.join('')}</g>`);

  // Lines.
  const pts = (f: (s: (typeof ev.samples)[number]) => number) => ev.samples.map((s) => `${xOf(Date.parse(s.t))},${yOf(f(s))}`).join(' ');
  if (ev.samples.length) {
    out.push(`<polyline class="produced" points="${pts((s) => s.produced)}" fill="none" stroke="#7f7f7f" stroke-width="1.5" stroke-dasharray="5 3"/>`);
    out.push(`<polyline class="committed" points="${pts((s) => s.events)}" fill="none" stroke="#1f77b4" stroke-width="2"/>`);
  }

  // Axis frame and checkpoint ticks.
  out.push(`<line x1="${M.left}" y1="${BOTTOM}" x2="${M.left + PW}" y2="${BOTTOM}" stroke="#333333"/>`);
  out.push(`<line x1="${M.left}" y1="${TOP}" x2="${M.left}" y2="${BOTTOM}" stroke="#333333"/>`);
  out.push('<g class="checkpoints" stroke="#1f77b4" stroke-width="1" stroke-opacity="0.6">');
  for (const c of ev.checkpoints) {
    const x = xOf(Date.parse(c.at));
    out.push(`<line class="checkpoint" x1="${x}" y1="${BOTTOM + 2}" x2="${x}" y2="${BOTTOM + 10}"/>`);
  }
  out.push('</g>');

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
  items.push(`<line x1="${x + 10}" y1="${ly - 5}" x2="${x + 10}" y2="${ly + 5}" stroke="#1f77b4"/><text x="${x + 18}" y="${ly + 4}">checkpoint (${fmtInt(ev.checkpoints.length)})</text>`);
  x += 130;
  for (const p of RUN_PHASES.filter((ph) => spans.some((s) => s.phase === ph))) {
    items.push(`<rect x="${x}" y="${ly - 6}" width="12" height="10" fill="${PHASE_COLOURS[p]}" stroke="#999999" stroke-width="0.5"/><text x="${x + 15}" y="${ly + 4}">${p}</text>`);
    x += 22 + p.length * CH;
  }
  x += 10;
  if (unlabelled) items.push(`<text x="${x}" y="${ly + 4}">${fmtInt(unlabelled)} fault id${unlabelled === 1 ? '' : 's'} not written (too close to the previous one): see the report's fault log</text>`);
  ly += 22;
  let kx = M.left;
  // The kinds this run planned or landed (eleven kinds with zeros would bury the ones that matter).
  for (const k of FAULT_KINDS.filter((x) => landed.some((o) => o.kind === x) || (ev.plan ?? []).some((f) => f.kind === x))) {
    const n = landed.filter((o) => o.kind === k).length;
    if (kx + 110 > W) {
      kx = M.left;
      ly += 18;
    }
    items.push(`<rect x="${kx}" y="${ly - 9}" width="12" height="12" fill="${KIND_COLOURS[k]}" fill-opacity="0.5"/><text x="${kx + 16}" y="${ly + 1}">${k} (${n})</text>`);
    kx += 140;
  }
  out.push(`<g class="legend" fill="#333333">${items.join('')}</g>`);
  out.push('</svg>');
  return out.join('\n') + '\n';
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
