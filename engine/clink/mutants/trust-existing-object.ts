/** MUTANT trust-existing-object: any object at the key is taken as our commit (existence only). */
import type { SeamsFactory } from './seams.ts';

export const trustExistingObject: SeamsFactory = () => ({
  acceptForeignObject(sink, h, problems) {
    sink.log(`clink sink mutant trust-existing-object: taking the object at ${h.key} as committed (${problems.join('; ')})`);
    return true;
  },
});
