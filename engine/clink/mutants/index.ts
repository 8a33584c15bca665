/**
 * Clink's deliberately broken variants ("mutants"), chosen by the job's `mutant` setting.
 * The default (no mutant) is the correct engine. Each models a real failure mechanism; the
 * harness must catch each with at least one of the oracle counters in `caughtBy`.
 * docs/mutants.md says what each does and what catches it.
 *
 * Each mutant lives in its own file beside this one, as a typed override of the protocol
 * steps it breaks (seams.ts, `ProtocolSeams`); the protocol files (the sink, worker,
 * subtask, coordinator) read as the correct protocol and call a step's hook where a mutant
 * may override it. `seamsFor` gives a protocol object its mutant's seams.
 */
import type { MutantInfo } from '../../engine.ts';
import type { ProtocolSeams, SeamsFactory } from './seams.ts';
import { abortOnUnknown } from './abort-on-unknown.ts';
import { commitAtPrepare } from './commit-at-prepare.ts';
import { dropRestoredHandles } from './drop-restored-handles.ts';
import { keysReused } from './keys-reused.ts';
import { latestByWallclock } from './latest-by-wallclock.ts';
import { noFencing } from './no-fencing.ts';
import { nosuchuploadRewrite } from './nosuchupload-rewrite.ts';
import { offsetsOffByOne } from './offsets-off-by-one.ts';
import { stallFlush } from './stall-flush.ts';
import { tornLogAppend } from './torn-log-append.ts';
import { trustExistingObject } from './trust-existing-object.ts';
import { uncheckedLog } from './unchecked-log.ts';
import { zeroByteCommit } from './zero-byte-commit.ts';

export type { ProtocolSeams, SeamsFactory, SinkSeamContext, WorkerSeamContext } from './seams.ts';

export const CLINK_MUTANT_NAMES = [
  'commit-at-prepare',
  'nosuchupload-rewrite',
  'drop-restored-handles',
  'abort-on-unknown',
  'keys-reused',
  'zero-byte-commit',
  'no-fencing',
  'offsets-off-by-one',
  'stall-flush',
  'latest-by-wallclock',
  'torn-log-append',
  'trust-existing-object',
  'unchecked-log',
] as const;
/** A mutant's name: a closed union, so a comparison with a misspelt name does not compile. */
export type ClinkMutant = (typeof CLINK_MUTANT_NAMES)[number];

export function isClinkMutant(name: unknown): name is ClinkMutant {
  return (CLINK_MUTANT_NAMES as readonly unknown[]).includes(name);
}

