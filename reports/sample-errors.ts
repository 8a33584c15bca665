/**
 * When the oracle's transient store errors happened, relative to the faults: each sample
 * that met errors (samples.jsonl) is placed by the interval it covers (from the sample
 * before it to its own time) against the fault windows of chaos.jsonl (from a fault's
 * landing to its heal). An error inside a store-outage window is the store being away on
 * purpose; one outside every window is the store failing on its own, which a reader of the
 * report should see apart.
 */
import type { FaultKind } from '../lib/evidence.ts';
import { FAULT_KINDS } from '../chaos/kinds.ts';
import type { RunEvidence } from './evidence.ts';
import type { FaultOutcome } from './faults.ts';
import { fmtInt, listWords } from './format.ts';

export interface SampleErrorTiming {
  /** Errors summed over every sample. */
  errors: number;
  /** Samples that met at least one. */
  samples: number;
  /** Errors whose sample overlapped a window of this kind (a store outage first, then FAULT_KINDS order); kinds with none left out. */
  byKind: { kind: FaultKind; errors: number }[];
  /** Errors whose sample overlapped no fault window. */
  outside: number;
}

/** Kinds in the order a sample overlapping several windows is placed: the store's own outage first. */
const PRIORITY: FaultKind[] = ['store-outage', ...FAULT_KINDS.filter((k) => k !== 'store-outage')];

/** The transient sample errors of the run, placed against the fault windows. */
export function sampleErrorTiming(ev: RunEvidence, outcomes: FaultOutcome[]): SampleErrorTiming {
  const windows = outcomes
    .filter((o) => o.landedAt !== undefined)
    .map((o) => ({ kind: o.kind, from: Date.parse(o.landedAt!), to: Date.parse(o.healedAt ?? o.endedAt ?? o.landedAt!) }));
  const counts = new Map<FaultKind, number>();
  let errors = 0;
  let samples = 0;
  let outside = 0;
  ev.samples.forEach((s, i) => {
    const n = s.errors ?? 0;
    if (n <= 0) return;
    errors += n;
    samples++;
    const to = Date.parse(s.t);
    const prev = i > 0 ? Date.parse(ev.samples[i - 1]!.t) : to;
    const kind = PRIORITY.find((k) => windows.some((w) => w.kind === k && w.from <= to && w.to >= prev));
    if (kind) counts.set(kind, (counts.get(kind) ?? 0) + n);
    else outside += n;
  });
  return { errors, samples, byKind: PRIORITY.filter((k) => counts.has(k)).map((kind) => ({ kind, errors: counts.get(kind)! })), outside };
}

/** "14 of 16 inside a store-outage window and 2 outside any fault window"; "none" without errors. */
export function describeSampleErrorTiming(x: SampleErrorTiming): string {
  if (x.errors === 0) return 'none';
  const parts = x.byKind.map((k) => `${fmtInt(k.errors)}${k === x.byKind[0] ? ` of ${fmtInt(x.errors)}` : ''} inside a ${k.kind} window`);
  if (x.outside) parts.push(`${fmtInt(x.outside)}${parts.length ? '' : ` of ${fmtInt(x.errors)}`} outside any fault window`);
  return listWords(parts);
}
