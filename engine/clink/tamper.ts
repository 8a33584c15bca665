/**
 * What the store-tamper fault needs to know of Clink (engine/engine.ts, EngineStoreTamper),
 * read from Clink's keys (sink/keys.ts: `<prefix>subtask=S/epoch=E/chk=C.jsonl`): where a
 * committed object belongs, and which one Clink re-completes at its next recovery. Clink
 * reports its refusals itself (the coordinator's integrity stop in its status).
 */
import { NO_PLACE, type CommittedObject, type ObjectPlace, type RecommitTarget } from '../engine.ts';
import { parseClinkKey } from './sink/keys.ts';

/** Subtask, epoch and checkpoint as a Clink key names them; NO_PLACE for another key. */
export function clinkPlaceOfObject(key: string): ObjectPlace {
  const p = parseClinkKey(key);
  return p ? { subtask: p.subtask, epoch: p.epoch, checkpoint: p.checkpointId } : NO_PLACE;
}

/**
 * The object Clink re-completes on its next recovery: the newest committed object of a
 * subtask. The highest checkpoint id wins (ids increase across epochs and restarts), then
 * the lowest subtask. Empty objects and keys of another layout are skipped. Null when none.
 */
export function clinkRecommitTarget(objects: readonly CommittedObject[]): RecommitTarget | null {
  let best: RecommitTarget | null = null;
  for (const o of objects) {
    if (o.size <= 0) continue;
    const k = parseClinkKey(o.key);
    if (!k) continue;
    if (!best || k.checkpointId > best.checkpointId || (k.checkpointId === best.checkpointId && k.subtask < best.subtask!)) {
      best = { ...o, checkpointId: k.checkpointId, subtask: k.subtask };
    }
  }
  return best;
}
