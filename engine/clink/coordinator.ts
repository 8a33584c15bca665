/**
 * The Clink coordinator: job manager, checkpoint coordinator, durable checkpoint log.
 *
 * Every state change runs through one serial queue, so a checkpoint completion and an
 * epoch change never interleave: a restore always starts from the newest durable record.
 *
 * - Membership: workers connect and say hello; a closed connection or no heartbeat for
 *   `workerLossTimeoutMs` loses a worker; a new or lost worker → a new epoch (persisted
 *   before use) and a redeploy of every subtask over the live workers, from the last
 *   completed checkpoint (its offsets, and its handles to re-complete).
 * - Checkpoints: on a fixed grid of the interval (cadence.ts), while the job runs, barrier(C, E) with C persisted as
 *   used first (ids strictly increase across restores and restarts). When every subtask's
 *   snapshot for (C, E) arrived: fault point, append + fsync the completed record, fault
 *   point, then complete(C, E) to the workers. A barrier not completed in time is abandoned.
 *   The harness may also ask for one now (checkpoint-request.ts): the same barrier, at once
 *   when the job runs and none is pending; the grid goes on unchanged.
 * - Restart: the log gives the last completed checkpoint and the highest epoch and id
 *   used; the first deploy raises the epoch and re-notifies (restoredHandles).
 * - Evidence: status.json (atomic rewrite on every change) and checkpoints.log.
 */
import net from 'node:net';
import path from 'node:path';
import { mkdirSync } from 'node:fs';
import type { ClinkConfig } from './config.ts';
import { DurableLog, writeFileAtomic } from './durable-log.ts';
import { monotonicMs } from './mono.ts';
import { CheckpointCadence } from './cadence.ts';
import { barrierDue, checkpointRequestPath, takeCheckpointRequest } from './checkpoint-request.ts';
import { FaultPoints } from './fault-points.ts';
import { describeMessage, readLines, send, type CoordinatorMessage, type WorkerMessage } from './protocol.ts';
import { seamsFor, type ProtocolSeams } from './mutants/index.ts';
import { PendingCheckpoint, assignSubtasks, recoverState, supersedes, tasksFromCheckpoint, type LogRecord, type RecoveredState } from './assign.ts';

interface WorkerConn {
  id: string;
  pid: number;
  socket: net.Socket;
  lastSeen: number;
}

export interface ClinkStatus {
  running: boolean;
  epoch: number;
  completedCheckpoints: number;
  lastCompletedCheckpointId: number | null;
  lastCompletedAt: string | null;
  workers: { id: string; pid: number; subtasks: number[] }[];
  pid: number;
  updatedAt: string;
  checkpoints: { id: number; epoch: number; at: string }[];
  /** Set when the job was stopped on a worker's integrity error (the process then exits). */
  integrityStop?: { at: string; message: string };
}

export function checkpointLogPath(clinkDir: string): string {
  return path.join(clinkDir, 'checkpoints.log');
}
export function statusPath(clinkDir: string): string {
  return path.join(clinkDir, 'status.json');
}

export class Coordinator {
  readonly cfg: ClinkConfig;
  readonly faults: FaultPoints;
  #log!: DurableLog<LogRecord>;
  #state!: RecoveredState;
  #epoch = 0;
  #workers = new Map<string, WorkerConn>();
  #assignment = new Map<string, number[]>();
  #ready = new Set<number>();
  #running = false;
  #pending: PendingCheckpoint | null = null;
  #cadence: CheckpointCadence;
  #queue: Promise<void> = Promise.resolve();
  #server: net.Server | null = null;
  #timer: NodeJS.Timeout | null = null;
  #rebalanceTimer: NodeJS.Timeout | null = null;
  #startedAt = monotonicMs();
  #deployedOnce = false;
  readonly #out: (line: string) => void;

  readonly #fatal: (code: number) => void;
  /** The protocol steps the job's mutant overrides (none for the correct coordinator). */
  readonly #seams: ProtocolSeams;
  #statusError: string | null = null;
  /** The last failure to consume a checkpoint request (reported once, not fatal). */
  #requestError: string | null = null;
  #integrityStop: { at: string; message: string } | null = null;

