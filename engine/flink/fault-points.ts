/**
 * Named protocol points inside Flink, injected by the Java agent in engine/flink/agent
 * (ByteBuddy advice inlined into Flink 2.2.0's own methods; docs/flink.md has the mapping
 * and says what is exact and what approximate). The agent in each JobManager and
 * TaskManager JVM reads `<dataDir>/flink/faults/armed.json` on its host,
 * `{"<point>": remainingCount}` (Clink's contract, engine/clink/fault-points.ts); a thread
 * that reaches an armed point decrements the count, appends a fired record to
 * `fired.jsonl` (forced to disk), prints `clink-qual fault point fired: point=...` to the
 * service's log and halts the JVM (Runtime.halt(137): no shutdown hooks, no cleanup).
 */

/** Each point, the Flink method it is injected at, and where it runs. */
export const FLINK_FAULT_POINT_MAP: Readonly<Record<string, { role: 'worker' | 'coordinator'; at: string }>> = {
  'sink.before-prepare': { role: 'worker', at: 'FileWriter.prepareCommit() entry (at the barrier, before the in-progress parts are closed for commit)' },
  'sink.after-prepare': { role: 'worker', at: 'FileWriter.prepareCommit() normal exit with at least one committable (parts closed and uploaded, the committables not yet in the checkpoint)' },
  'coordinator.before-complete-record': { role: 'coordinator', at: 'CheckpointCoordinator.addCompletedCheckpointToStoreAndSubsumeOldest entry (the _metadata file is written, the checkpoint is not yet in the CompletedCheckpointStore)' },
  'coordinator.after-complete-record': { role: 'coordinator', at: 'CheckpointCoordinator.addCompletedCheckpointToStoreAndSubsumeOldest normal exit (stored, ZooKeeper HA included; no task notified yet)' },
  'sink.before-commit': { role: 'worker', at: 'FileCommitter.commit(requests) entry with at least one request, outside recovery (before CompleteMultipartUpload)' },
  'sink.after-commit': { role: 'worker', at: 'FileCommitter.commit(requests) normal exit with at least one request, outside recovery' },
  'sink.recover.before-commit': { role: 'worker', at: 'FileCommitter.commit(requests) entry with at least one request, inside CommitterOperator.initializeState (re-commit of restored committables)' },
  'sink.recover.after-commit': { role: 'worker', at: 'FileCommitter.commit(requests) normal exit with at least one request, inside CommitterOperator.initializeState' },
};

export const FLINK_FAULT_POINTS: readonly string[] = Object.keys(FLINK_FAULT_POINT_MAP);

/** How each point is injected, for the report: the method, the JVM, and the agent. */
export const FLINK_FAULT_POINT_INJECTION: Readonly<Record<string, string>> = Object.fromEntries(
  Object.entries(FLINK_FAULT_POINT_MAP).map(([p, m]) => [p, `${m.at}, in the ${m.role === 'worker' ? 'TaskManager' : 'JobManager'} JVM: ByteBuddy advice from the clink-qual agent (-javaagent) halts the JVM there (Runtime.halt)`]),
);
export const FLINK_COORDINATOR_FAULT_POINTS: readonly string[] = FLINK_FAULT_POINTS.filter((p) => FLINK_FAULT_POINT_MAP[p]!.role === 'coordinator');
/** Reached only while a restored subtask re-commits: they fire only after something causes a recovery. */
export const FLINK_RECOVERY_FAULT_POINTS: readonly string[] = ['sink.recover.before-commit', 'sink.recover.after-commit'];
/** Every mandatory point is injected: none is reported as not applicable. */
export const FLINK_NOT_APPLICABLE_POINTS: Readonly<Record<string, string>> = {};

/** The agent's evidence line in a JobManager's or TaskManager's out.log. */
export const FIRED_LINE = 'clink-qual fault point fired:';
