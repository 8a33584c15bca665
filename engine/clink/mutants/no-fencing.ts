/** MUTANT no-fencing: a worker cut off from the coordinator keeps its tasks and lets them commit on their own timer. */
import type { SeamsFactory } from './seams.ts';

export const noFencing: SeamsFactory = () => ({
  fence(worker, silentMs) {
    worker.log(`clink worker ${worker.workerId}: MUTANT no-fencing: no word from the coordinator for ${silentMs} ms; tasks keep running and commit on their own`);
    for (const t of worker.tasks) t.autonomous = true;
  },
});
