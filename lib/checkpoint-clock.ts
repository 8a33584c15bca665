/**
 * When a checkpoint completed, on the harness's clock: where the timeline draws it and what
 * the findings' causes and the report's run end are timed by.
 *
 * checkpoints.jsonl holds, per checkpoint, the engine's stamp `at` (its coordinator's wall
 * clock, which a clock-step fault moves) and, since it was recorded, `seenAt`: when the
 * harness's health poll (every 2 s) first listed it, on the harness's clock. The harness
 * time of a checkpoint is:
 * - `at`, when it lies between SEEN_WINDOW_MS before `seenAt` and 1 s after it: the stamp
 *   agrees with the harness to within what the poll cadence and an engine's reporting lag
 *   explain, and is the more precise of the two;
 * - `seenAt` otherwise (a stepped clock): at most a poll, plus the engine's reporting lag,
 *   after the checkpoint completed;
 * - `at` when there is no `seenAt` (evidence from before it was recorded): then the picture
 *   says the checkpoints are on the engine's clock.
 */
/** A checkpoint as checkpoints.jsonl records it: the engine's stamp and when the harness saw it. */
export interface CheckpointStamps {
  at: string;
  seenAt?: string;
}

/** How far before the harness saw it an engine's stamp may lie and still be believed (ms). */
export const SEEN_WINDOW_MS = 10_000;

export type CheckpointClock = 'engine stamp' | 'harness saw it' | 'engine clock, unchecked';

/** One checkpoint's harness time (ms epoch) and which clock gave it; NaN when neither time parses. */
export function checkpointHarnessMs(c: CheckpointStamps): { ms: number; clock: CheckpointClock } {
  const at = Date.parse(c.at);
  const seen = c.seenAt !== undefined ? Date.parse(c.seenAt) : Number.NaN;
  if (!Number.isFinite(seen)) return { ms: at, clock: 'engine clock, unchecked' };
  if (at >= seen - SEEN_WINDOW_MS && at <= seen + 1000) return { ms: at, clock: 'engine stamp' };
  return { ms: seen, clock: 'harness saw it' };
}

/** Every checkpoint's harness time (finite ones only), with how many came from each clock. */
export function checkpointTimes(cps: readonly CheckpointStamps[]): { ms: number[]; byClock: Record<CheckpointClock, number> } {
  const byClock: Record<CheckpointClock, number> = { 'engine stamp': 0, 'harness saw it': 0, 'engine clock, unchecked': 0 };
  const ms: number[] = [];
  for (const c of cps) {
    const h = checkpointHarnessMs(c);
    if (!Number.isFinite(h.ms)) continue;
    ms.push(h.ms);
    byClock[h.clock]++;
  }
  return { ms, byClock };
}
