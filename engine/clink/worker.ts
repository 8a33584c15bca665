/**
 * A Clink worker process: connects to the coordinator (and reconnects, with retries, for
 * as long as it lives: it survives a coordinator loss with the same PID), runs the
 * subtasks the coordinator deploys, and fences itself when cut off.
 *
 * Self-fencing: no word from the coordinator for `fencingTimeoutMs` (shorter than the
 * coordinator's worker-loss timeout) → every task is stopped and its buffer dropped, and
 * the connection is dropped and re-established. Nothing commits without a complete() of
 * the current epoch. (Mutants override steps here through seams, engine/clink/mutants/:
 * no-fencing replaces fencing, keeping the tasks to commit on their own timer.)
 *
 * Silence is measured on the monotonic clock, so a step of the wall clock neither fences a
 * worker that hears its coordinator nor keeps one that does not. A worker that was stalled
 * (SIGSTOP, a long pause) notices only when its timers run again; it reads what its socket
 * already holds before it decides anything. (The stall is a seam too: mutant stall-flush
 * first commits its buffered records on its own, assuming it still owns its partitions.)
 */
import net from 'node:net';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { ClinkConfig } from './config.ts';
import { FaultPoints } from './fault-points.ts';
import { monotonicMs } from './mono.ts';
import { describeMessage, readLines, send, type CoordinatorMessage, type WorkerMessage } from './protocol.ts';
import type { SinkContext, SinkFactory } from './sink/sink-api.ts';
import { Subtask } from './subtask.ts';
import { seamsFor, type ProtocolSeams, type WorkerSeamContext } from './mutants/index.ts';
import { completionsInFlight, completionsSettled } from './sink/completions.ts';

/**
 * How long a named fault point waits for this process's completions in flight before its kill:
 * they take milliseconds; only a store paused meanwhile holds one longer, and the harness gives
 * a point at least 30 s to fire (chaos/protocol-point.ts fireDeadlineMs).
 */
export const COMPLETION_WAIT_BEFORE_KILL_MS = 20_000;

/**
 * A worker's fault points. A named point kills this whole process, every subtask in it: never
 * inside a sibling subtask's CompleteMultipartUpload, which the pinned MinIO can lose (F-1;
 * sink/completions.ts). The kill waits for those in flight (at most the given wait).
 */
export function workerFaultPoints(clinkDir: string, host: string, maxWaitMs = COMPLETION_WAIT_BEFORE_KILL_MS): FaultPoints {
  const faults = new FaultPoints(clinkDir, host, 'worker');
  faults.beforeKill = { what: 'CompleteMultipartUpload request(s)', busy: completionsInFlight, settled: completionsSettled, maxWaitMs };
  return faults;
}

export interface WorkerOptions {
  sinkFactory: SinkFactory;
  log?: (line: string) => void;
}

export class Worker {
  readonly cfg: ClinkConfig;
  readonly id: string;
  readonly faults: FaultPoints;
  readonly #sinkFactory: SinkFactory;
  readonly #log: (line: string) => void;
  readonly #s3: { accessKeyId: string; secretAccessKey: string };
  #socket: net.Socket | null = null;
  #lastHeard = monotonicMs();
  #lastTick = monotonicMs();
  #epoch = 0;
  #tasks = new Map<number, Subtask>();
  #timer: NodeJS.Timeout | null = null;
  #stopped = false;
  #fenced = false;
  #connectAttempts = 0;
  /** The protocol steps the job's mutant overrides (none for the correct worker). */
  readonly #seams: ProtocolSeams;

  constructor(cfg: ClinkConfig, opts: WorkerOptions) {
    this.cfg = cfg;
    this.id = cfg.host;
    this.faults = workerFaultPoints(cfg.clinkDir, cfg.host);
    this.#sinkFactory = opts.sinkFactory;
    this.#log = opts.log ?? ((l) => console.log(l));
    this.#seams = seamsFor(cfg.mutant);
    this.#s3 = JSON.parse(readFileSync(cfg.s3.credentialsFile, 'utf8')) as { accessKeyId: string; secretAccessKey: string };
  }

  get epoch(): number {
    return this.#epoch;
  }