  constructor(cfg: ClinkConfig, opts: { log?: (line: string) => void; fatal?: (code: number) => void } = {}) {
    this.cfg = cfg;
    this.#cadence = new CheckpointCadence(cfg.checkpointIntervalMs);
    this.#seams = seamsFor(cfg.mutant);
    this.faults = new FaultPoints(cfg.clinkDir, cfg.host, 'coordinator');
    this.#out = opts.log ?? ((l) => console.log(l));
    this.#fatal = opts.fatal ?? ((code) => process.exit(code));
  }

  /**
   * Appends to the checkpoint log. A failed append (a full disk) stops the coordinator
   * loudly: it cannot promise durability, and the log was cut back to its last good record,
   * so a restart (once there is room) resumes from exactly what is durable. (A seam may
   * override it: mutant torn-log-append goes on, the partial bytes left in the log.)
   */
  #append(rec: LogRecord): void {
    try {
      this.#log.append(rec);
    } catch (err) {
      // Seam: what a failed append does (correct: stop the coordinator).
      if (this.#seams.checkpointLog?.stopOnFailedAppend === false) throw err;
      this.#out(`clink coordinator: FATAL: the checkpoint log could not be appended: ${(err as Error).message}; stopping (start me again once the disk has room)`);
      this.#fatal(3);
      throw err;
    }
  }

