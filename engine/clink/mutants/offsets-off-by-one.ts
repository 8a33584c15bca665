/** MUTANT offsets-off-by-one: the restored source re-reads the record before the checkpointed offset. */
import type { SeamsFactory } from './seams.ts';

export const offsetsOffByOne: SeamsFactory = () => ({
  startOffset: (checkpointed) => (checkpointed > 0 ? checkpointed - 1 : checkpointed),
});
