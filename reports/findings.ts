/**
 * The report's "Findings" section and junit's failure text, from the run's findings.jsonl
 * (oracle/findings.ts): a table of the first anomalies per counter with their places and
 * the nearest faults that landed before the committing object's checkpoint, one sentence
 * per counter with what all its findings share (reports/finding-shape.ts), and, when the
 * collected logs show it, the store's own loss of data (F-1, reports/store-loss.ts).
 */
import path from 'node:path';
import { COUNTER_NAMES, type CounterName } from '../lib/evidence.ts';
import { describeCounter, readFindings, type Finding } from '../oracle/findings.ts';
import type { RunEvidence } from './evidence.ts';
import { cell, table } from './format.ts';
import { describeShape, findingShapes } from './finding-shape.ts';
import { storeLossSignature, type StoreLossSignature } from './store-loss.ts';
import { EVIDENCE } from '../lib/run-store.ts';
import { existsOrGz, readTextOrGz } from '../lib/jsonl.ts';

/**
 * The evidence with the run's findings.jsonl attached (absent when the run has none), and
 * F-1's signature when the collected logs show the store losing an upload (reports/store-loss.ts).
 */
export type WithFindings = RunEvidence & { findings?: Finding[]; storeLoss?: StoreLossSignature };

/** The collected logs (logs/<host>/...) as text; a file that cannot be read is skipped. */
function readLogs(ev: RunEvidence, runDir: string): { path: string; text: string }[] {
  const out: { path: string; text: string }[] = [];
  for (const f of ev.files) {
    if (!f.path.startsWith('logs/')) continue;
    try {
      const text = readTextOrGz(path.join(runDir, f.path));
      if (text !== undefined) out.push({ path: f.path, text });
    } catch {
      // unreadable: the raw evidence section lists it all the same
    }
  }
  return out;
}

export function attachFindings(ev: RunEvidence, runDir: string): WithFindings {
  const f = path.join(runDir, EVIDENCE.findings.file);
  // The keys store-tamper faults deleted or replaced: an engine's refusal of one is its reaction to the tamper.
  const tampered = ev.chaos.filter((c) => c.kind === 'store-tamper' && c.phase === 'landed').flatMap((c) => ((c.evidence as { keys?: unknown } | undefined)?.keys as string[] | undefined) ?? []);
  const storeLoss = storeLossSignature(readLogs(ev, runDir), tampered.filter((k) => typeof k === 'string' && k.length > 0));
  return { ...ev, ...(existsOrGz(f) ? { findings: readFindings(f) } : {}), ...(storeLoss ? { storeLoss } : {}) };
}

/** The findings' paragraph on the store's own loss of data (F-1), when the logs show its signature. */
function storeLossLines(ev: WithFindings): string[] {
  const l = ev.storeLoss;
  if (!l) return [];
  const gaps = ev.recount?.counters.gaps ?? 0;
  return [
    `**The store lost data.** ${l.lines.toLocaleString('en-US')} ${l.lines === 1 ? 'line' : 'lines'} of the logs collected from ${l.hosts.join(', ')} ${l.lines === 1 ? 'shows' : 'show'} a re-commit answered InvalidPart with no object at the key, e.g. \`${cell(l.example)}\`. That is consistent with the store defect F-1 (docs/findings/minio-complete-cancel.md): the pinned MinIO, when a CompleteMultipartUpload loses its client, can leave the upload with 0 parts and no object, so no re-commit can bring the records back. ${gaps > 0 ? `The ${gaps.toLocaleString('en-US')} gaps the recount counted are then, at least in part, the store's loss, not the engine's: an engine that refuses to move past the lost checkpoint (as it must) commits nothing after it` : 'The findings below may then be the store\'s loss rather than the engine\'s'}. The verdict is not changed by this: it judges the bucket a consumer sees.`,
    '',
  ];
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
  const store = storeLossLines(ev);
  if (!ev.findings) return store.length ? ['## Findings', '', ...store] : [];
  if (!ev.findings.length) return raised.length || store.length ? ['## Findings', '', ...(raised.length ? [`findings.jsonl is empty although the recount raised ${raised.join(', ')}.`, ''] : []), ...store] : [];
  const out = ['## Findings', '', ...store, 'The first anomalies of each counter, where the recount found them, and the faults that landed before the committing object\'s checkpoint completed (nearest first; from findings.jsonl, chaos.jsonl and checkpoints.jsonl). A fault before an anomaly is a suspect, not a proof: `campaign shrink` tests which faults it needs.', ''];
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
    const shape = findingShapes(fs, ev.checkpoints, ev.chaos)[0];
    const shared = shape ? describeShape(shape) : null;
    if (shared) out.push(`  ${shared}`);
  }
  out.push('');
  return out;
}
