/**
 * timeline.svg: the run at a glance, hand-written SVG, no dependency.
 *
 * - committed events over time (samples.jsonl `events`) as a solid line, produced events
 *   (`produced`) as a dashed one;
 * - every landed fault as a shaded band from landed to healed (or to its last record when
 *   it never healed), coloured by kind, with a legend; one band per landed fault;
 * - every completed checkpoint (checkpoints.jsonl) as a tick under the time axis.
 *
 * Time runs from the oracle's first sample (its own elapsedS origin), so bands and lines
 * share one axis whatever clock wrote them. Output is a pure function of the evidence.
 */
import { FAULT_KINDS, type FaultKind } from '../lib/evidence.ts';
import type { RunEvidence } from './evidence.ts';
import { faultOutcomes } from './faults.ts';
import { esc, fmtClock, fmtInt } from './format.ts';

export const KIND_COLOURS: Record<FaultKind, string> = {
  'worker-kill': '#d62728',
  'coordinator-kill': '#9467bd',
  'protocol-point': '#ff7f0e',
  'store-outage': '#8c564b',
  partition: '#2ca02c',
  'packet-loss': '#17becf',
  'broker-restart': '#bcbd22',
  'process-pause': '#e377c2',
  'store-tamper': '#7f7f7f',
  'disk-full': '#1f77b4',
  'clock-step': '#aec7e8',
};

const W = 960;
const H = 420;
const M = { left: 80, right: 24, top: 48, bottom: 110 };
const PW = W - M.left - M.right;
const PH = H - M.top - M.bottom;

const r1 = (n: number) => Math.round(n * 10) / 10;

function niceStep(range: number, target: number): number {
  const raw = range / Math.max(1, target);
  const mag = 10 ** Math.floor(Math.log10(raw || 1));
  for (const m of [1, 2, 5, 10]) if (m * mag >= raw) return m * mag;
  return 10 * mag;
}

function timeStep(range: number): number {
  const steps = [10, 15, 30, 60, 120, 300, 600, 900, 1200, 1800, 3600, 7200];
  return steps.find((s) => range / s <= 10) ?? niceStep(range, 8);
}

/** The time origin (ms) and end (s) of the picture. */
function timeAxis(ev: RunEvidence): { t0: number; endS: number } | undefined {
  const first = ev.samples[0];
  const stamps = [
    ...ev.samples.map((s) => Date.parse(s.t)),
    ...ev.chaos.map((c) => Date.parse(c.t)),
    ...ev.checkpoints.map((c) => Date.parse(c.at)),
  ].filter(Number.isFinite);
  if (!stamps.length) return undefined;
  const t0 = first ? Date.parse(first.t) - first.elapsedS * 1000 : Math.min(...stamps);
  const endS = Math.max(1, (Math.max(...stamps) - t0) / 1000);
  return { t0, endS };
}

