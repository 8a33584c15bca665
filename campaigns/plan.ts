/**
 * The seeded planner: a resolved campaign → the soak's fault timeline (PlannedFault[]).
 *
 * 1. The battery is expanded into slots, in file order: one per fault (`count` per entry,
 *    `count` per listed point for protocol points) and one per composition run.
 * 2. The slots are shuffled by the seed (Fisher–Yates on a seedrandom stream); then the runs
 *    of a composition marked `last` move after every other slot, in their shuffled order
 *    (the jitter and targets below are then drawn in that order).
 * 3. Slot i lands at startAfterS + i × spacingS + a seeded jitter in [0, jitterS] (whole
 *    seconds); a composition's steps land at its slot + their afterS and share one
 *    composition id (`<name>#<n>`). A hold may outlast the gap to the next slot
 *    (durationS > spacingS - jitterS): the plan says when a slot may start at the earliest.
 *    Slots never overlap on the rig: the chaos controller runs them one after another, each
 *    at its planned time or once the previous one has healed and recovered, whichever is
 *    later (chaos/controller.ts), so one slot's heal cannot end another slot's fault; a long
 *    hold delays the slots after it. Only a composition's own steps overlap, on purpose (the
 *    loader refuses two of them holding one kind on one target at once).
 * 4. Targets are picked by the seed from each fault's target list; coordinator.* points
 *    target the coordinator, sink.* points with no targets are left to whichever worker
 *    reaches the point first.
 * 5. Faults are numbered f001, f002… in time order.
 *
 * The random stream is consumed in one fixed order (shuffle, then per slot: jitter, then
 * targets), so the same seed gives the same timeline byte for byte, and nothing but the
 * resolved campaign goes in: no clock, no rig.
 */
import seedrandom from 'seedrandom';
import { type FaultKind, type PlannedFault } from '../lib/evidence.ts';
import { FAULT_KINDS, FAULT_SPECS } from '../chaos/kinds.ts';
import { describeStoreLayout } from '../rig/store.ts';
import { faultParams, type ResolvedCampaign, type ResolvedCompositionStep } from './types.ts';

/** One fault of a slot: the same shape as a composition step (a lone fault is a one-step slot). */
type SlotFault = ResolvedCompositionStep;

interface Slot {
  faults: SlotFault[];
  /** Composition name, for a composition slot. */
  composition?: string;
  /** The composition is scheduled after every other slot. */
  last?: boolean;
}

function expand(c: ResolvedCampaign): Slot[] {
  const slots: Slot[] = [];
  for (const f of c.faults) {
    const base = { kind: f.kind, afterS: 0, targets: f.targets, ...faultParams(f) };
    if (f.kind === 'protocol-point') {
      for (const point of f.points ?? []) for (let i = 0; i < f.count; i++) slots.push({ faults: [{ ...base, point }] });
    } else {
      for (let i = 0; i < f.count; i++) slots.push({ faults: [base] });
    }
  }
  for (const comp of c.compositions) {
    for (let i = 0; i < comp.count; i++) slots.push({ composition: comp.name, faults: comp.steps.map((s) => ({ ...s })), ...(comp.last ? { last: true } : {}) });
  }
  return slots;
}

/** The seeded timeline of a resolved campaign. Pure: same campaign (seed included), same result. */
export function planCampaign(c: ResolvedCampaign): PlannedFault[] {
  const rng = seedrandom(`clink-qual/plan/${c.seed}`);
  const slots = expand(c);
  for (let i = slots.length - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    [slots[i], slots[j]] = [slots[j]!, slots[i]!];
  }
  // A composition marked `last` goes after every other slot, keeping the shuffled order
  // within each group (a stable move: the random stream is consumed as without it).
  slots.sort((a, b) => Number(a.last ?? false) - Number(b.last ?? false));
  const seen = new Map<string, number>();
  const placed: (Omit<PlannedFault, 'id'> & { order: number })[] = [];
  let order = 0;
  slots.forEach((slot, i) => {
    const at = c.schedule.startAfterS + i * c.schedule.spacingS + Math.floor(rng() * (c.schedule.jitterS + 1));
    let composition: string | undefined;
    if (slot.composition) {
      const n = (seen.get(slot.composition) ?? 0) + 1;
      seen.set(slot.composition, n);
      composition = `${slot.composition}#${n}`;
    }
    for (const f of slot.faults) {
      let target: string | undefined;
      if (f.kind === 'protocol-point' && f.point?.startsWith('coordinator.')) target = 'coordinator';
      else if (f.targets.length) target = f.targets[Math.floor(rng() * f.targets.length)];
      placed.push({
        order: order++,
        kind: f.kind,
        atS: at + f.afterS,
        ...(target !== undefined ? { target } : {}),
        ...(f.point !== undefined ? { point: f.point } : {}),
        ...faultParams(f),
        ...(composition ? { composition } : {}),
      });
    }
  });
  placed.sort((a, b) => a.atS - b.atS || a.order - b.order);
  return placed.map(({ order: _order, ...f }, i) => ({ id: `f${String(i + 1).padStart(3, '0')}`, ...f }));
}

