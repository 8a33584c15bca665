/** For loader tests: the problems a campaign load reports. */
import { QualError } from '../../lib/errors.ts';

/** The problems a load reports (as "file:line: field: message" lines); throws if the load succeeds or fails otherwise. */
export function problems(fn: () => unknown): string[] {
  try {
    fn();
  } catch (err) {
    if (err instanceof QualError && err.code === 'BAD_INPUT_FILE') return (err.details?.problems as string[]) ?? [err.message];
    throw err;
  }
  throw new Error('expected the campaign to be rejected');
}
