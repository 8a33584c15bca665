/**
 * MUTANT torn-log-append: an append that fails half-way leaves its partial bytes in the
 * checkpoint log (DurableLog's `tornAppends`), and the coordinator goes on instead of
 * stopping: later records follow the torn line and are lost at the next restart.
 */
import type { SeamsFactory } from './seams.ts';

export const tornLogAppend: SeamsFactory = () => ({
  checkpointLog: { keepTornAppends: true, stopOnFailedAppend: false },
});
