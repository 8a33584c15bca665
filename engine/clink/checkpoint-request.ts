/**
 * A checkpoint asked for now, outside the periodic cadence (Engine.triggerCheckpoint).
 *
 * The plug (engine/clink/plug.ts) creates `<clinkDir>/trigger-checkpoint` on the coordinator
 * host, atomically (written beside it, then renamed). The coordinator's 250 ms look consumes
 * it (unlinks it: a request is served at most once) and, when the job runs and no checkpoint
 * is pending, triggers a barrier at once through the same path as a periodic one. A request
 * that finds the job not running or a checkpoint pending is dropped: the harness asks again
 * while it still waits. A request left from before the coordinator started is dropped too.
 *
 * The periodic cadence (cadence.ts) is not told: it goes on on its grid. A slot that comes
 * while the requested checkpoint is pending is handled like any slot that comes while one is
 * pending (the barrier follows at the first look after it settled, then the grid again).
 */
import { unlinkSync } from 'node:fs';
import path from 'node:path';
import type { CheckpointCadence } from './cadence.ts';

export const CHECKPOINT_REQUEST_FILE = 'trigger-checkpoint';

export function checkpointRequestPath(clinkDir: string): string {
  return path.join(clinkDir, CHECKPOINT_REQUEST_FILE);
}

/**
 * Consumes a pending request: true when there was one (it is gone now), false when there
 * was none. Any other failure (the directory unreadable, the path a directory) throws.
 */
export function takeCheckpointRequest(clinkDir: string): boolean {
  try {
    unlinkSync(checkpointRequestPath(clinkDir));
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
}

/**
 * Whether the coordinator's look triggers a barrier now, and why. The periodic slot is asked
 * first and only when a barrier could start (running, nothing pending), exactly as before
 * requests existed, so the grid is the same with or without them; a request is served only
 * when no periodic barrier starts on the same look.
 */
export function barrierDue(
  state: { running: boolean; pending: boolean; requested: boolean },
  cadence: Pick<CheckpointCadence, 'due'>,
  now: number,
): 'periodic' | 'requested' | null {
  if (!state.running || state.pending) return null;
  if (cadence.due(now)) return 'periodic';
  return state.requested ? 'requested' : null;
}
