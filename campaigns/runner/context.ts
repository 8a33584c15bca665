/**
 * What a campaign's phases share (campaigns/runner/phases.ts): the run's fixed inputs, its
 * RunStore, the abort signal, the engine's health polled in the background, the phase marks,
 * and the outcome the verdict is decided from. The runner (run.ts) builds one and walks the
 * phases over it; a phase reads and fills `out`, and checks `throwIfAborted()` at its edges.
 */
import type { ChaosController } from '../../chaos/controller.ts';
import type { FaultContext } from '../../chaos/fault.ts';
import type { Engine, EngineHealth } from '../../engine/engine.ts';
import { QualError } from '../../lib/errors.ts';
import { RUN_PHASES, zeroCounters, type ChaosRecord, type Counters, type GateResult, type PlannedFault, type Recount, type RunPhase, type SoakEarlyEnd } from '../../lib/evidence.ts';
import type { RunStore } from '../../lib/run-store.ts';
import type { InputAuditor } from '../../oracle/input-audit.ts';
import type { IncrementalJudge } from '../../oracle/judge.ts';
import type { EventProducer } from '../../oracle/producer.ts';
import type { Sampler } from '../../oracle/sampler.ts';
import type { RigState } from '../../rig/types.ts';
import type { OverriddenCampaign } from '../overrides.ts';
import { progressTiming, type Progress } from './progress.ts';
import type { ResourceSampler } from './resources.ts';

/** How often the run polls the engine's health (ms): the soak's recovery times are measured on it. */
export const HEALTH_POLL_MS = 2000;
/** How often the gate polls it (ms): its conditions are seen within half a second of happening, not two. */
export const GATE_HEALTH_POLL_MS = 500;

/** What the phases find out; the verdict is decided from it. */
export interface RunOutcome {
  gate: GateResult | null;
  drainConverged: boolean;
  /** Why the drain ended before its deadline, unconverged, when it did (campaigns/runner/drain-stall.ts). */
  drainStalled?: string;
  /** When a mutant's soak ended before its planned length, when and why (campaigns/runner/soak-caught.ts); on the soak's end mark too. */
  soakEndedEarly?: SoakEarlyEnd;
  settleWarning?: string;
  recount: Recount | null;
  recountError?: string;
  pendingUploads: number;
  oracleCounters: Counters;
  /** The oracle's sample that could not complete, when one could not. */
  stuck?: string;
  /** The error that ended the run early, if one did. */
  fatal?: unknown;
  soakStartMs?: number;
}

/** The run's fixed inputs, known before the first phase. */
export interface RunInputs {
  runId: string;
  campaign: OverriddenCampaign;
  engine: Engine;
  mutant: string;
  plan: PlannedFault[];
  rig: RigState;
  credentials: FaultContext['credentials'];
  remote: FaultContext['remote'];
  topic: string;
  prefix: string;
  startedAt: string;
  revision: { revision: string; dirty: boolean };
  store: RunStore;
  progress: Progress;
  log: (line: string) => void;
}

export class RunContext {
  readonly abort = new AbortController();
  abortReason: string | undefined;
  readonly chaos: ChaosRecord[] = [];
  readonly controller: ChaosController;
  readonly planIds: Set<string>;
  readonly out: RunOutcome = { gate: null, drainConverged: false, recount: null, pendingUploads: 0, oracleCounters: zeroCounters() };
  producer?: EventProducer;
  /** Tails the input topic from the producer's start; finished by the recount phase. */
  inputAuditor?: InputAuditor;
  sampler?: Sampler;
  judge?: IncrementalJudge;
  resources?: ResourceSampler;
  health?: EngineHealth;
  phase = 'deploy';
  phaseStartMs = Date.now();
  readonly #seenCheckpoints = new Set<number>();
  #healthTimer: NodeJS.Timeout | undefined;
  #polling = false;
  /** How often the engine's health is polled now (ms); undefined while it is not. */
  healthPollMs: number | undefined;
  readonly #detach: (() => void)[] = [];

  readonly run: RunInputs;

