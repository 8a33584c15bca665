/**
 * The seam between Clink's runtime (engine/clink/*: coordinator, worker, source) and its
 * sinks (engine/clink/sink/*). A worker runs one Sink per subtask.
 *
 * Protocol per subtask, per checkpoint C in epoch E:
 *   write(line)*  →  prepare(C, E) at the barrier: buffered lines uploaded as multipart
 *   parts, returning the handles that go into the subtask's snapshot  →  the coordinator
 *   makes C durable  →  commit(C, E, handles) on the completion notification.
 * On restore from checkpoint C (new epoch E'): recover(handlesOfC, E') re-completes them
 * idempotently before any new records are written.
 */
import type { ClinkMutant } from '../mutants/index.ts';

export interface UploadPart {
  partNumber: number;
  etag: string;
  size: number;
}

/** Everything needed to complete (or verify) one staged object, carried in the snapshot. */
export interface UploadHandle {
  bucket: string;
  key: string;
  uploadId: string;
  parts: UploadPart[];
  bytes: number;
  records: number;
  /** Random token stored as object metadata, so an unrelated object at the key is never taken for this commit. */
  token: string;
  /** hex(md5(concat of binary part md5s)) + '-' + parts.length: what the committed object's ETag must be. */
  expectedEtag: string;
  subtask: number;
  checkpointId: number;
  epoch: number;
}

export interface S3Settings {
  endpoint: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
}

export interface SinkContext {
  subtask: number;
  bucket: string;
  /** Key prefix for this run, ending in '/'. */
  prefix: string;
  checkpointIntervalMs: number;
  /** A Clink mutant, or none (absent or 'none': the correct sink). */
  mutant?: ClinkMutant | 'none';
  s3: S3Settings;
  /** Append-only journal of every upload started: one JSON line {key, uploadId, t} each, fsynced. */
  journalPath: string;
  log(line: string): void;
  /**
   * Reaches a named fault point. If armed, the runtime records the firing durably and
   * SIGKILLs this process, so the promise never settles; otherwise it resolves at once.
   */
  faultPoint(point: string, info?: { checkpointId?: number; epoch?: number }): Promise<void>;
}

export interface Sink {
  /** Opens the sink and logs its one open-time line naming the family and its settings. */
  open(): Promise<void>;
  /** Buffers one record (one JSON line, without the newline). */
  write(line: string): void;
  /** The barrier: stage what is buffered; the handles go into the snapshot. */
  prepare(checkpointId: number, epoch: number): Promise<UploadHandle[]>;
  /** The checkpoint is durable: make its handles visible. Idempotent. */
  commit(checkpointId: number, epoch: number, handles: UploadHandle[]): Promise<void>;
  /** After a restore: re-complete the restored handles (idempotent), before new writes. */
  recover(handles: UploadHandle[], epoch: number): Promise<void>;
  /** Drops anything buffered and releases clients. */
  close(): Promise<void>;
}

export type SinkFactory = (ctx: SinkContext) => Sink;