export function renderTimelineSvg(ev: RunEvidence): string {
  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="11">`);
  const title = `${ev.provenance?.runId ?? ev.dirName}: committed events, faults and checkpoints`;
  out.push(`<title>${esc(title)}</title>`);
  out.push(`<rect x="0" y="0" width="${W}" height="${H}" fill="#ffffff"/>`);
  out.push(`<text x="${M.left}" y="24" font-size="14" font-weight="bold">${esc(title)}</text>`);
  const axis = timeAxis(ev);
  if (!axis) {
    out.push(`<text x="${M.left}" y="${M.top + PH / 2}">No samples, faults or checkpoints in the evidence: nothing to draw.</text>`);
    out.push('</svg>');
    return out.join('\n') + '\n';
  }
  const { t0, endS } = axis;
  const xOf = (ms: number) => r1(M.left + (((ms - t0) / 1000) * PW) / endS);
  const maxY = Math.max(1, ...ev.samples.map((s) => Math.max(s.produced, s.events)));
  const yStep = niceStep(maxY, 6);
  const yMax = Math.ceil(maxY / yStep) * yStep;
  const yOf = (v: number) => r1(M.top + PH - (v * PH) / yMax);
  const bottom = M.top + PH;

  // Grid and axes.
  out.push('<g class="axes" stroke="#cccccc" stroke-width="1">');
  for (let v = 0; v <= yMax + 1e-9; v += yStep) out.push(`<line x1="${M.left}" y1="${yOf(v)}" x2="${M.left + PW}" y2="${yOf(v)}"/>`);
  out.push('</g>');
  out.push('<g class="y-labels" text-anchor="end" fill="#333333">');
  for (let v = 0; v <= yMax + 1e-9; v += yStep) out.push(`<text x="${M.left - 6}" y="${r1(yOf(v) + 4)}">${fmtInt(v)}</text>`);
  out.push('</g>');
  out.push(`<text x="16" y="${M.top + PH / 2}" transform="rotate(-90 16 ${M.top + PH / 2})" text-anchor="middle" fill="#333333">events</text>`);
  const tStep = timeStep(endS);
  out.push('<g class="x-labels" text-anchor="middle" fill="#333333">');
  for (let s = 0; s <= endS + 1e-9; s += tStep) out.push(`<text x="${xOf(t0 + s * 1000)}" y="${bottom + 26}">${fmtClock(s)}</text>`);
  out.push('</g>');
  out.push(`<text x="${M.left + PW / 2}" y="${bottom + 42}" text-anchor="middle" fill="#333333">time since the oracle started (mm:ss)</text>`);

  // Fault windows: one band per landed fault.
  const landed = faultOutcomes(ev).filter((o) => o.landedAt !== undefined);
  out.push('<g class="faults">');
  for (const o of landed) {
    const x1 = xOf(Date.parse(o.landedAt!));
    const end = o.healedAt ?? o.endedAt ?? o.landedAt!;
    const x2 = Math.max(x1 + 2, xOf(Date.parse(end)));
    const what = [o.id, o.kind, o.point ?? o.target, o.composition, o.status].filter(Boolean).join(' · ');
    out.push(
      `<rect class="fault-band" data-fault="${esc(o.id)}" data-kind="${o.kind}" x="${x1}" y="${M.top}" width="${r1(x2 - x1)}" height="${PH}" fill="${KIND_COLOURS[o.kind]}" fill-opacity="0.28"><title>${esc(what)}</title></rect>`,
    );
  }
  out.push('</g>');

  // Lines.
  const pts = (f: (s: (typeof ev.samples)[number]) => number) => ev.samples.map((s) => `${xOf(Date.parse(s.t))},${yOf(f(s))}`).join(' ');
  if (ev.samples.length) {
    out.push(`<polyline class="produced" points="${pts((s) => s.produced)}" fill="none" stroke="#7f7f7f" stroke-width="1.5" stroke-dasharray="5 3"/>`);
    out.push(`<polyline class="committed" points="${pts((s) => s.events)}" fill="none" stroke="#1f77b4" stroke-width="2"/>`);
  }

  // Axis frame and checkpoint ticks.
  out.push(`<line x1="${M.left}" y1="${bottom}" x2="${M.left + PW}" y2="${bottom}" stroke="#333333"/>`);
  out.push(`<line x1="${M.left}" y1="${M.top}" x2="${M.left}" y2="${bottom}" stroke="#333333"/>`);
  out.push('<g class="checkpoints" stroke="#1f77b4" stroke-width="1">');
  for (const c of ev.checkpoints) {
    const x = xOf(Date.parse(c.at));
    out.push(`<line class="checkpoint" x1="${x}" y1="${bottom + 2}" x2="${x}" y2="${bottom + 10}"/>`);
  }
  out.push('</g>');

  // Legend.
  const ly = H - 34;
  const items: string[] = [];
  let x = M.left;
  items.push(`<line x1="${x}" y1="${ly}" x2="${x + 22}" y2="${ly}" stroke="#1f77b4" stroke-width="2"/><text x="${x + 26}" y="${ly + 4}">committed (oracle)</text>`);
  x += 140;
  items.push(`<line x1="${x}" y1="${ly}" x2="${x + 22}" y2="${ly}" stroke="#7f7f7f" stroke-width="1.5" stroke-dasharray="5 3"/><text x="${x + 26}" y="${ly + 4}">produced</text>`);
  x += 90;
  items.push(`<line x1="${x + 10}" y1="${ly - 5}" x2="${x + 10}" y2="${ly + 5}" stroke="#1f77b4"/><text x="${x + 18}" y="${ly + 4}">checkpoint (${fmtInt(ev.checkpoints.length)})</text>`);
  let kx = M.left;
  const ky = H - 14;
  for (const k of FAULT_KINDS) {
    const n = landed.filter((o) => o.kind === k).length;
    items.push(`<rect x="${kx}" y="${ky - 9}" width="12" height="12" fill="${KIND_COLOURS[k]}" fill-opacity="0.5"/><text x="${kx + 16}" y="${ky + 1}">${k} (${n})</text>`);
    kx += 122;
  }
  out.push(`<g class="legend" fill="#333333">${items.join('')}</g>`);
  out.push('</svg>');
  return out.join('\n') + '\n';
}
