/** MUTANT drop-restored-handles: the restored handles are never completed. */
import type { SeamsFactory } from './seams.ts';

export const dropRestoredHandles: SeamsFactory = () => ({
  restoredHandles(sink, handles) {
    sink.log(`clink sink mutant drop-restored-handles: ignoring ${handles.length} restored handles`);
    return [];
  },
});
