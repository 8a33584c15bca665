/**
 * MUTANT latest-by-wallclock: the latest completed checkpoint is the one with the latest
 * wall-clock time in its record, so after the coordinator's clock stepped back, newer
 * checkpoints look older and a restore goes back to one taken before the step.
 */
import type { SeamsFactory } from './seams.ts';

export const latestByWallclock: SeamsFactory = () => ({
  supersedes: (rec, current) => rec.at > current.at,
});