/** plan.json's exact text: `campaign plan --json` prints the same bytes the runner stores. */
export function formatPlanJson(plan: PlannedFault[]): string {
  return JSON.stringify(plan, null, 2) + '\n';
}

/** Faults per kind (every kind listed, zero included), in FAULT_KINDS order. */
export function totalsByKind(plan: PlannedFault[]): Record<FaultKind, number> {
  const t = Object.fromEntries(FAULT_KINDS.map((k) => [k, 0])) as Record<FaultKind, number>;
  for (const f of plan) t[f.kind]++;
  return t;
}

export interface WallTime {
  gateS: number;
  soakS: number;
  drainS: number;
  recountS: number;
  totalS: number;
}

/** The expected wall time of a run, bounded by its deadlines: gate + soak + drain + recount. */
export function expectedWallTime(c: ResolvedCampaign): WallTime {
  const w = { gateS: c.gate.deadlineS, soakS: c.workload.soakS, drainS: c.deadlines.drainS, recountS: c.deadlines.recountS };
  return { ...w, totalS: w.gateS + w.soakS + w.drainS + w.recountS };
}

/** 75 → "1 min 15 s", 7200 → "2 h", 3725 → "1 h 2 min 5 s". */
export function formatDuration(totalS: number): string {
  const s = Math.round(totalS);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const r = s % 60;
  const parts = [h ? `${h} h` : '', m ? `${m} min` : '', r || (!h && !m) ? `${r} s` : ''].filter(Boolean);
  return parts.join(' ');
}

/** mm:ss (or h:mm:ss) of a second offset. */
export function clock(s: number): string {
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const r = Math.floor(s % 60);
  const mm = String(m).padStart(2, '0');
  const ss = String(r).padStart(2, '0');
  return h ? `${h}:${mm}:${ss}` : `${mm}:${ss}`;
}

/** The timeline as a readable table, with totals by kind and the expected wall time. */
export function renderPlanTable(c: ResolvedCampaign, plan: PlannedFault[]): string {
  const rows = plan.map((f) => [
    `${clock(f.atS)} (${f.atS} s)`,
    f.id,
    f.kind,
    f.point
      ? `${f.point}${f.target && f.target !== 'coordinator' ? ` on ${f.target}` : ''}`
      : [
          f.target,
          f.share !== undefined ? `drop ${Math.round(f.share * 100)}%` : undefined,
          f.variant,
          f.offsetS !== undefined ? `clock ${f.offsetS > 0 ? '+' : ''}${f.offsetS} s` : undefined,
        ]
          .filter(Boolean)
          .join(' '),
    FAULT_SPECS[f.kind].heldThroughRecount?.includes(f.variant ?? '') ? "to the recount's held pass" : f.durationS !== undefined ? `${f.durationS} s` : '-',
    f.composition ?? '',
  ]);
  const head = ['at', 'id', 'kind', 'target / point', 'held', 'composition'];
  const widths = head.map((h, i) => rows.reduce((w, r) => Math.max(w, r[i]!.length), h.length)); // no spread: a long plan would overflow the stack
  const line = (r: string[]) => r.map((v, i) => v.padEnd(widths[i]!)).join('  ').trimEnd();
  const out: string[] = [];
  out.push(`campaign ${c.name} (${c.file}), seed ${JSON.stringify(c.seed)}, store ${describeStoreLayout(c.store ?? 'minio', c.storeDrives ?? 1)}`);
  out.push(
    `workload: ${c.workload.rate} events/s, ${c.workload.partitions} partitions, ${c.workload.keys} keys, checkpoint every ${c.workload.checkpointIntervalS} s, soak ${formatDuration(c.workload.soakS)}`,
  );
  out.push(`schedule: first fault after ${c.schedule.startAfterS} s, one slot every ${c.schedule.spacingS} s, jitter up to ${c.schedule.jitterS} s (times are from the start of the soak)`);
  out.push('');
  out.push(line(head));
  out.push(line(widths.map((w) => '-'.repeat(w))));
  for (const r of rows) out.push(line(r));
  out.push('');
  const totals = totalsByKind(plan);
  // Only the kinds the campaign schedules: with eleven kinds, a row of zeros hides the answer.
  out.push(`faults: ${plan.length} (${FAULT_KINDS.filter((k) => totals[k] > 0).map((k) => `${k} ${totals[k]}`).join(', ')})`);
  const comps = new Set(plan.filter((f) => f.composition).map((f) => f.composition));
  if (comps.size) out.push(`compositions: ${comps.size} (${c.compositions.map((k) => `${k.name} ×${k.count}`).join(', ')})`);
  const points = [...new Set(plan.filter((f) => f.point).map((f) => f.point!))];
  if (points.length) out.push(`protocol points: ${points.join(', ')}`);
  const w = expectedWallTime(c);
  out.push(
    `expected wall time: ${formatDuration(w.totalS)} at most (gate ${formatDuration(w.gateS)} + soak ${formatDuration(w.soakS)} + drain ${formatDuration(w.drainS)} + recount ${formatDuration(w.recountS)})`,
  );
  return out.join('\n');
}
