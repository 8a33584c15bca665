/**
 * What the store-tamper fault needs to know of Flink (engine/engine.ts, EngineStoreTamper):
 * which committed part file Flink will commit again at its next restore, and how Flink says
 * it refused an object at a key (an integrity stop).
 *
 * Part files. The FileSink's writer names a part `<prefix>part-<uuid>-<n>.jsonl`
 * (FileWriterBucket.assembleNewPartPath in Flink 2.2.0: the part prefix and suffix the job
 * sets, a UUID drawn for each bucket writer instance, the writer's part counter). The key
 * names neither the subtask nor the checkpoint. But with OnCheckpointRollingPolicy a part is
 * committed only once the checkpoint that holds its committable is complete (the committer
 * commits on notifyCheckpointComplete), and MinIO stamps a completed multipart object's
 * LastModified at its CompleteMultipartUpload. So a part committed after checkpoint N
 * completed was still uncommitted when N's state was taken: it is in N's committer state,
 * and a restore from N (while N is the latest completed checkpoint) commits it again
 * (FileCommitter.commit -> S3Committer.commitAfterRecovery). A part committed before N
 * completed may or may not be in N's state: it is never placed. The two clocks (the store's
 * and the JobManager's checkpoint times) are the same host clock on the local rig; on an
 * inventory rig their skew must stay below the pause between checkpoints (at least 1 s).
 *
 * Refusals. S3Committer.commitAfterRecovery (flink-s3-fs-hadoop 2.2.0, read with javap)
 * throws an IOException naming the key when the re-commit finds the upload gone and the
 * object at the key missing ("Recovering commit failed for object K. Object does not exist
 * and MultiPart Upload U is not valid.") or of another length ("Inconsistent result for
 * object K: conflicting lengths. ..."). The task fails and the job restarts; the failure is
 * in the job's exception history (REST /jobs/<id>/exceptions).
 */
import type { CommittedObject, EngineHealth, RecommitTarget } from '../engine.ts';

/** A FileSink part file of the job (engine/flink/job: part prefix "part", suffix ".jsonl"). */
const PART_FILE = /(?:^|\/)part-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})-(\d+)\.jsonl$/;

/** The writer instance (its UUID) and part counter a Flink part-file key names, or null for another key. */
export function parseFlinkPartKey(key: string): { writer: string; part: number } | null {
  const m = PART_FILE.exec(key);
  return m ? { writer: m[1]!, part: Number(m[2]) } : null;
}

/**
 * The part file Flink will commit again when it next restores from its latest completed
 * checkpoint: among the non-empty part files committed (LastModified) after that
 * checkpoint completed, the newest (ties: the first key). Null when none is, e.g. while
 * the checkpoint's commits have not landed yet, or when the health has no checkpoint times.
 */
export function flinkRecommitTarget(objects: readonly CommittedObject[], health: Pick<EngineHealth, 'checkpoints' | 'lastCompletedCheckpointId'>): RecommitTarget | null {
  const latest = health.lastCompletedCheckpointId;
  if (latest === null) return null;
  const cp = (health.checkpoints ?? []).find((c) => c.id === latest);
  const completedMs = cp ? Date.parse(cp.at) : NaN;
  if (!Number.isFinite(completedMs)) return null;
  let best: (CommittedObject & { ms: number }) | null = null;
  for (const o of objects) {
    if (o.size <= 0 || !o.lastModified || !parseFlinkPartKey(o.key)) continue;
    const ms = Date.parse(o.lastModified);
    if (!(ms > completedMs)) continue;
    if (!best || ms > best.ms || (ms === best.ms && o.key < best.key)) best = { ...o, ms };
  }
  if (!best) return null;
  const { ms: _ms, ...target } = best;
  return { ...target, checkpointId: latest };
}

/** The phrases of S3Committer's refusals of an object at a key (flink-s3-fs-hadoop 2.2.0). */
export const FLINK_REFUSALS = ['Recovering commit failed for object', 'conflicting lengths', 'Object does not exist'] as const;

/** One failure in Flink 2.2's REST answer to GET /jobs/<id>/exceptions. */
interface RestExceptionEntry {
  exceptionName?: string;
  stacktrace?: string;
  timestamp?: number;
  concurrentExceptions?: RestExceptionEntry[];
}

/** Flink 2.2's REST answer to GET /jobs/<id>/exceptions (the fields read here). */
export interface RestJobExceptions {
  exceptionHistory?: { entries?: RestExceptionEntry[] };
  'root-exception'?: string;
  timestamp?: number;
}

/**
 * The newest refusal of an object in the job's exception history, as an integrity stop:
 * its time and the exception's own message line (which names the key); null when no
 * failure of the job is one.
 */
export function flinkIntegrityStop(ex: RestJobExceptions): { at: string; message: string } | null {
  const entries: { text: string; timestamp?: number }[] = [];
  const walk = (e: RestExceptionEntry): void => {
    entries.push({ text: e.stacktrace ?? e.exceptionName ?? '', ...(e.timestamp !== undefined ? { timestamp: e.timestamp } : {}) });
    for (const c of e.concurrentExceptions ?? []) walk(c);
  };
  for (const e of ex.exceptionHistory?.entries ?? []) walk(e);
  if (ex['root-exception']) entries.push({ text: ex['root-exception'], ...(ex.timestamp !== undefined ? { timestamp: ex.timestamp } : {}) });
  let best: { at: string; message: string; ms: number } | null = null;
  for (const e of entries) {
    const line = e.text.split('\n').find((l) => FLINK_REFUSALS.some((r) => l.includes(r)));
    if (!line) continue;
    const ms = e.timestamp ?? 0;
    if (!best || ms > best.ms) best = { at: new Date(ms).toISOString(), message: line.trim(), ms };
  }
  return best ? { at: best.at, message: best.message } : null;
}
