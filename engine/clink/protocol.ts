/**
 * Clink's wire protocol: JSON lines over TCP, workers connect to the coordinator.
 *
 * Worker → coordinator: hello, heartbeat, ready (a deployed subtask restored its handles
 * and reads), snapshot (a subtask's state at a barrier), error.
 * Coordinator → worker: ping, deploy (a new epoch's tasks for that worker; any task of an
 * older epoch is cancelled first), barrier, complete (a checkpoint is durable: commit
 * these handles), cancel.
 */
import type { Socket } from 'node:net';
import type { UploadHandle } from './sink/sink-api.ts';

export interface TaskSpec {
  subtask: number;
  partition: number;
  /** Next offset to read; null = the partition's log start (no checkpoint yet). */
  startOffset: number | null;
  /** The last completed checkpoint's handles for this subtask, re-completed before reading. */
  restoredHandles: UploadHandle[];
}

export type WorkerMessage =
  | { type: 'hello'; workerId: string; pid: number; epoch: number }
  | { type: 'heartbeat'; workerId: string; epoch: number }
  | { type: 'ready'; epoch: number; subtask: number }
  | { type: 'snapshot'; checkpointId: number; epoch: number; subtask: number; offset: number | null; handles: UploadHandle[] }
  | {
      type: 'error';
      epoch: number;
      subtask?: number;
      message: string;
      /** The subtask died: the job must be restored. */
      fatal?: boolean;
      /** A SinkIntegrityError (data lost or a foreign object at our key): the job must stop, never be retried. */
      integrity?: boolean;
    };

export type CoordinatorMessage =
  | { type: 'ping'; epoch: number }
  | { type: 'deploy'; epoch: number; tasks: TaskSpec[] }
  | { type: 'barrier'; checkpointId: number; epoch: number }
  | { type: 'complete'; checkpointId: number; epoch: number; handles: Record<string, UploadHandle[]> }
  | { type: 'cancel'; epoch: number };

/** Feeds each complete line of a socket to `onMessage`; bad JSON lines are reported and skipped. */
export function readLines(socket: Socket, onMessage: (msg: unknown) => void, onBad?: (line: string) => void): void {
  let buf = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    buf += chunk;
    let i: number;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      if (!line.trim()) continue;
      let msg: unknown;
      try {
        msg = JSON.parse(line);
      } catch {
        onBad?.(line);
        continue;
      }
      onMessage(msg);
    }
  });
}

/** A worker message in a log line's words: its type, epoch, checkpoint, subtask and uploads (never its offsets' detail). */
export function describeMessage(msg: WorkerMessage): string {
  switch (msg.type) {
    case 'snapshot':
      return `snapshot of checkpoint ${msg.checkpointId} (epoch ${msg.epoch}, subtask ${msg.subtask}, ${msg.handles.length} staged upload${msg.handles.length === 1 ? '' : 's'}${msg.handles[0] ? `, first ${msg.handles[0].key}` : ''})`;
    case 'error':
      return `error (epoch ${msg.epoch}${msg.subtask !== undefined ? `, subtask ${msg.subtask}` : ''}): ${msg.message}`;
    case 'ready':
      return `ready (epoch ${msg.epoch}, subtask ${msg.subtask})`;
    default:
      return `${msg.type} (epoch ${msg.epoch})`;
  }
}

export function send(socket: Socket | null | undefined, msg: WorkerMessage | CoordinatorMessage): boolean {
  if (!socket || socket.destroyed || !socket.writable) return false;
  socket.write(`${JSON.stringify(msg)}\n`);
  return true;
}
