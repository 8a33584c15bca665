/**
 * Named protocol points for Flink: none is injected yet. Each of the harness's six
 * mandatory points names a real boundary of Flink's two-phase commit, listed here with the
 * Flink method it would map to; injecting it would need a Java agent in the TaskManager or
 * JobManager JVM (Byteman or ByteBuddy from Maven Central) that records the firing and
 * SIGKILLs the process at that method. Until that exists, every point is reported as not
 * applicable with this reason, and the verdict keeps counting it as uncovered: a Flink run
 * is never credited with a point it did not land.
 */
const NO_AGENT = 'not injected: needs a Java agent (Byteman/ByteBuddy) in the Flink JVM, which the Flink plug does not have yet';

export const FLINK_NOT_APPLICABLE_POINTS: Readonly<Record<string, string>> = {
  'sink.before-prepare': `${NO_AGENT}; would map to FileWriter.prepareCommit (entry), which closes the in-progress part file for commit at the barrier`,
  'sink.after-prepare': `${NO_AGENT}; would map to FileWriter.prepareCommit (exit), once the multipart upload's parts are uploaded and its committable exists`,
  'coordinator.before-complete-record': `${NO_AGENT}; would map to CheckpointCoordinator.completePendingCheckpoint (entry), before the completed checkpoint is added to the CompletedCheckpointStore`,
  'coordinator.after-complete-record': `${NO_AGENT}; would map to CheckpointCoordinator.completePendingCheckpoint (exit), after the completed checkpoint is stored and before the TaskManagers are notified`,
  'sink.before-commit': `${NO_AGENT}; would map to FileCommitter.commit (entry), before S3Committer completes the multipart upload`,
  'sink.after-commit': `${NO_AGENT}; would map to FileCommitter.commit (exit), after CompleteMultipartUpload returned`,
};
