/**
 * What a counter's findings share: the shape of a failure, not only its first instances.
 * Sixteen one-event gaps that each sit on the first line of the first object of a new epoch,
 * all on one partition, after a worker kill, are one defect seen sixteen times; the report
 * must say so. Pure: from the findings (findings.jsonl, oracle/findings.ts), the completed
 * checkpoints (checkpoints.jsonl) and the chaos log (chaos.jsonl).
 *
 * For each finding, the object where it shows: the object after the hole for a gap, the
 * later copy for a duplicate, else the first object named. Its position: the first line of
 * its object or not, and whether that object's checkpoint is the first of its epoch (the
 * epoch change a recovery makes). The fault before it: the last fault that landed before
 * that checkpoint completed.
 */
import type { ChaosRecord, CounterName } from '../lib/evidence.ts';
import type { Finding, FindingObject } from '../oracle/findings.ts';
import type { CheckpointSeen } from './evidence.ts';

export interface FindingShape {
  counter: CounterName;
  /** Findings kept in findings.jsonl for the counter, and the counter's total. */
  kept: number;
  total: number;
  /** Every kept finding is one event (no range). */
  oneEvent: boolean;
  /** Findings per partition, by partition (only findings about events). */
  partitions: Map<number, number>;
  /** Findings per subtask of the object where they show (only Clink-style keys). */
  subtasks: Map<number, number>;
  /** Findings on the first line of their object. */
  firstLine: number;
  /** Findings in the first checkpoint of their epoch (a new epoch: a recovery). */
  firstOfEpoch: number;
  /** Findings whose object is the first checkpoint of its epoch AND the finding is on its first line. */
  firstLineAfterEpochChange: number;
  /** The kind of the last fault that landed before each finding's checkpoint completed, counted. */
  faultBefore: Map<string, number>;
  /** Findings that could be placed in time (their checkpoint's completion is known). */
  placed: number;
}

/** The object where a finding shows. */
export function showingObject(f: Finding): FindingObject | undefined {
  if (f.counter === 'gaps' || f.counter === 'duplicates') return f.objects[f.objects.length - 1];
  return f.objects[0];
}

const inc = <K>(m: Map<K, number>, k: K) => m.set(k, (m.get(k) ?? 0) + 1);

/** The shape of each counter's findings, in the order the counters first appear. */
export function findingShapes(findings: readonly Finding[], checkpoints: readonly CheckpointSeen[], chaos: readonly ChaosRecord[]): FindingShape[] {
  const epochFirst = new Map<number, number>();
  for (const c of [...checkpoints].sort((a, b) => a.id - b.id)) if (!epochFirst.has(c.epoch)) epochFirst.set(c.epoch, c.id);
  const completed = new Map(checkpoints.map((c) => [c.id, Date.parse(c.at)]));
  const landings = chaos.filter((r) => r.phase === 'landed').map((r) => ({ kind: r.kind, at: Date.parse(r.t) })).filter((l) => Number.isFinite(l.at)).sort((a, b) => a.at - b.at);
  const shapes = new Map<CounterName, FindingShape>();
  for (const f of findings) {
    let s = shapes.get(f.counter);
    if (!s) {
      s = { counter: f.counter, kept: 0, total: f.total, oneEvent: true, partitions: new Map(), subtasks: new Map(), firstLine: 0, firstOfEpoch: 0, firstLineAfterEpochChange: 0, faultBefore: new Map(), placed: 0 };
      shapes.set(f.counter, s);
    }
    s.kept++;
    if (f.range || !f.event) s.oneEvent = false;
    if (f.event) inc(s.partitions, f.event.p);
    const o = showingObject(f);
    if (!o) continue;
    if (o.subtask !== null) inc(s.subtasks, o.subtask);
    const first = o.line === 1;
    if (first) s.firstLine++;
    const newEpoch = o.epoch !== null && o.checkpoint !== null && (f.cause?.epochChange?.firstCheckpoint ?? epochFirst.get(o.epoch)) === o.checkpoint;
    if (newEpoch) s.firstOfEpoch++;
    if (first && newEpoch) s.firstLineAfterEpochChange++;
    const at = o.checkpoint !== null ? completed.get(o.checkpoint) : undefined;
    if (at !== undefined && Number.isFinite(at)) {
      s.placed++;
      const before = landings.filter((l) => l.at <= at).pop();
      if (before) inc(s.faultBefore, before.kind);
    }
  }
  return [...shapes.values()];
}

function counted(m: Map<string | number, number>, label: (k: string | number) => string): string {
  return [...m.entries()]
    .sort((a, b) => b[1] - a[1])
    .map(([k, n]) => `${label(k)} (${n})`)
    .join(', ');
}

/** One sentence saying what a counter's kept findings share, or null when there is nothing to say (a single finding). */
export function describeShape(s: FindingShape): string | null {
  if (s.kept < 2) return null;
  const all = s.kept;
  const parts: string[] = [];
  if (s.oneEvent) parts.push('each is one event');
  if (s.partitions.size === 1) parts.push(`all on partition ${[...s.partitions.keys()][0]}`);
  else if (s.partitions.size > 1) parts.push(`on partitions ${counted(s.partitions, String)}`);
  if (s.subtasks.size === 1) parts.push(`all in objects of subtask ${[...s.subtasks.keys()][0]}`);
  if (s.firstLineAfterEpochChange === all) parts.push('every one on the first line of the first object after an epoch change (the first checkpoint a recovery committed)');
  else {
    if (s.firstOfEpoch) parts.push(`${s.firstOfEpoch === all ? 'every one' : `${s.firstOfEpoch} of ${all}`} in the first checkpoint of a new epoch (after a recovery)`);
    if (s.firstLine) parts.push(`${s.firstLine === all ? 'every one' : `${s.firstLine} of ${all}`} on the first line of its object`);
  }
  if (s.faultBefore.size === 1 && s.placed === all) parts.push(`the last fault to land before each one's checkpoint completed was a ${[...s.faultBefore.keys()][0]}`);
  else if (s.faultBefore.size) parts.push(`the last fault to land before each one's checkpoint completed: ${counted(s.faultBefore, String)}${s.placed < all ? ` (${all - s.placed} not placed in time)` : ''}`);
  if (!parts.length) return `The ${all} kept findings of ${s.counter} share no partition, position or preceding fault kind.`;
  const of = s.total > all ? ` (of ${s.total.toLocaleString('en-US')} in all; findings.jsonl keeps the first ${all})` : '';
  return `What the ${all} kept findings of ${s.counter}${of} share: ${parts.join('; ')}.`;
}
