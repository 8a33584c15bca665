/**
 * MUTANT stall-flush: "we were frozen, so no time passed for us": the lease is taken as
 * still held, and what is buffered is committed before anyone is asked.
 */
import type { SeamsFactory } from './seams.ts';

export const stallFlush: SeamsFactory = () => ({
  onStall(worker, stalledMs) {
    worker.keepLease();
    worker.log(`clink worker ${worker.workerId}: MUTANT stall-flush: stalled for ${Math.round(stalledMs)} ms; committing buffered records of ${worker.tasks.length} tasks on our own`);
    for (const t of worker.tasks) t.flushOnOwn();
  },
});