  constructor(run: RunInputs, makeController: (ctx: RunContext) => ChaosController, signal?: AbortSignal) {
    this.run = run;
    this.planIds = new Set(run.plan.map((f) => f.id));
    this.controller = makeController(this);
    // Abort: a signal from outside, SIGINT, SIGTERM or SIGHUP (the operator's SSH session dropped).
    for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
      const on = () => {
        if (this.abort.signal.aborted) return;
        this.abortReason = sig;
        run.log(`${sig}: aborting — healing every active fault, collecting logs`);
        this.abort.abort();
      };
      process.on(sig, on);
      this.#detach.push(() => process.off(sig, on));
    }
    signal?.addEventListener(
      'abort',
      () => {
        this.abortReason ??= String(signal.reason ?? 'aborted');
        this.abort.abort();
      },
      { once: true },
    );
  }

  get signal(): AbortSignal {
    return this.abort.signal;
  }

  get aborted(): boolean {
    return this.abort.signal.aborted;
  }

  /** Ends the phase in progress with ABORTED when the run was aborted. */
  throwIfAborted(): void {
    if (this.aborted) throw new QualError('ABORTED', this.abortReason ?? 'aborted');
  }

  /** Aborts the run for an error (the wrap-up still heals and collects). */
  failWith(err: unknown): void {
    this.out.fatal = err;
    if (!this.aborted) {
      this.abortReason = `error: ${(err as Error).message}`;
      this.abort.abort();
    }
    this.run.log(`run interrupted: ${(err as Error).message}`);
  }

  /** A fault's move, into chaos.jsonl and the log. */
  record(r: Omit<ChaosRecord, 't'> & { t?: string }): void {
    const full = { t: r.t ?? new Date().toISOString(), ...r } as ChaosRecord;
    this.chaos.push(full);
    this.run.store.append('chaos', full);
    if (full.phase !== 'planned') {
      this.run.log(
        `fault ${full.faultId} ${full.kind}${full.point ? ` ${full.point}` : ''}${full.target ? ` ${full.target}` : ''}: ${full.phase}${full.recoveryS !== undefined ? ` (recovery ${full.recoveryS} s)` : ''}${full.detail ? ` — ${full.detail}` : ''}`,
      );
    }
  }

  /** Phase marks (phases.jsonl): the end of the phase left (the soak's with out.soakEndedEarly, if set) and the start of the one entered. */
  enterPhase(name: string, at = Date.now()): void {
    const t = new Date(at).toISOString();
    const marked = RUN_PHASES as readonly string[];
    // The soak's end mark says when a mutant's soak ended early, and why.
    const early = this.phase === 'soak' && this.out.soakEndedEarly ? { endedEarly: this.out.soakEndedEarly } : {};
    if (marked.includes(this.phase)) this.run.store.append('phases', { t, phase: this.phase as RunPhase, edge: 'end', ...early });
    if (marked.includes(name)) this.run.store.append('phases', { t, phase: name as RunPhase, edge: 'start' });
    this.phase = name;
    this.phaseStartMs = at;
  }

  /** One health poll: new completed checkpoints into checkpoints.jsonl (with the harness time that saw them), and the progress line. */
  async pollHealth(): Promise<void> {
    const { engine, store, campaign, plan, progress } = this.run;
    try {
      this.health = await engine.health();
      // seenAt: when the harness saw the checkpoint, on its own clock (the engine's `at` is
      // its coordinator's clock, which a clock-step fault moves).
      const seenAt = new Date().toISOString();
      for (const c of this.health.checkpoints ?? []) {
        if (this.#seenCheckpoints.has(c.id)) continue;
        this.#seenCheckpoints.add(c.id);
        store.append('checkpoints', { ...c, seenAt });
      }
    } catch {
      /* the coordinator may be down on purpose */
    }
    const s = this.sampler?.last;
    const soakFaults = (phase: string) => this.chaos.filter((r) => r.phase === phase && this.planIds.has(r.faultId)).length;
    progress.update({
      phase: this.phase,
      produced: this.producer?.total ?? 0,
      committed: s?.events ?? 0,
      checkpoints: this.health?.completedCheckpoints ?? 0,
      // The soak's faults (the gate's fault g001 is not part of the plan).
      landed: soakFaults('landed'),
      healed: soakFaults('healed'),
      healFailed: new Set(this.chaos.filter((r) => r.phase === 'heal-failed').map((r) => r.faultId)).size,
      faultsPlanned: plan.length,
      counters: s?.counters ?? zeroCounters(),
      timing: progressTiming(campaign, plan, this.phaseStartMs, this.out.soakStartMs),
    });
  }

  /** Polls the engine's health every `everyMs` from now on (a poll already running is replaced). */
  startHealthPolling(everyMs = HEALTH_POLL_MS): void {
    this.stopHealthPolling();
    // A tick while the last poll is still out is skipped: at 500 ms a slow SSH answer would otherwise pile polls up.
    this.#healthTimer = setInterval(() => {
      if (this.#polling) return;
      this.#polling = true;
      void this.pollHealth().finally(() => (this.#polling = false));
    }, everyMs);
    this.healthPollMs = everyMs;
  }

  /**
   * Polls every `everyMs` from now on if the health poll is running, and polls once now; does
   * nothing when it is not (stopped, or never started). The gate polls faster than the rest of
   * the run (GATE_HEALTH_POLL_MS), then goes back to HEALTH_POLL_MS.
   */
  async pollHealthEvery(everyMs: number): Promise<void> {
    if (!this.#healthTimer || this.healthPollMs === everyMs) return;
    this.startHealthPolling(everyMs);
    await this.pollHealth();
  }

  stopHealthPolling(): void {
    if (this.#healthTimer) clearInterval(this.#healthTimer);
    this.#healthTimer = undefined;
    this.healthPollMs = undefined;
  }

  /** Detaches the signal handlers (the run is over). */
  close(): void {
    this.stopHealthPolling();
    for (const d of this.#detach.splice(0)) d();
  }
}
