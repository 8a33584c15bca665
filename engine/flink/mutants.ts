/**
 * Flink's deliberately broken variants ("mutants"), chosen by the job's `mutant` setting
 * and put into Flink 2.2.0's own methods by the fault-point agent (engine/flink/agent,
 * Mutants.java: the agent is started with `mutant=<name>`). Each is a plausible bug in a
 * real committer; the harness must catch each with at least one of the counters in
 * `caughtBy`. docs/mutants.md ("Flink") says what each does, where, and what should catch it.
 */
import type { MutantInfo } from '../engine.ts';

export const FLINK_MUTANT_NAMES = ['drop-restored-committables', 'commit-at-prepare', 'swallow-recovery-commit-failure', 'offsets-off-by-one', 'accept-any-object'] as const;
/** A Flink mutant's name. */
export type FlinkMutant = (typeof FLINK_MUTANT_NAMES)[number];

export function isFlinkMutant(name: unknown): name is FlinkMutant {
  return (FLINK_MUTANT_NAMES as readonly unknown[]).includes(name);
}

export const FLINK_MUTANTS: readonly (MutantInfo & { name: FlinkMutant })[] = [
  {
    name: 'drop-restored-committables',
    mechanism:
      "At recovery the committer drops the committables it restored instead of committing them (FileCommitter.commit does nothing inside CommitterOperator.initializeState, so the requests count as committed): a checkpoint that completed but whose parts were not yet committed when a process died is never made visible, while the source resumes after it.",
    caughtBy: ['gaps'],
  },
  {
    name: 'commit-at-prepare',
    mechanism:
      'The writer completes each part file when the snapshot is taken (FileWriter.prepareCommit commits its pending files at the barrier), before the checkpoint that holds them is complete; a failure before the checkpoint completes makes the source replay records that are already visible.',
    caughtBy: ['duplicates'],
  },
  {
    name: 'swallow-recovery-commit-failure',
    mechanism:
      "A failed commitAfterRecovery (the only commit FileCommitter makes) is logged and dropped and the committer carries on: a part whose completion fails is counted as committed and never made visible, and a refusal of the object at the key (missing, or of another length) goes unreported.",
    caughtBy: ['gaps', 'acceptedForeign'],
    exposedBy: ['store-outage', 'store-tamper'],
  },
  {
    name: 'offsets-off-by-one',
    mechanism:
      "On restore the Kafka source starts one record before each checkpointed position (a restored KafkaPartitionSplit's starting offset minus one), replaying one already committed record per partition per restore.",
    caughtBy: ['duplicates'],
  },
  {
    name: 'accept-any-object',
    mechanism:
      "On a re-commit whose upload is gone, S3Committer.commitAfterRecovery accepts whatever is at the key: its checks of the object (it must exist, with the recovered upload's length) are dropped, so a foreign, truncated or deleted object passes as the committed part.",
    caughtBy: ['acceptedForeign'],
    exposedBy: ['store-tamper'],
  },
];
