/**
 * Findings: the recount's anomalies as evidence (findings.jsonl), one line per anomaly,
 * at most `cap` per counter, each line carrying its counter's total.
 *
 * The collector keeps each object's runs of consecutive events (partition, first seq,
 * length, in line order: what judgeBody already computes), so after the recount it can
 * say which objects hold a duplicated event, at which line, and which ranges are missing,
 * without a second read of the bucket. A line number is exact when the object holds
 * nothing but event lines; otherwise it is left null.
 *
 * Place: the subtask, epoch and checkpoint of an object, as the engine reads its own key
 * (Engine.placeOfObject, given to the collector); null where the engine's keys do not say
 * (Flink's part files), or when no engine is named. Cause (attributeCauses): for the first
 * findings of each counter, the faults whose windows (landed → recovered, chaos.jsonl)
 * began before the committing object's checkpoint completed (checkpoints.jsonl), nearest
 * first, and the epoch change the object belongs to.
 */
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { ObjectPlace } from '../engine/engine.ts';
import { COUNTER_NAMES, type CounterName, type Counters } from '../lib/evidence.ts';
import { readJsonl } from '../lib/jsonl.ts';
import { checkpointHarnessMs } from '../lib/checkpoint-clock.ts';
import type { BodyJudgement } from './tally.ts';
import { EVIDENCE } from '../lib/run-store.ts';

export interface FindingObject {
  key: string;
  /** 1-based line of the event (or the problem) in the object; null when not exact. */
  line: number | null;
  subtask: number | null;
  epoch: number | null;
  checkpoint: number | null;
  /** When the running oracle first saw the object (ledger.jsonl firstSeen); null when it never did. */
  firstSeen: string | null;
}

export interface FaultWindow {
  faultId: string;
  kind: string;
  target?: string;
  point?: string;
  landed: string;
  /** recovered (or healed) time; null when it never recovered. */
  recovered: string | null;
  /** Seconds from the fault's landing to the checkpoint's completion. */
  beforeCheckpointS: number;
}

export interface FindingCause {
  /**
   * The checkpoint the object belongs to and when it completed. When checkpoints.jsonl has no
   * completion for it (an aborted checkpoint, or an id a fenceless zombie invented), `at` is
   * the earlier of the next recorded completion (`timeOf` its id) and the oracle's first
   * sight of the object (`timedBy`), both times by which the object existed; null when
   * there is neither.
   */
  checkpoint: { id: number; at: string | null; epoch: number | null; timeOf?: number; timedBy?: 'next checkpoint' | 'oracle first sight' };
  /** Faults that landed before that checkpoint completed, nearest first (at most 3). */
  faults: FaultWindow[];
  /** The object's epoch and where it began: its first recorded checkpoint. */
  epochChange: { epoch: number; previousEpoch: number | null; firstCheckpoint: number | null; at: string | null } | null;
}

export interface Finding {
  counter: CounterName;
  /** 1-based index among this counter's findings. */
  n: number;
  /** The counter's total in the recount (the findings are capped; the total is not). */
  total: number;
  /** The (first) event concerned, when the anomaly is about events. */
  event: { p: number; seq: number } | null;
  /** The range of sequences it covers, [from, to), when more than one. */
  range?: { from: number; to: number };
  objects: FindingObject[];
  detail: string;
  cause?: FindingCause;
}

/** Where an object belongs, read from its key by the engine that wrote it (Engine.placeOfObject). */
export type PlaceOfKey = (key: string) => ObjectPlace;

/** The place of any key when no engine reads it: nothing known. */
export const unplaced: PlaceOfKey = () => ({ subtask: null, epoch: null, checkpoint: null });

interface Obj {
  key: string;
  runs: number[];
  /** True when every line is an event line (line numbers are then exact). */
  eventsOnly: boolean;
  problem?: { line: number | null; text: string; corrupted: boolean; foreign: number };
}

export class FindingsCollector {
  readonly cap: number;
  readonly #placeOf: PlaceOfKey;
  readonly #objects: Obj[] = [];
  readonly #mutations: { key: string; detail: string }[] = [];

  /** `placeOf` reads an object's key (the engine's placeOfObject); by default nothing is placed. */
  constructor(cap = 20, placeOf: PlaceOfKey = unplaced) {
    this.cap = cap;
    this.#placeOf = placeOf;
  }

  add(key: string, b: BodyJudgement): void {
    const o: Obj = { key, runs: Array.from(b.runs), eventsOnly: b.lines === b.events };
    if (b.firstProblem !== undefined || b.corrupted || b.foreign > 0) {
      const m = /line (\d+)/.exec(b.firstProblem ?? '');
      o.problem = { line: m ? Number(m[1]) : null, text: b.firstProblem ?? `${key}: corrupted`, corrupted: b.corrupted, foreign: b.foreign };
    }
    this.#objects.push(o);
  }

