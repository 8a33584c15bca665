/** MUTANT zero-byte-commit: an empty buffer is staged too (one empty part), and committed as a zero-byte object. */
import type { SeamsFactory } from './seams.ts';

export const zeroByteCommit: SeamsFactory = () => ({ stageEmptyBuffer: true });
