/**
 * MUTANT keys-reused: the key no longer names the attempt (epoch) nor anything restored from
 * the snapshot, only a counter local to this process (to this sink instance), so a restarted
 * subtask's first objects land on keys its predecessor already committed.
 */
import type { SeamsFactory } from './seams.ts';

export const keysReused: SeamsFactory = () => {
  let localPartCounter = 0;
  return {
    objectKey: (sink) => `${sink.prefix}subtask=${sink.subtask}/part-${localPartCounter++}.jsonl`,
  };
};