export const CLINK_MUTANTS: readonly (MutantInfo & { name: ClinkMutant })[] = [
  {
    name: 'commit-at-prepare',
    mechanism:
      'The sink completes the multipart upload at prepare (the barrier), before the checkpoint that covers the records is durable; a failure before the checkpoint completes makes the source replay records that are already visible.',
    caughtBy: ['duplicates'],
  },
  {
    name: 'nosuchupload-rewrite',
    mechanism:
      'On a re-commit, NoSuchUpload (MinIO\'s answer to a second CompleteMultipartUpload) is taken as a failed commit and the covered records are written again as a new object, although the first completion already made them visible.',
    caughtBy: ['duplicates'],
  },
  {
    name: 'drop-restored-handles',
    mechanism:
      'After a restore the sink ignores the upload handles in the restored snapshot, so a checkpoint that was durable but not yet committed when the worker died is never made visible, while the source resumes after it.',
    caughtBy: ['gaps'],
  },
  {
    name: 'abort-on-unknown',
    mechanism:
      'When a commit\'s outcome is unknown (timeout, connection error, 5xx) the sink aborts the upload and counts the handle as done instead of retrying; NoSuchUpload is taken as done without checking the object. A store outage during a commit loses the checkpoint\'s records.',
    caughtBy: ['gaps'],
  },
  {
    name: 'keys-reused',
    mechanism:
      'Object keys are not unique per attempt: they drop the epoch and number objects with a counter local to the process instead of state restored from the snapshot, so a restarted subtask writes its first objects over keys its predecessor already committed.',
    caughtBy: ['mutations'],
  },
  {
    name: 'zero-byte-commit',
    mechanism:
      'At a barrier with an empty buffer the sink stages and commits an empty upload, producing zero-byte objects (an empty part file rolled and committed at every idle checkpoint).',
    caughtBy: ['corrupted'],
  },
  {
    name: 'no-fencing',
    mechanism:
      'A worker cut off from the coordinator keeps running its tasks and commits its staged uploads on its own schedule instead of waiting for the coordinator\'s notification for the current epoch, while the job is restored elsewhere and replays the same records.',
    caughtBy: ['duplicates'],
  },
  {
    name: 'offsets-off-by-one',
    mechanism:
      'On restore the source seeks to the checkpointed offset plus or minus one instead of exactly the checkpointed offset, skipping or replaying one record per partition per restore.',
    caughtBy: ['gaps', 'duplicates'],
  },
  {
    name: 'stall-flush',
    mechanism:
      'A worker that notices it was stalled (its timers ran late by more than the fencing timeout: a SIGSTOP, a long GC pause, a frozen VM) takes the stall as no time passing: it keeps its lease and commits its buffered records on its own before hearing from the coordinator, which meanwhile restored the job elsewhere from the last checkpoint and replays the same records. Only a pause exposes it: a killed worker never wakes, and a partitioned one keeps running its timers and fences itself.',
    caughtBy: ['duplicates'],
    exposedBy: ['process-pause'],
  },
  {
    name: 'latest-by-wallclock',
    mechanism:
      'The coordinator decides which completed checkpoint is the latest by the wall-clock time in its records instead of by the log order and ids. After its clock steps back, newer checkpoints look older, and the next restore goes back to a checkpoint taken before the step, replaying records that are already committed. Only a clock step exposes it.',
    caughtBy: ['duplicates'],
    exposedBy: ['clock-step'],
  },
  {
    name: 'torn-log-append',
    mechanism:
      'An append to the coordinator\'s checkpoint log that fails half-way (ENOSPC) leaves its partial bytes in the log, and the coordinator goes on; later records follow the torn line. At the next restart the log is read only up to the torn line, so every later completed checkpoint is silently dropped and the job restores an old one, replaying committed records. Only a full disk exposes it.',
    caughtBy: ['duplicates'],
    exposedBy: ['disk-full'],
  },
  {
    name: 'trust-existing-object',
    mechanism:
      'When a re-commit meets NoSuchUpload, the sink checks only that an object exists at the key, not its ETag, size or token, so it takes an object it did not write (a foreign writer\'s, or a corrupted one) as its own commit and goes on. Only a foreign object at the key of a re-completed upload exposes it.',
    caughtBy: ['acceptedForeign'],
    exposedBy: ['store-tamper'],
  },
  {
    name: 'unchecked-log',
    mechanism:
      'The coordinator reads its checkpoint log without verifying the records\' checksums, so a record corrupted at rest (a bit flipped in a source offset, say) is restored from as written, and a corrupted last record is dropped as if it were a torn append: the job restores offsets that were never checkpointed, or an older checkpoint whose successors were already committed. Only a corruption of the log at rest exposes it.',
    caughtBy: ['duplicates', 'gaps'],
    exposedBy: ['state-corruption'],
  },
];

export const MUTANT_NAMES: readonly ClinkMutant[] = CLINK_MUTANTS.map((m) => m.name);

/** The mutants whose behaviour is implemented by the sink (the others are the runtime's). */
export const SINK_MUTANTS: readonly ClinkMutant[] = ['commit-at-prepare', 'nosuchupload-rewrite', 'drop-restored-handles', 'abort-on-unknown', 'keys-reused', 'zero-byte-commit', 'trust-existing-object'];

export function mutantInfo(name: string): MutantInfo | undefined {
  return CLINK_MUTANTS.find((m) => m.name === name);
}

/** Each mutant's seams: a Record over the closed union, so the compiler requires one entry per name. */
const MUTANT_SEAMS: Record<ClinkMutant, SeamsFactory> = {
  'commit-at-prepare': commitAtPrepare,
  'nosuchupload-rewrite': nosuchuploadRewrite,
  'drop-restored-handles': dropRestoredHandles,
  'abort-on-unknown': abortOnUnknown,
  'keys-reused': keysReused,
  'zero-byte-commit': zeroByteCommit,
  'no-fencing': noFencing,
  'offsets-off-by-one': offsetsOffByOne,
  'stall-flush': stallFlush,
  'latest-by-wallclock': latestByWallclock,
  'torn-log-append': tornLogAppend,
  'trust-existing-object': trustExistingObject,
  'unchecked-log': uncheckedLog,
};

/**
 * The seams of a protocol object (one sink, one worker, ...) under a mutant: fresh each call,
 * so a mutant's state (a counter) belongs to that object. No mutant, or a name outside the
 * union (which config and the sink's open() refuse loudly): `{}`, the correct protocol.
 */
export function seamsFor(mutant?: ClinkMutant | 'none'): ProtocolSeams {
  return isClinkMutant(mutant) ? MUTANT_SEAMS[mutant]() : {};
}

/** The mutant a job's setting names: absent, empty or 'none' is the correct engine (undefined). */
export function namedMutant<T extends string>(setting: T | undefined): Exclude<T, 'none'> | undefined {
  return !setting || setting === 'none' ? undefined : (setting as Exclude<T, 'none'>);
}
