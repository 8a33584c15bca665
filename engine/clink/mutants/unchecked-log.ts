/**
 * MUTANT unchecked-log: the coordinator reads its checkpoint log without verifying each
 * record's checksum (DurableLog's `uncheckedRecords`): a record whose bytes were corrupted
 * at rest (a flipped bit in an offset, an epoch, a checkpoint id) is restored from as if it
 * were what was written, and a corrupted last line is dropped as a torn tail. The restored
 * sources start from offsets that were never checkpointed.
 */
import type { SeamsFactory } from './seams.ts';

export const uncheckedLog: SeamsFactory = () => ({
  checkpointLog: { keepTornAppends: false, stopOnFailedAppend: true, uncheckedRecords: true },
});