  addMutation(key: string, detail: string): void {
    this.#mutations.push({ key, detail });
  }

  #place(key: string): ObjectPlace {
    const p = this.#placeOf(key);
    return { subtask: p.subtask, epoch: p.epoch, checkpoint: p.checkpoint };
  }

  /** The line of event (p, seq) in object o, when exact. */
  static lineOf(o: { runs: readonly number[]; eventsOnly: boolean }, p: number, seq: number): number | null {
    if (!o.eventsOnly) return null;
    let before = 0;
    for (let r = 0; r + 2 < o.runs.length; r += 3) {
      const rp = o.runs[r]!;
      const from = o.runs[r + 1]!;
      const len = o.runs[r + 2]!;
      if (rp === p && seq >= from && seq < from + len) return before + (seq - from) + 1;
      before += len;
    }
    return null;
  }

  /** The findings, capped per counter, given the recount's counters and the produced counts. */
  finish(counters: Counters, produced: readonly number[], firstSeen: ReadonlyMap<string, string> = new Map()): Finding[] {
    const out: Finding[] = [];
    const per = new Map<CounterName, number>();
    const push = (f: Omit<Finding, 'n' | 'total'>): boolean => {
      const n = (per.get(f.counter) ?? 0) + 1;
      if (n > this.cap) return false;
      per.set(f.counter, n);
      out.push({ ...f, n, total: counters[f.counter] });
      return true;
    };
    const objAt = (o: Obj, p: number, seq: number): FindingObject => ({ key: o.key, line: FindingsCollector.lineOf(o, p, seq), ...this.#place(o.key), firstSeen: firstSeen.get(o.key) ?? null });
    // Object order: by key, so the findings do not depend on the fetch order.
    const objs = [...this.#objects].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    // The intervals of each partition, one pass over the objects (no spread: a bucket may hold 10^5 objects).
    const byPartition: { from: number; to: number; o: Obj }[][] = Array.from({ length: produced.length }, () => []);
    for (const o of objs) {
      for (let r = 0; r + 2 < o.runs.length; r += 3) {
        const p = o.runs[r]!;
        while (byPartition.length <= p) byPartition.push([]);
        byPartition[p]!.push({ from: o.runs[r + 1]!, to: o.runs[r + 1]! + o.runs[r + 2]!, o });
      }
    }
    for (let p = 0; p < byPartition.length; p++) {
      const iv = byPartition[p]!;
      iv.sort((a, b) => a.from - b.from || a.to - b.to);
      // Duplicates: each interval overlapping what earlier intervals already cover.
      let coverEnd = 0;
      let coverObj: Obj | undefined;
      let gapFrom = 0;
      const gaps: { from: number; to: number }[] = [];
      for (const x of iv) {
        if (coverObj && x.from < coverEnd && counters.duplicates > 0) {
          const to = Math.min(x.to, coverEnd);
          push({
            counter: 'duplicates',
            event: { p, seq: x.from },
            ...(to - x.from > 1 ? { range: { from: x.from, to } } : {}),
            objects: [objAt(coverObj, p, x.from), objAt(x.o, p, x.from)],
            detail: `event (${p}, ${x.from})${to - x.from > 1 ? ` and the next ${to - x.from - 1}` : ''} committed in ${coverObj.key} and again in ${x.o.key}`,
          });
        }
        if (x.from > gapFrom) gaps.push({ from: gapFrom, to: x.from });
        gapFrom = Math.max(gapFrom, x.to);
        if (x.to > coverEnd) {
          coverEnd = x.to;
          coverObj = x.o;
        }
      }
      const n = produced[p];
      if (n !== undefined && n > gapFrom) gaps.push({ from: gapFrom, to: n });
      if (counters.gaps > 0) {
        for (const g of gaps) {
          if (n !== undefined && g.from >= n) continue;
          const to = n !== undefined ? Math.min(g.to, n) : g.to;
          // The objects on either side of the hole, when there are: where the missing range should have been.
          const before = iv.filter((x) => x.to === g.from)[0];
          const after = iv.find((x) => x.from === g.to);
          push({
            counter: 'gaps',
            event: { p, seq: g.from },
            ...(to - g.from > 1 ? { range: { from: g.from, to } } : {}),
            objects: [...(before ? [objAt(before.o, p, g.from - 1)] : []), ...(after ? [objAt(after.o, p, g.to)] : [])],
            detail: `events (${p}, ${g.from})${to - g.from > 1 ? ` to (${p}, ${to - 1})` : ''} never committed${before || after ? ` (between ${before?.o.key ?? 'the start'} and ${after?.o.key ?? 'the end'})` : ''}`,
          });
        }
      }
      if (counters.pastProduced > 0 && n !== undefined) {
        for (const x of iv) {
          if (x.to <= n) continue;
          const from = Math.max(x.from, n);
          push({ counter: 'pastProduced', event: { p, seq: from }, ...(x.to - from > 1 ? { range: { from, to: x.to } } : {}), objects: [objAt(x.o, p, from)], detail: `event (${p}, ${from}) committed in ${x.o.key} though only ${n} were produced` });
        }
      }
    }
    for (const o of objs) {
      if (!o.problem) continue;
      const obj: FindingObject = { key: o.key, line: o.problem.line, ...this.#place(o.key), firstSeen: firstSeen.get(o.key) ?? null };
      if (o.problem.corrupted) push({ counter: 'corrupted', event: null, objects: [obj], detail: o.problem.text });
      if (o.problem.foreign > 0) push({ counter: 'foreign', event: null, objects: [obj], detail: `${o.problem.text}${o.problem.foreign > 1 ? ` (${o.problem.foreign} foreign lines in the object)` : ''}` });
    }
    for (const m of [...this.#mutations].sort((a, b) => (a.key < b.key ? -1 : 1))) {
      push({ counter: 'mutations', event: null, objects: [{ key: m.key, line: null, ...this.#place(m.key), firstSeen: firstSeen.get(m.key) ?? null }], detail: m.detail });
    }
    return out;
  }
}

interface CheckpointLine {
  id: number;
  epoch?: number;
  at?: string;
  seenAt?: string;
}

/** A checkpoint's completion on the harness's clock (the clock chaos.jsonl is on), as ISO; undefined without a stamp. */
function harnessAt(c: CheckpointLine | undefined): string | undefined {
  if (!c?.at) return undefined;
  const h = checkpointHarnessMs({ at: c.at, ...(c.seenAt ? { seenAt: c.seenAt } : {}) });
  return Number.isFinite(h.ms) ? new Date(h.ms).toISOString() : c.at;
}

/**
 * Adds a cause to the first `first` findings of each counter that name an object with a
 * checkpoint: the faults that landed before the checkpoint completed (nearest first, at
 * most 3) and the epoch change the object belongs to. Reads chaos.jsonl and
 * checkpoints.jsonl from the run directory.
 */
export function attributeCauses(findings: Finding[], runDir: string, first = 3): Finding[] {
  const cps = readJsonl<CheckpointLine>(path.join(runDir, EVIDENCE.checkpoints.file));
  const chaos = readJsonl<{ t: string; faultId: string; kind: string; target?: string; point?: string; phase: string }>(path.join(runDir, EVIDENCE.chaos.file));
  const windows = new Map<string, { faultId: string; kind: string; target?: string; point?: string; landed?: string; recovered?: string }>();
  for (const r of chaos) {
    const w = windows.get(r.faultId) ?? { faultId: r.faultId, kind: r.kind, ...(r.target ? { target: r.target } : {}), ...(r.point ? { point: r.point } : {}) };
    if (r.phase === 'landed') w.landed ??= r.t;
    if (r.phase === 'recovered' || (r.phase === 'healed' && !w.recovered)) w.recovered = r.t;
    windows.set(r.faultId, w);
  }
  const byId = new Map(cps.map((c) => [c.id, c]));
  const epochStart = new Map<number, CheckpointLine>();
  const sortedCps = [...cps].sort((a, b) => a.id - b.id);
  for (const c of sortedCps) if (c.epoch !== undefined && !epochStart.has(c.epoch)) epochStart.set(c.epoch, c);
  const seen = new Map<string, number>();
  return findings.map((f) => {
    const n = (seen.get(f.counter) ?? 0) + 1;
    seen.set(f.counter, n);
    if (n > first) return f;
    // The object that committed the anomaly: the later copy of a duplicate, else the first named.
    const obj = f.counter === 'duplicates' ? f.objects[f.objects.length - 1] : f.objects[0];
    if (!obj || obj.checkpoint === null) return f;
    const cp = byId.get(obj.checkpoint);
    const nextCp = cp ? undefined : sortedCps.find((c) => c.id > obj.checkpoint! && c.at);
    const seenFirst = !cp && obj.firstSeen !== null && (!nextCp || Date.parse(obj.firstSeen) < Date.parse(harnessAt(nextCp)!));
    const next = seenFirst ? undefined : nextCp;
    const at = harnessAt(cp) ?? (seenFirst ? obj.firstSeen : harnessAt(next)) ?? null;
    const atMs = at ? Date.parse(at) : NaN;
    const faults: FaultWindow[] = [];
    if (Number.isFinite(atMs)) {
      for (const w of windows.values()) {
        if (!w.landed) continue;
        const l = Date.parse(w.landed);
        if (!(l <= atMs)) continue;
        faults.push({ faultId: w.faultId, kind: w.kind, ...(w.target ? { target: w.target } : {}), ...(w.point ? { point: w.point } : {}), landed: w.landed, recovered: w.recovered ?? null, beforeCheckpointS: Math.round((atMs - l) / 100) / 10 });
      }
      faults.sort((a, b) => a.beforeCheckpointS - b.beforeCheckpointS);
    }
    const epoch = obj.epoch ?? cp?.epoch ?? null;
    const start = epoch !== null ? epochStart.get(epoch) : undefined;
    const prevEpochs = [...epochStart.keys()].filter((e) => epoch !== null && e < epoch);
    return {
      ...f,
      cause: {
        checkpoint: { id: obj.checkpoint, at, epoch: cp?.epoch ?? obj.epoch, ...(next ? { timeOf: next.id, timedBy: 'next checkpoint' as const } : {}), ...(seenFirst ? { timedBy: 'oracle first sight' as const } : {}) },
        faults: faults.slice(0, 3),
        epochChange: epoch === null ? null : { epoch, previousEpoch: prevEpochs.length ? Math.max(...prevEpochs) : null, firstCheckpoint: start?.id ?? null, at: harnessAt(start) ?? null },
      },
    };
  });
}

export function writeFindings(file: string, findings: readonly Finding[]): void {
  writeFileSync(file, findings.map((f) => JSON.stringify(f)).join('\n') + (findings.length ? '\n' : ''));
}

export function readFindings(file: string): Finding[] {
  return readJsonl<Finding>(file).filter((f) => (COUNTER_NAMES as readonly string[]).includes(f.counter));
}

/** ledger.jsonl's first-seen time per key (its first line for the key). */
export function firstSeenFromLedger(file: string): Map<string, string> {
  const m = new Map<string, string>();
  for (const e of readJsonl<{ key: string; firstSeen?: string }>(file)) if (e.firstSeen && !m.has(e.key)) m.set(e.key, e.firstSeen);
  return m;
}

/** One sentence per counter with findings, for the report and junit. */
export function describeCounter(counter: CounterName, fs: readonly Finding[]): string {
  const f = fs[0]!;
  const obj = f.objects[f.objects.length - 1];
  const where = obj ? `${obj.key}${obj.line !== null ? ` line ${obj.line}` : ''}` : 'no object';
  const near = f.cause?.faults[0];
  const cause = f.cause
    ? near
      ? `; the nearest fault before its checkpoint ${f.cause.checkpoint.id}${f.cause.checkpoint.timeOf !== undefined ? ` (not recorded as completed; timed by checkpoint ${f.cause.checkpoint.timeOf})` : f.cause.checkpoint.timedBy === 'oracle first sight' ? ' (not recorded as completed; timed by the oracle\'s first sight of the object)' : ''} completed is ${near.faultId} (${near.kind}${near.point ? ` ${near.point}` : ''}${near.target ? ` on ${near.target}` : ''}), landed ${near.beforeCheckpointS} s earlier${near.recovered ? '' : ' and never recovered'}`
      : f.cause.checkpoint.at === null
        ? `; checkpoint ${f.cause.checkpoint.id} has no recorded completion, so no fault is placed before it`
        : `; no fault landed before its checkpoint ${f.cause.checkpoint.id} completed`
    : '';
  const epoch = f.cause?.epochChange ? `; the object is in epoch ${f.cause.epochChange.epoch}${f.cause.epochChange.firstCheckpoint !== null ? `, which began at checkpoint ${f.cause.epochChange.firstCheckpoint}` : ''}` : '';
  return `${counter} = ${f.total.toLocaleString('en-US')} (${fs.length} finding${fs.length === 1 ? '' : 's'} kept): first, ${f.detail} — at ${where}${cause}${epoch}.`;
}

/**
 * Where `verify RUN_DIR` writes its recount: recount.json when the run has none yet (the
 * runner's own recount), else a new recount.verify-<UTC time>.json next to it, so the run's
 * stored recount is never overwritten.
 */
export function verifyOutPath(runDir: string, now = new Date()): string {
  const stored = path.join(runDir, EVIDENCE.recount.file);
  if (!existsSync(stored)) return stored;
  const stamp = now.toISOString().replace(/[-:]/g, '').replace(/\..*$/, '');
  let p = path.join(runDir, `recount.verify-${stamp}.json`);
  for (let i = 2; existsSync(p); i++) p = path.join(runDir, `recount.verify-${stamp}-${i}.json`);
  return p;
}

/** The findings file beside a recount file: recount.json → findings.jsonl, recount.X.json → findings.X.jsonl. */
export function findingsPathFor(recountPath: string): string {
  const dir = path.dirname(recountPath);
  const base = path.basename(recountPath);
  const m = /^recount(.*)\.json$/.exec(base);
  return path.join(dir, m ? `findings${m[1]}.jsonl` : `${base.replace(/\.json$/, '')}.findings.jsonl`);
}
