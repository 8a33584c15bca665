/** MUTANT commit-at-prepare: visible before the checkpoint that covers the records is durable. */
import type { SeamsFactory } from './seams.ts';

export const commitAtPrepare: SeamsFactory = () => ({
  afterStage: (sink, h) => sink.complete(h),
});
