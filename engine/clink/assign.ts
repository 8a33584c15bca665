/**
 * Pure pieces of the coordinator's job management: spreading subtasks over workers and
 * deciding when a checkpoint is complete.
 */
import type { UploadHandle } from './sink/sink-api.ts';
import type { TaskSpec } from './protocol.ts';
import { monotonicMs } from './mono.ts';
import type { ProtocolSeams } from './mutants/index.ts';

/** Subtask i reads partition i. Subtasks are dealt round-robin over the sorted live workers. */
export function assignSubtasks(subtasks: number, workers: string[]): Map<string, number[]> {
  const sorted = [...workers].sort();
  const out = new Map<string, number[]>();
  for (const w of sorted) out.set(w, []);
  if (sorted.length === 0) return out;
  for (let s = 0; s < subtasks; s++) out.get(sorted[s % sorted.length]!)!.push(s);
  return out;
}

/** A completed checkpoint as written to the durable log. */
export interface CompletedCheckpoint {
  t: 'complete';
  id: number;
  epoch: number;
  at: string;
  /** Next offset per subtask (subtask i reads partition i). */
  offsets: Record<string, number | null>;
  handles: Record<string, UploadHandle[]>;
}

export type LogRecord = { t: 'epoch'; epoch: number; at: string } | { t: 'barrier'; id: number; epoch: number; at: string } | CompletedCheckpoint;

export interface RecoveredState {
  /** Highest epoch ever used (0 if none). */
  maxEpoch: number;
  /** Highest checkpoint id ever used (0 if none). */
  maxCheckpointId: number;
  lastCompleted: CompletedCheckpoint | null;
  completedCount: number;
  recent: { id: number; epoch: number; at: string }[];
}

/**
 * Whether a newly completed checkpoint replaces the current last one. It always does: the
 * log's order (and the ids) say which is newer. A seam may decide otherwise (mutant
 * latest-by-wallclock trusts the records' wall-clock times instead).
 */
export function supersedes(rec: CompletedCheckpoint, current: CompletedCheckpoint | null, seams: Pick<ProtocolSeams, 'supersedes'> = {}): boolean {
  if (!current) return true;
  // Seam: which of two completed checkpoints is the latest (correct: the later in the log).
  return seams.supersedes?.(rec, current) ?? true;
}

export function recoverState(records: LogRecord[], seams: Pick<ProtocolSeams, 'supersedes'> = {}): RecoveredState {
  const st: RecoveredState = { maxEpoch: 0, maxCheckpointId: 0, lastCompleted: null, completedCount: 0, recent: [] };
  for (const r of records) {
    if (r.t === 'epoch') st.maxEpoch = Math.max(st.maxEpoch, r.epoch);
    else if (r.t === 'barrier') {
      st.maxCheckpointId = Math.max(st.maxCheckpointId, r.id);
      st.maxEpoch = Math.max(st.maxEpoch, r.epoch);
    } else if (r.t === 'complete') {
      st.maxCheckpointId = Math.max(st.maxCheckpointId, r.id);
      st.maxEpoch = Math.max(st.maxEpoch, r.epoch);
      if (supersedes(r, st.lastCompleted, seams)) st.lastCompleted = r;
      st.completedCount++;
      st.recent.push({ id: r.id, epoch: r.epoch, at: r.at });
      if (st.recent.length > 1000) st.recent.shift();
    }
  }
  return st;
}

/** The tasks of a (re)deploy: each subtask starts from the checkpoint's offset with its handles. */
export function tasksFromCheckpoint(subtasks: number, cp: CompletedCheckpoint | null): TaskSpec[] {
  const out: TaskSpec[] = [];
  for (let s = 0; s < subtasks; s++) {
    const off = cp?.offsets[String(s)];
    out.push({ subtask: s, partition: s, startOffset: off ?? null, restoredHandles: cp?.handles[String(s)] ?? [] });
  }
  return out;
}

/** Collects the snapshots of one pending checkpoint. */
export class PendingCheckpoint {
  readonly id: number;
  readonly epoch: number;
  readonly startedAt: number;
  readonly expected: number;
  readonly offsets = new Map<number, number | null>();
  readonly handles = new Map<number, UploadHandle[]>();

  constructor(id: number, epoch: number, expected: number, startedAt = monotonicMs()) {
    this.id = id;
    this.epoch = epoch;
    this.expected = expected;
    this.startedAt = startedAt;
  }

  /** Adds a snapshot; returns true when it belongs to this checkpoint (and was new). */
  add(snap: { checkpointId: number; epoch: number; subtask: number; offset: number | null; handles: UploadHandle[] }): boolean {
    if (snap.checkpointId !== this.id || snap.epoch !== this.epoch) return false;
    if (snap.subtask < 0 || snap.subtask >= this.expected || this.offsets.has(snap.subtask)) return false;
    this.offsets.set(snap.subtask, snap.offset);
    this.handles.set(snap.subtask, snap.handles);
    return true;
  }

  get complete(): boolean {
    return this.offsets.size === this.expected;
  }

  toRecord(at = new Date().toISOString()): CompletedCheckpoint {
    const offsets: Record<string, number | null> = {};
    const handles: Record<string, UploadHandle[]> = {};
    for (let s = 0; s < this.expected; s++) {
      offsets[String(s)] = this.offsets.get(s) ?? null;
      handles[String(s)] = this.handles.get(s) ?? [];
    }
    return { t: 'complete', id: this.id, epoch: this.epoch, at, offsets, handles };
  }
}