  async start(): Promise<void> {
    mkdirSync(this.cfg.clinkDir, { recursive: true });
    const opened = DurableLog.open<LogRecord>(checkpointLogPath(this.cfg.clinkDir), { tornAppends: this.#seams.checkpointLog?.keepTornAppends ?? false, uncheckedRecords: this.#seams.checkpointLog?.uncheckedRecords ?? false });
    this.#log = opened.log;
    this.#state = recoverState(opened.records, this.#seams);
    this.#epoch = this.#state.maxEpoch;
    this.#out(
      `clink coordinator pid ${process.pid}: log has ${opened.records.length} records (torn tail ${opened.tornBytes} bytes ignored); ` +
        `max epoch ${this.#state.maxEpoch}, max checkpoint ${this.#state.maxCheckpointId}, last completed ${this.#state.lastCompleted?.id ?? 'none'}`,
    );
    this.#writeStatus();
    // A request for a checkpoint belongs to the moment it was made: one left from before this start is dropped.
    if (this.#takeRequest()) this.#out(`clink coordinator: a checkpoint request from before this start dropped (${checkpointRequestPath(this.cfg.clinkDir)})`);
    this.#server = net.createServer((s) => this.#accept(s));
    await new Promise<void>((resolve, reject) => {
      this.#server!.once('error', reject);
      this.#server!.listen(this.cfg.coordinator.port, this.cfg.coordinator.address, () => resolve());
    });
    this.#out(`clink coordinator listening on ${this.cfg.coordinator.address}:${this.cfg.coordinator.port}`);
    this.#timer = setInterval(() => this.#tick(), 250);
  }

  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    if (this.#rebalanceTimer) clearTimeout(this.#rebalanceTimer);
    for (const w of this.#workers.values()) w.socket.destroy();
    await new Promise<void>((r) => (this.#server ? this.#server.close(() => r()) : r()));
    await this.#queue;
    this.#log.close();
  }

  #enqueue(what: string, fn: () => Promise<void> | void): void {
    this.#queue = this.#queue.then(fn).catch((err: Error) => {
      this.#out(`clink coordinator: ${what} failed: ${err.stack ?? err.message}`);
    });
  }

  #accept(socket: net.Socket): void {
    socket.setNoDelay(true);
    socket.setKeepAlive(true, 1000);
    let id: string | null = null;
    readLines(socket, (raw) => {
      const msg = raw as WorkerMessage;
      if (msg.type === 'hello') {
        id = msg.workerId;
        const prev = this.#workers.get(id);
        if (prev && prev.socket !== socket) prev.socket.destroy();
        this.#workers.set(id, { id, pid: msg.pid, socket, lastSeen: monotonicMs() });
        this.#out(`clink coordinator: worker ${id} (pid ${msg.pid}) registered${prev ? ' again' : ''}`);
        this.#membershipChanged();
        return;
      }
      if (!id) return;
      const w = this.#workers.get(id);
      if (!w || w.socket !== socket) return;
      w.lastSeen = monotonicMs();
      this.#onMessage(w, msg);
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      if (!id) return;
      const w = this.#workers.get(id);
      if (w && w.socket === socket) {
        this.#workers.delete(id);
        this.#out(`clink coordinator: worker ${id} lost (connection closed)`);
        this.#membershipChanged();
      }
    });
  }

  #onMessage(w: WorkerConn, msg: WorkerMessage): void {
    switch (msg.type) {
      case 'heartbeat':
        return;
      case 'ready':
        if (msg.epoch !== this.#epoch) return;
        this.#ready.add(msg.subtask);
        if (!this.#running && this.#ready.size === this.cfg.partitions) {
          this.#running = true;
          this.#out(`clink coordinator: epoch ${this.#epoch}: job running (${this.cfg.partitions} subtasks)`);
          this.#cadence.running(monotonicMs());
          this.#writeStatus();
        }
        return;
      case 'snapshot': {
        // A snapshot of another epoch is a zombie's (a worker that was lost and came back, or
        // a task cancelled since): its staged uploads never enter a checkpoint. Said in the log
        // (zombies.json reads it), the epoch being the fence.
        if (msg.epoch !== this.#epoch) {
          this.#out(`clink coordinator: ignored a ${describeMessage(msg)} from worker ${w.id}: the current epoch is ${this.#epoch}`);
          return;
        }
        const p = this.#pending;
        if (!p || !p.add(msg)) return;
        if (p.complete) this.#enqueue(`complete checkpoint ${p.id}`, () => this.#completeCheckpoint(p));
        return;
      }
      case 'error':
        if (msg.integrity) {
          this.#stopOnIntegrity(w, msg);
          return;
        }
        this.#out(`clink coordinator: worker ${w.id} reports (epoch ${msg.epoch}${msg.subtask !== undefined ? `, subtask ${msg.subtask}` : ''}${msg.fatal ? ', fatal' : ''}): ${msg.message}`);
        if (msg.fatal && msg.epoch === this.#epoch && this.#deployedOnce) {
          // A subtask died: restore the whole job from the last completed checkpoint (after a pause).
          this.#running = false;
          this.#pending = null;
          setTimeout(() => {
            if (this.#epoch === msg.epoch) this.#membershipChanged();
          }, 2000);
        }
        return;
    }
  }

  /**
   * A worker's integrity error (a committed object lost, or one at our key that we did not
   * write): never retried, never skipped. The job stops (every task cancelled, no barrier, no
   * redeploy), status.json and the log say why, and the coordinator exits; it is started
   * again once the store is repaired, and restores from the last completed checkpoint.
   */
  #stopOnIntegrity(w: WorkerConn, msg: Extract<WorkerMessage, { type: 'error' }>): void {
    if (this.#integrityStop) return;
    const message = `worker ${w.id} subtask ${msg.subtask ?? '?'} (epoch ${msg.epoch}): ${msg.message}`;
    this.#integrityStop = { at: new Date().toISOString(), message };
    this.#running = false;
    this.#pending = null;
    if (this.#rebalanceTimer) clearTimeout(this.#rebalanceTimer);
    if (this.#timer) clearInterval(this.#timer);
    for (const x of this.#workers.values()) this.#send(x, { type: 'cancel', epoch: this.#epoch });
    this.#writeStatus();
    this.#out(`clink coordinator: INTEGRITY STOP: ${message}; the job is stopped (never retried, never skipped); start me again once the store is repaired`);
    // A moment for the cancel messages to leave before the process exits.
    setTimeout(() => this.#fatal(4), 500);
  }

  #membershipChanged(): void {
    if (this.#integrityStop) return;
    this.#running = false;
    this.#pending = null;
    this.#writeStatus();
    if (this.#rebalanceTimer) clearTimeout(this.#rebalanceTimer);
    // Debounce: several workers usually (re)appear together.
    this.#rebalanceTimer = setTimeout(() => {
      this.#rebalanceTimer = null;
      this.#maybeRebalance();
    }, 300);
  }

  #maybeRebalance(): void {
    if (this.#integrityStop) return;
    if (!this.#deployedOnce) {
      // At (re)start, wait for the expected workers (or the startup grace period).
      const expected = this.cfg.expectedWorkers ?? [];
      const all = expected.every((w) => this.#workers.has(w));
      const waited = monotonicMs() - this.#startedAt >= (this.cfg.startupWaitMs ?? 15_000);
      if (!all && !waited) return;
      if (this.#workers.size === 0) return;
    }
    this.#enqueue('redeploy', () => this.#redeploy());
  }

  async #redeploy(): Promise<void> {
    const live = [...this.#workers.keys()];
    if (live.length === 0) {
      this.#running = false;
      this.#assignment = new Map();
      this.#writeStatus();
      this.#out('clink coordinator: no live workers; waiting');
      return;
    }
    const epoch = this.#state.maxEpoch + 1;
    this.#append({ t: 'epoch', epoch, at: new Date().toISOString() });
    this.#state.maxEpoch = epoch;
    this.#epoch = epoch;
    this.#deployedOnce = true;
    this.#pending = null;
    this.#running = false;
    this.#ready.clear();
    this.#assignment = assignSubtasks(this.cfg.partitions, live);
    const cp = this.#state.lastCompleted;
    const tasks = tasksFromCheckpoint(this.cfg.partitions, cp);
    this.#out(
      `clink coordinator: epoch ${epoch}: deploying from checkpoint ${cp?.id ?? 'none'} over [${live.sort().join(', ')}]: ` +
        [...this.#assignment].map(([w, s]) => `${w}=[${s.join(',')}]`).join(' '),
    );
    for (const [wid, subtasks] of this.#assignment) {
      const w = this.#workers.get(wid);
      send(w?.socket, { type: 'deploy', epoch, tasks: subtasks.map((s) => tasks[s]!) });
    }
    this.#writeStatus();
  }

  #tick(): void {
    // Intervals and timeouts run on the monotonic clock: a step of the wall clock must not
    // stop checkpoints or lose workers. Wall-clock time is only written into records.
    const now = monotonicMs();
    // Pings keep the workers from fencing themselves; silence past the loss timeout loses a worker.
    const lossTimeout = this.cfg.workerLossTimeoutMs ?? 6000;
    for (const w of [...this.#workers.values()]) {
      if (now - w.lastSeen > lossTimeout) {
        // Decide after the poll phase, so heartbeats already waiting are read first.
        setImmediate(() => this.#maybeLose(w, lossTimeout));
        continue;
      }
      this.#send(w, { type: 'ping', epoch: this.#epoch });
    }
    if (!this.#deployedOnce && !this.#rebalanceTimer) this.#maybeRebalance();
    const timeout = this.cfg.checkpointTimeoutMs ?? Math.max(3 * this.cfg.checkpointIntervalMs, 30_000);
    if (this.#pending && now - this.#pending.startedAt > timeout) {
      this.#out(`clink coordinator: checkpoint ${this.#pending.id} (epoch ${this.#pending.epoch}) abandoned after ${timeout} ms (${this.#pending.offsets.size}/${this.#pending.expected} snapshots)`);
      this.#pending = null;
    }
    // The periodic slot first, as before requests existed; a request (checkpoint-request.ts)
    // is consumed on every look, and served only when a barrier can start now.
    const why = barrierDue({ running: this.#running, pending: this.#pending !== null, requested: this.#takeRequest() }, this.#cadence, now);
    if (why) this.#enqueue('barrier', () => this.#triggerBarrier(why === 'requested'));
  }

  /** Consumes a pending checkpoint request (true when there was one); a failure to is reported once. */
  #takeRequest(): boolean {
    try {
      const taken = takeCheckpointRequest(this.cfg.clinkDir);
      this.#requestError = null;
      return taken;
    } catch (err) {
      const msg = (err as Error).message;
      if (this.#requestError !== msg) this.#out(`clink coordinator: the checkpoint request could not be read: ${msg}`);
      this.#requestError = msg;
      return false;
    }
  }

  #maybeLose(w: WorkerConn, lossTimeout: number): void {
    const silent = Math.round(monotonicMs() - w.lastSeen);
    if (silent <= lossTimeout || this.#workers.get(w.id) !== w) return;
    this.#out(`clink coordinator: worker ${w.id} lost (no heartbeat for ${silent} ms)`);
    this.#workers.delete(w.id);
    w.socket.destroy();
    this.#membershipChanged();
  }

  #send(w: WorkerConn, msg: CoordinatorMessage): void {
    send(w.socket, msg);
  }

  #triggerBarrier(requested = false): void {
    if (!this.#running || this.#pending) return;
    const id = this.#state.maxCheckpointId + 1;
    const epoch = this.#epoch;
    this.#append({ t: 'barrier', id, epoch, at: new Date().toISOString() });
    if (requested) this.#out(`clink coordinator: checkpoint ${id} (epoch ${epoch}) triggered on request, outside the periodic cadence`);
    this.#state.maxCheckpointId = id;
    this.#pending = new PendingCheckpoint(id, epoch, this.cfg.partitions, monotonicMs());
    for (const wid of this.#assignment.keys()) {
      const w = this.#workers.get(wid);
      if (w) this.#send(w, { type: 'barrier', checkpointId: id, epoch });
    }
  }

  async #completeCheckpoint(p: PendingCheckpoint): Promise<void> {
    if (this.#pending !== p || p.epoch !== this.#epoch) return; // abandoned or superseded meanwhile
    await this.faults.reachAsync('coordinator.before-complete-record', { checkpointId: p.id, epoch: p.epoch });
    const rec = p.toRecord();
    this.#append(rec);
    await this.faults.reachAsync('coordinator.after-complete-record', { checkpointId: p.id, epoch: p.epoch });
    if (supersedes(rec, this.#state.lastCompleted, this.#seams)) this.#state.lastCompleted = rec;
    this.#state.completedCount++;
    this.#state.recent.push({ id: rec.id, epoch: rec.epoch, at: rec.at });
    if (this.#state.recent.length > 1000) this.#state.recent.shift();
    this.#pending = null;
    this.#writeStatus();
    for (const [wid, subtasks] of this.#assignment) {
      const w = this.#workers.get(wid);
      if (!w) continue;
      const handles: Record<string, (typeof rec.handles)[string]> = {};
      for (const s of subtasks) handles[String(s)] = rec.handles[String(s)] ?? [];
      this.#send(w, { type: 'complete', checkpointId: rec.id, epoch: rec.epoch, handles });
    }
  }

  status(): ClinkStatus {
    const last = this.#state.lastCompleted;
    return {
      running: this.#running,
      epoch: this.#epoch,
      completedCheckpoints: this.#state.completedCount,
      lastCompletedCheckpointId: last?.id ?? null,
      lastCompletedAt: last?.at ?? null,
      workers: [...this.#workers.values()]
        .sort((a, b) => a.id.localeCompare(b.id))
        .map((w) => ({ id: w.id, pid: w.pid, subtasks: this.#assignment.get(w.id) ?? [] })),
      pid: process.pid,
      updatedAt: new Date().toISOString(),
      checkpoints: this.#state.recent,
      ...(this.#integrityStop ? { integrityStop: this.#integrityStop } : {}),
    };
  }

  /** status.json mirrors the log for the plug; a failure to write it (a full disk) is reported once, not fatal. */
  #writeStatus(): void {
    try {
      writeFileAtomic(statusPath(this.cfg.clinkDir), JSON.stringify(this.status()));
      if (this.#statusError) this.#out('clink coordinator: status.json written again');
      this.#statusError = null;
    } catch (err) {
      const msg = (err as Error).message;
      if (this.#statusError !== msg) this.#out(`clink coordinator: status.json not written: ${msg}`);
      this.#statusError = msg;
    }
  }
}