  get subtasks(): number[] {
    return [...this.#tasks.keys()].sort((a, b) => a - b);
  }

  start(): void {
    this.#log(`clink worker ${this.id} pid ${process.pid} starting; coordinator ${this.cfg.coordinator.address}:${this.cfg.coordinator.port}`);
    this.#connect();
    this.#timer = setInterval(() => this.#tick(), 500);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearInterval(this.#timer);
    this.#socket?.destroy();
    await this.#cancelAll();
  }

  #send(msg: WorkerMessage): void {
    // A snapshot or an error that cannot go out is said in the log: a zombie's late attempt
    // (resumed after the coordinator dropped its connection) is evidence (zombies.json).
    if (!send(this.#socket, msg)) {
      if (msg.type === 'snapshot' || msg.type === 'error') this.#log(`clink worker ${this.id}: not sent, no connection to the coordinator: ${describeMessage(msg)}`);
      return;
    }
    // Sent after a silence past the fencing timeout (this process was stopped, or cut off):
    // the connection may be one the coordinator has already dropped. Said, as the attempt.
    const silent = Math.round(monotonicMs() - this.#lastHeard);
    if (msg.type === 'snapshot' && silent > (this.cfg.fencingTimeoutMs ?? 4000)) this.#log(`clink worker ${this.id}: late snapshot, nothing heard from the coordinator for ${silent} ms: ${describeMessage(msg)}`);
  }

  #connect(): void {
    if (this.#stopped) return;
    const sock = net.connect({ host: this.cfg.coordinator.address, port: this.cfg.coordinator.port });
    sock.setNoDelay(true);
    sock.setKeepAlive(true, 1000);
    this.#socket = sock;
    // A partitioned coordinator drops the SYN: give up on this attempt and try again.
    const connectTimer = setTimeout(() => sock.destroy(), 3000);
    sock.on('connect', () => {
      clearTimeout(connectTimer);
      this.#connectAttempts = 0;
      this.#lastHeard = monotonicMs();
      this.#log(`clink worker ${this.id}: connected to coordinator`);
      send(sock, { type: 'hello', workerId: this.id, pid: process.pid, epoch: this.#epoch });
    });
    readLines(sock, (m) => {
      if (this.#socket !== sock) return;
      this.#lastHeard = monotonicMs();
      this.#onMessage(m as CoordinatorMessage);
    });
    sock.on('error', () => undefined);
    sock.on('close', () => {
      clearTimeout(connectTimer);
      if (this.#socket !== sock) return;
      this.#socket = null;
      if (this.#stopped) return;
      this.#connectAttempts++;
      if (this.#connectAttempts === 1 || this.#connectAttempts % 20 === 0) this.#log(`clink worker ${this.id}: coordinator connection closed; reconnecting (attempt ${this.#connectAttempts})`);
      setTimeout(() => this.#connect(), 500);
    });
  }

  #tick(): void {
    const fencing = this.cfg.fencingTimeoutMs ?? 4000;
    const now = monotonicMs();
    const stalledMs = now - this.#lastTick;
    this.#lastTick = now;
    // Seam: the worker's own stall, its timers late by more than the fencing timeout (correct:
    // nothing; the silence is judged below like any other).
    if (stalledMs > fencing) this.#seams.onStall?.(this.#seamContext(now), stalledMs);
    if (this.#socket && !this.#socket.connecting) this.#send({ type: 'heartbeat', workerId: this.id, epoch: this.#epoch });
    if (now - this.#lastHeard <= fencing || this.#fenced) return;
    // Decide after the poll phase: if this process itself stalled, socket data that is
    // already waiting is read first and is not mistaken for silence.
    setImmediate(() => this.#maybeFence(fencing));
  }

  #maybeFence(fencing: number): void {
    const silent = Math.round(monotonicMs() - this.#lastHeard);
    if (silent > fencing && !this.#fenced) {
      this.#fenced = true;
      // Seam: fencing itself (correct: stop every task of the epoch).
      if (this.#seams.fence) {
        this.#seams.fence(this.#seamContext(monotonicMs()), silent);
      } else {
        this.#log(`clink worker ${this.id}: no word from the coordinator for ${silent} ms: fencing (stopping ${this.#tasks.size} tasks of epoch ${this.#epoch})`);
        void this.#cancelAll();
      }
      // A silent connection may be a dead one (a partition): drop it and reconnect.
      if (this.#socket && !this.#socket.connecting) this.#socket.destroy();
    }
  }

  async #cancelAll(): Promise<void> {
    const tasks = [...this.#tasks.values()];
    this.#tasks.clear();
    await Promise.allSettled(tasks.map((t) => t.cancel()));
  }

  #onMessage(msg: CoordinatorMessage): void {
    switch (msg.type) {
      case 'ping':
        if (this.#fenced && msg.epoch === this.#epoch && !this.#seams.fence) {
          // Heard again within the same epoch, but our tasks are gone: tell the coordinator.
          // (A seam that replaced fencing stopped none.)
          this.#send({ type: 'error', epoch: this.#epoch, message: 'fenced: tasks stopped' });
        }
        this.#fenced = false;
        return;
      case 'deploy': {
        this.#fenced = false;
        if (msg.epoch < this.#epoch) return;
        this.#epoch = msg.epoch;
        const old = [...this.#tasks.values()];
        this.#tasks.clear();
        for (const t of old) void t.cancel();
        const oldEpochs = [...new Set(old.map((t) => t.epoch))].sort((a, b) => a - b);
        this.#log(`clink worker ${this.id}: epoch ${msg.epoch}: deploy subtasks [${msg.tasks.map((t) => t.subtask).join(',')}] (cancelled ${old.length}${oldEpochs.length ? ` of epoch ${oldEpochs.join(', ')}` : ''})`);
        for (const spec of msg.tasks) {
          const t = new Subtask({
            epoch: msg.epoch,
            spec,
            sinkFactory: this.#sinkFactory,
            makeSinkContext: (s) => this.#sinkContext(s),
            kafka: { bootstrap: this.cfg.kafka.bootstrap, topic: this.cfg.topic },
            mutant: this.cfg.mutant,
            checkpointIntervalMs: this.cfg.checkpointIntervalMs,
            send: (m) => {
              if (!t.cancelled && this.#tasks.get(spec.subtask) === t) this.#send(m);
              else if (m.type === 'snapshot') this.#log(`clink worker ${this.id}: dropped, its subtask was cancelled (the worker is at epoch ${this.#epoch}): ${describeMessage(m)}`);
            },
            log: this.#log,
          });
          this.#tasks.set(spec.subtask, t);
          t.start();
        }
        return;
      }
      case 'barrier':
        if (msg.epoch !== this.#epoch) return;
        for (const t of this.#tasks.values()) t.barrier(msg.checkpointId);
        return;
      case 'complete':
        if (msg.epoch !== this.#epoch) {
          this.#log(`clink worker ${this.id}: ignoring complete(${msg.checkpointId}) of epoch ${msg.epoch} (current ${this.#epoch})`);
          return;
        }
        for (const [s, handles] of Object.entries(msg.handles)) this.#tasks.get(Number(s))?.complete(msg.checkpointId, handles);
        return;
      case 'cancel':
        if (msg.epoch >= this.#epoch) void this.#cancelAll();
        return;
    }
  }

  /** What a seam may use of this worker; keepLease() takes the coordinator as heard at `now`. */
  #seamContext(now: number): WorkerSeamContext {
    return {
      workerId: this.id,
      log: this.#log,
      tasks: [...this.#tasks.values()],
      keepLease: () => {
        this.#lastHeard = now;
      },
    };
  }

  #sinkContext(subtask: number): SinkContext {
    return {
      subtask,
      bucket: this.cfg.bucket,
      prefix: this.cfg.prefix,
      checkpointIntervalMs: this.cfg.checkpointIntervalMs,
      mutant: this.cfg.mutant,
      s3: { endpoint: this.cfg.s3.endpoint, region: this.cfg.s3.region, ...this.#s3 },
      journalPath: path.join(this.cfg.clinkDir, 'journal.jsonl'),
      log: (line) => this.#log(line),
      faultPoint: (point, info) => this.faults.reachAsync(point, info),
    };
  }
}
