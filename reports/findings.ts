/**
 * The report's "Findings" section and junit's failure text, from the run's findings.jsonl
 * (oracle/findings.ts): a table of the first anomalies per counter with their places and
 * the nearest faults that landed before the committing object's checkpoint, and one
 * sentence per counter.
 */
import path from 'node:path';
import { COUNTER_NAMES, type CounterName } from '../lib/evidence.ts';
import { describeCounter, readFindings, type Finding } from '../oracle/findings.ts';
import type { RunEvidence } from './evidence.ts';
import { table } from './format.ts';
import { EVIDENCE } from '../lib/run-store.ts';
import { existsOrGz } from '../lib/jsonl.ts';

/** The evidence with the run's findings.jsonl attached (absent when the run has none). */
export type WithFindings = RunEvidence & { findings?: Finding[] };

export function attachFindings(ev: RunEvidence, runDir: string): WithFindings {
  const f = path.join(runDir, EVIDENCE.findings.file);
  return existsOrGz(f) ? { ...ev, findings: readFindings(f) } : ev;
}

function byCounter(fs: readonly Finding[]): Map<CounterName, Finding[]> {
  const m = new Map<CounterName, Finding[]>();
  for (const c of COUNTER_NAMES) {
    const x = fs.filter((f) => f.counter === c);
    if (x.length) m.set(c, x);
  }
  return m;
}

/** One sentence per counter with findings (junit failures carry them). */
export function findingSentences(ev: WithFindings): Map<CounterName, string> {
  const out = new Map<CounterName, string>();
  for (const [c, fs] of byCounter(ev.findings ?? [])) out.set(c, describeCounter(c, fs));
  return out;
}

function place(f: Finding): string {
  return f.objects
    .map((o) => `${o.key}${o.line !== null ? `:${o.line}` : ''}${o.epoch !== null ? ` (epoch ${o.epoch}, chk ${o.checkpoint}, subtask ${o.subtask})` : ''}`)
    .join(' and ');
}

/** The store-tamper fault (the harness's own foreign writer) that touched one of a finding's objects, if any. */
function tamperOf(ev: WithFindings, f: Finding): { faultId: string; variant: string } | undefined {
  const keys = new Set(f.objects.map((o) => o.key));
  return ev.verdict?.tamper?.reactions.find((r) => r.keys.some((k) => keys.has(k)));
}

export function findingsSection(ev: WithFindings, perCounter = 3): string[] {
  const raised = COUNTER_NAMES.filter((c) => (ev.recount?.counters[c] ?? 0) > 0);
  // No findings.jsonl (a run from before findings were kept, or no recount): no section, the counters are reported above.
  if (!ev.findings) return [];
  if (!ev.findings.length) return raised.length ? ['## Findings', '', `findings.jsonl is empty although the recount raised ${raised.join(', ')}.`, ''] : [];
  const out = ['## Findings', '', 'The first anomalies of each counter, where the recount found them, and the faults that landed before the committing object\'s checkpoint completed (nearest first; from findings.jsonl, chaos.jsonl and checkpoints.jsonl). A fault before an anomaly is a suspect, not a proof: `campaign shrink` tests which faults it needs.', ''];
  const rows: unknown[][] = [];
  for (const [c, fs] of byCounter(ev.findings)) {
    for (const f of fs.slice(0, perCounter)) {
      const tamper = tamperOf(ev, f);
      rows.push([
        `${c} ${f.n}/${f.total}`,
        f.event ? `(${f.event.p}, ${f.event.seq})${f.range ? ` … ${f.range.to - 1}` : ''}` : '—',
        place(f) || '—',
        tamper ? `the harness's own ${tamper.faultId} store-tamper (${tamper.variant}) on this object: reported apart, not the engine's` : f.cause ? (f.cause.faults.length ? f.cause.faults.map((w) => `${w.faultId} ${w.kind}${w.point ? ` ${w.point}` : ''}${w.target ? ` ${w.target}` : ''}, ${w.beforeCheckpointS} s before chk ${f.cause!.checkpoint.id}`).join('; ') : `none before chk ${f.cause.checkpoint.id}`) : 'n/a',
        f.cause?.epochChange ? `epoch ${f.cause.epochChange.epoch}${f.cause.epochChange.previousEpoch !== null ? ` (from ${f.cause.epochChange.previousEpoch})` : ''}${f.cause.epochChange.firstCheckpoint !== null ? ` from chk ${f.cause.epochChange.firstCheckpoint}` : ''}` : 'n/a',
      ]);
    }
  }
  out.push(table(['Counter (finding/total)', 'Event (p, seq)', 'Objects (key:line)', 'Nearest faults before', 'Epoch'], rows), '');
  for (const [c, s] of findingSentences(ev)) {
    const fs = ev.findings.filter((f) => f.counter === c);
    const own = fs.filter((f) => tamperOf(ev, f)).length;
    out.push(`- ${s}${own ? ` (${own === fs.length ? 'every finding kept' : `${own} of ${fs.length} findings kept`} on an object the harness's own store-tamper faults touched: reported apart, not counted against the engine)` : ''}`);
  }
  out.push('');
  return out;
}
