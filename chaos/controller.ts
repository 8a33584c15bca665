/**
 * The chaos controller: walks the seeded plan, lands each fault through its package,
 * holds it, heals it, and measures recovery (time from the fault's own heal to the next
 * completed checkpoint). Every phase goes to chaos.jsonl as it happens:
 *   planned → landed (evidence) | not-landed → healed (evidence) | heal-failed → recovered (recoveryS) | not-recovered
 * and, once per composition episode, after its steps' records:
 *   composition-recovered (recoveryS: from the composition's last heal) | composition-not-recovered
 * A heal that throws is recorded as heal-failed (never healed); the verdict is then at most UNKNOWN.
 * A fault that did not land is never counted as survived.
 *
 * Faults run in episodes: a lone fault, or all the faults of one composition (which
 * overlap on purpose: the store goes down, then a worker is killed). Episodes run one
 * after another, each starting at its planned time or when the previous one has
 * recovered, whichever is later. Within a composition each step's recovery is waited for
 * from its own heal (a step healed early may recover while a later one is still active);
 * a step whose own wait runs out before the composition's last heal recovers, if at all,
 * with the composition's checkpoint, still timed from its own heal. The composition's own
 * recovery, from its last heal, is recorded apart.
 *
 * The walk can be stopped early, cleanly (`stopWalk`, a mutant's soak that has already caught
 * it: campaigns/runner/soak-caught.ts): the episodes under way and those planned up to the
 * cutoff run to their end, and every later fault is recorded not-landed (evidence notStarted).
 *
 * Every landed fault is registered for healing the moment it lands; `healActive()` heals
 * whatever is still active (on abort, or after an error).
 *
 * A fault that lands held through the recount (LandedFault.holdThroughRecount: a committed
 * object rotten on the store's disk) is not healed at the end of its hold: it is set apart,
 * its recovery is timed from its landing (the engine runs on with it in force), and
 * `healActive({ keepHeld: true })` (the drain's) leaves it in force, so that the recount's
 * first pass reads the bucket with it. `healHeld()` heals it after that pass, before the
 * recount that decides the verdict (campaigns/runner/held-recount.ts); its healed record
 * says so (afterHeldRecount). Any other healActive() (an abort) heals it with the rest.
 */
import { poll } from '../lib/retry.ts';
import { sleep } from '../lib/sleep.ts';
import type { ChaosRecord, PlannedFault } from '../lib/evidence.ts';
import { FaultNotLanded, type FaultContext, type FaultPackage, type LandedFault } from './fault.ts';
import { packageFor } from './kinds.ts';
import { armDeadMan, DEAD_MAN_MARGIN_S, disarmDeadMan } from '../rig/dead-man.ts';

/**
 * How far before now an engine's checkpoint stamp may lie and still be believed (ms). A
 * checkpoint is reported within seconds of completing (Flink's REST statistics lag by up to a
 * few); a stamp further back, or ahead of now, comes from a stepped clock.
 */
export const PLAUSIBLE_STAMP_MS = 30_000;

export interface ControllerOptions {
  plan: PlannedFault[];
  ctx: FaultContext;
  record(rec: Omit<ChaosRecord, 't'> & { t?: string }): void;
  recoveryDeadlineS: number;
  /** Aborts the walk; active faults are healed by the caller through healActive(). */
  signal: AbortSignal;
  /** The fault packages by kind (chaos/kinds.ts unless a test supplies its own). */
  packageFor?: (kind: PlannedFault['kind']) => FaultPackage;
  /** Called with (done, total) as episodes finish. */
  progress?(done: number, total: number): void;
}

export interface FaultOutcome {
  fault: PlannedFault;
  landed: boolean;
  healed: boolean;
  recovered: boolean;
  recoveryS?: number;
  reason?: string;
  /** Not started: the walk was stopped before its episode (stopWalk). */
  notStarted?: boolean;
}


export function episodesOf(plan: PlannedFault[]): PlannedFault[][] {
  const byStart = [...plan].sort((a, b) => a.atS - b.atS);
  const episodes: PlannedFault[][] = [];
  const comp = new Map<string, PlannedFault[]>();
  for (const f of byStart) {
    if (f.composition) {
      let ep = comp.get(f.composition);
      if (!ep) {
        ep = [];
        comp.set(f.composition, ep);
        episodes.push(ep);
      }
      ep.push(f);
    } else episodes.push([f]);
  }
  return episodes;
}

export class ChaosController {
  readonly outcomes: FaultOutcome[] = [];
  private readonly active = new Map<string, { fault: PlannedFault; landed: LandedFault }>();
  /** Landed faults held through the recount's first pass (LandedFault.holdThroughRecount), in landing order. */
  private readonly held = new Map<string, { fault: PlannedFault; landed: LandedFault }>();
  private readonly opts: ControllerOptions;
  /** Set by stopWalk: episodes planned after cutoffS (seconds into the soak) are not started. */
  private stopAt: { cutoffS: number; reason: string } | undefined;
  /** Wakes the walk's wait for its next episode when stopWalk is called. */
  private readonly wake = new AbortController();

  constructor(opts: ControllerOptions) {
    this.opts = opts;
  }

  /**
   * Runs the whole plan from soakStart (ms epoch). Resolves when every episode is done, the
   * walk was aborted, or (after stopWalk) the next episode is planned after its cutoff.
   */
  async run(soakStart: number): Promise<FaultOutcome[]> {
    const { plan, signal } = this.opts;
    for (const f of plan) this.rec(f, 'planned', { detail: `at +${f.atS}s` });
    const episodes = episodesOf(plan);
    let done = 0;
    for (const [i, ep] of episodes.entries()) {
      if (signal.aborted) break;
      const start = soakStart + ep[0]!.atS * 1000;
      // Waits for the episode's time; a stopWalk() wakes it to see whether it is still to run.
      while (!signal.aborted && !this.stoppedBefore(ep) && Date.now() < start) await sleep(start - Date.now(), AbortSignal.any([signal, this.wake.signal]));
      if (signal.aborted) break;
      if (this.stoppedBefore(ep)) {
        for (const f of episodes.slice(i).flat()) this.notStarted(f, this.stopAt!.reason);
        break;
      }
      await this.runEpisode(ep);
      this.opts.progress?.(++done, episodes.length);
    }
    return this.outcomes;
  }

  /**
   * Ends the walk early, cleanly (campaigns/runner/soak-caught.ts: a mutant already caught):
   * the episode in flight, and every episode planned at or before `cutoffS` (seconds into the
   * soak), run to their end as usual (landed, held, healed, recovery measured); no later
   * episode is started, and each of its faults is recorded not-landed with `reason` (evidence
   * notStarted), never counted as survived. Nothing is aborted: run() resolves once the
   * episodes it still runs are over.
   */
  stopWalk(cutoffS: number, reason: string): void {
    if (this.stopAt) return;
    this.stopAt = { cutoffS, reason };
    this.wake.abort();
  }

  /** The ids of the plan's faults that stopWalk left not started. */
  get notStartedIds(): string[] {
    return this.outcomes.filter((o) => o.notStarted).map((o) => o.fault.id);
  }

  private stoppedBefore(ep: PlannedFault[]): boolean {
    return this.stopAt !== undefined && ep[0]!.atS > this.stopAt.cutoffS;
  }

  private notStarted(f: PlannedFault, reason: string): void {
    this.rec(f, 'not-landed', { detail: reason, evidence: { notStarted: true } });
    this.outcomes.push({ fault: f, landed: false, healed: false, recovered: false, reason, notStarted: true });
  }

  /** Lands one lone fault now (the gate's fault), with the same records and recovery measure. */
  async runOne(fault: PlannedFault): Promise<FaultOutcome> {
    this.rec(fault, 'planned', { detail: 'gate fault' });
    await this.runEpisode([fault]);
    return this.outcomes[this.outcomes.length - 1]!;
  }

  /**
   * Heals every fault still active, and those held through the recount unless `keepHeld`
   * (the drain keeps them for the recount's first pass). Safe to call at any time, more than once.
   */
  async healActive(opts: { keepHeld?: boolean } = {}): Promise<void> {
    for (const [id, a] of [...this.active, ...(opts.keepHeld ? [] : [...this.held])]) {
      try {
        await this.disarmDeadMan(a.fault, a.landed);
        const ev = await a.landed.heal();
        this.rec(a.fault, 'healed', { evidence: { ...ev, onAbort: true } });
      } catch (err) {
        this.rec(a.fault, 'heal-failed', { detail: `heal failed: ${(err as Error).message}`, evidence: { onAbort: true } });
      }
      this.active.delete(id);
      this.held.delete(id);
    }
  }

  /** The faults held through the recount's first pass and not healed yet, in landing order. */
  get heldFaults(): PlannedFault[] {
    return [...this.held.values()].map((h) => h.fault);
  }

  /**
   * Heals the faults held through the recount (after its first pass has read the bucket with
   * them in force): each healed record says afterHeldRecount; a heal that throws is heal-failed.
   */
  async healHeld(): Promise<void> {
    for (const [id, h] of [...this.held]) {
      try {
        const ev = await h.landed.heal();
        this.rec(h.fault, 'healed', { evidence: { ...ev, afterHeldRecount: true } });
      } catch (err) {
        this.rec(h.fault, 'heal-failed', { detail: `heal failed: ${(err as Error).message}`, evidence: { afterHeldRecount: true } });
      }
      this.held.delete(id);
    }
  }

  /**
   * Sets the fault's dead-man timer on its host (rig/dead-man.ts): its undo runs there by
   * itself after the planned duration plus DEAD_MAN_MARGIN_S unless the heal stops it first.
   * A timer that cannot be set is said in the run's log and in the landing evidence; the
   * fault still runs (the controller's own heal and the preflight's remain).
   */
  private async armDeadMan(f: PlannedFault, landed: LandedFault): Promise<Record<string, unknown> | null> {
    if (!landed.deadMan) return null;
    const afterS = (f.durationS ?? 0) + DEAD_MAN_MARGIN_S;
    try {
      return await armDeadMan(this.opts.ctx.remote(landed.deadMan.host), f.id, afterS, landed.deadMan);
    } catch (err) {
      this.opts.ctx.log(`fault ${f.id}: could not set its dead-man timer on ${landed.deadMan.host}: ${(err as Error).message}`);
      return { host: landed.deadMan.host, armed: false, error: (err as Error).message };
    }
  }

  private async disarmDeadMan(f: PlannedFault, landed: LandedFault): Promise<void> {
    if (!landed.deadMan) return;
    await disarmDeadMan(this.opts.ctx.remote(landed.deadMan.host), f.id).catch((err) => this.opts.ctx.log(`fault ${f.id}: could not stop its dead-man timer: ${(err as Error).message}`));
  }

  private rec(f: PlannedFault, phase: ChaosRecord['phase'], extra: Partial<ChaosRecord> = {}) {
    this.opts.record({
      faultId: f.id,
      kind: f.kind,
      phase,
      ...(f.target ? { target: f.target } : {}),
      ...(f.point ? { point: f.point } : {}),
      ...(f.composition ? { composition: f.composition } : {}),
      ...extra,
    });
  }

  private async runEpisode(ep: PlannedFault[]): Promise<void> {
    const { ctx, signal } = this.opts;
    const t0 = Date.now();
    const base = ep[0]!.atS;
    // A composition's steps land in order: a step waits for its offset and for every
    // earlier step to have landed (or failed), so "the store goes down, then a worker is
    // killed" holds even when showing the store down takes longer than the offset. A step
    // that needs the later ones to land at all (a recovery-only protocol point) lets them
    // go early through hooks.ready().
    const settled: Promise<void>[] = [];
    type StepResult = FaultOutcome & { healedAt?: number; checkpointAt?: number | null; landedFault?: LandedFault; held?: boolean };
    const results = await Promise.all(
      ep.map(async (f, i): Promise<StepResult> => {
        let markSettled!: () => void;
        settled[i] = new Promise<void>((r) => (markSettled = r));
        const earlier = settled.slice(0, i);
        await sleep((f.atS - base) * 1000 - (Date.now() - t0), signal);
        await Promise.all(earlier);
        if (signal.aborted) {
          markSettled();
          return { fault: f, landed: false, healed: false, recovered: false, reason: 'aborted before landing' };
        }
        let landed: LandedFault;
        try {
          landed = await (this.opts.packageFor ?? packageFor)(f.kind).inject(f, ctx, { ready: markSettled });
        } catch (err) {
          markSettled();
          const ev = err instanceof FaultNotLanded ? err.evidence : {};
          this.rec(f, 'not-landed', { evidence: ev, detail: (err as Error).message });
          ctx.log(`fault ${f.id} ${f.kind} did not land: ${(err as Error).message}`);
          return { fault: f, landed: false, healed: false, recovered: false, reason: (err as Error).message };
        }
        this.active.set(f.id, { fault: f, landed });
        const deadMan = await this.armDeadMan(f, landed);
        this.rec(f, 'landed', { evidence: deadMan ? { ...landed.evidence, deadMan } : landed.evidence });
        markSettled();
        if (landed.holdThroughRecount && !landed.deadMan) {
          // Held through the recount's first pass: set apart, never healed here; the engine
          // runs on with it in force, so its recovery is timed from its landing.
          const landedAt = Date.now();
          this.active.delete(f.id);
          this.held.set(f.id, { fault: f, landed });
          const checkpointAt = signal.aborted ? null : await this.nextCheckpointAfter(landedAt);
          return { fault: f, landed: true, healed: false, recovered: false, healedAt: landedAt, checkpointAt, landedFault: landed, held: true };
        }
        await sleep((f.durationS ?? 0) * 1000, signal);
        if (signal.aborted) return { fault: f, landed: true, healed: false, recovered: false, reason: 'aborted while active' };
        let healedAt: number;
        try {
          await this.disarmDeadMan(f, landed);
          const ev = await landed.heal();
          healedAt = Date.now();
          this.active.delete(f.id);
          this.rec(f, 'healed', { evidence: ev });
        } catch (err) {
          this.rec(f, 'heal-failed', { detail: `heal failed: ${(err as Error).message}` });
          return { fault: f, landed: true, healed: false, recovered: false, reason: `heal failed: ${(err as Error).message}` };
        }
        // Recovery from this fault's own heal: waiting starts now, so a checkpoint that
        // completes while a later step of the composition is still active counts for it.
        const checkpointAt = signal.aborted ? null : await this.nextCheckpointAfter(healedAt);
        return { fault: f, landed: true, healed: true, recovered: false, healedAt, checkpointAt, landedFault: landed };
      }),
    );
    // The composition's own recovery: the first completed checkpoint after its last heal,
    // which is the last-healed step's own recovery (the same wait from the same instant).
    const healedSteps = results.filter((r) => r.healedAt !== undefined);
    const lastHealed = healedSteps.reduce<StepResult | undefined>((a, r) => (!a || r.healedAt! >= a.healedAt! ? r : a), undefined);
    const compositionAt = lastHealed?.checkpointAt ?? null;
    for (const r of results) {
      const { healedAt: h, checkpointAt: own, landedFault, held, ...outcome } = r;
      if (outcome.landed && (outcome.healed || held) && !signal.aborted) {
        // A step whose own wait ran out while a later step still held the engine down
        // recovers with the composition: timed from its own heal all the same.
        const checkpointAt = own ?? (compositionAt !== null && compositionAt > h! ? compositionAt : null);
        if (checkpointAt !== null) {
          const problem = landedFault?.verifyRecovery ? await landedFault.verifyRecovery() : null;
          const recoveryS = Math.round((checkpointAt - h!) / 100) / 10;
          if (problem) {
            this.rec(r.fault, 'not-recovered', { detail: problem, recoveryS });
            outcome.reason = problem;
          } else {
            this.rec(r.fault, 'recovered', {
              recoveryS,
              evidence: { checkpointAt: new Date(checkpointAt).toISOString(), ...(own === null ? { withComposition: true } : {}), ...(held ? { heldThroughRecount: true, from: 'landing' } : {}) },
            });
            outcome.recovered = true;
            outcome.recoveryS = recoveryS;
          }
        } else {
          this.rec(r.fault, 'not-recovered', { detail: `no completed checkpoint within ${this.opts.recoveryDeadlineS} s of the ${held ? 'landing (held through the recount)' : 'heal'}` });
          outcome.reason = 'no recovery within the deadline';
        }
      }
      this.outcomes.push(outcome);
    }
    const composition = ep[0]!.composition;
    if (composition && lastHealed && !signal.aborted) this.recordCompositionRecovery(composition, ep, lastHealed, compositionAt);
  }

  /**
   * One record per composition episode: its own recovery, from its last heal to the first
   * completed checkpoint after it. It carries the last-healed step's id and kind (the heal it
   * is timed from), so every reader that follows a fault by its id and phase reads past it.
   */
  private recordCompositionRecovery(composition: string, ep: PlannedFault[], last: { fault: PlannedFault; healedAt?: number }, checkpointAt: number | null): void {
    const evidence = { steps: ep.map((f) => f.id), lastHealAt: new Date(last.healedAt!).toISOString() };
    if (checkpointAt !== null) {
      const recoveryS = Math.round((checkpointAt - last.healedAt!) / 100) / 10;
      this.rec(last.fault, 'composition-recovered', { composition, recoveryS, evidence: { ...evidence, checkpointAt: new Date(checkpointAt).toISOString() }, detail: `the first completed checkpoint after the composition's last heal (${last.fault.id})` });
    } else {
      this.rec(last.fault, 'composition-not-recovered', { composition, evidence, detail: `no completed checkpoint within ${this.opts.recoveryDeadlineS} s of the composition's last heal (${last.fault.id})` });
    }
  }

  /**
   * When the first checkpoint after `t` (the heal) completed, or null when none completed
   * within the deadline. The engine stamps its checkpoints with its own wall clock, which a
   * clock-step fault may have moved either way: a stamp is taken only when it lies between
   * the heal and now (1 s of slack between hosts). Otherwise a checkpoint counts when its id
   * is above the last one seen at the first poll, and its time is when it was seen (within a
   * poll interval).
   *
   * A checkpoint whose stamp is plausible (within PLAUSIBLE_STAMP_MS of now) and before the
   * heal never counts, even when the engine reports it only after the heal.
   *
   * An episode may end long after its last heal (a recovery-only point waits out the
   * deadline before it is called not landed), so the engine is always asked at least once,
   * and its list of recent checkpoints gives the first one after the heal, not the latest.
   */
  private async nextCheckpointAfter(t: number): Promise<number | null> {
    const deadline = t + this.opts.recoveryDeadlineS * 1000;
    let baseline: number | null | undefined;
    const seen = await poll(
      async () => {
        const h = await this.opts.ctx.engine.health();
        const now = Date.now();
        const latest = Math.min(now + 1000, deadline);
        const first = (h.checkpoints ?? []).map((c) => Date.parse(c.at)).find((at) => at > t && at <= latest);
        if (first !== undefined) return first;
        const at = h.lastCompletedAt ? Date.parse(h.lastCompletedAt) : Number.NaN;
        if (at > t && at <= latest) return at;
        if (now > deadline) return null;
        const id = h.lastCompletedCheckpointId ?? null;
        if (baseline === undefined) baseline = id;
        else if (id !== null && (baseline === null || id > baseline)) {
          // A new id counts by itself only when its stamp cannot be trusted (a stepped clock
          // puts it far from now). A plausible stamp from before the heal is a checkpoint the
          // engine reported late (Flink's REST statistics lag by seconds): not a recovery.
          const stamp = h.checkpoints?.find((c) => c.id === id)?.at ?? h.lastCompletedAt;
          const st = stamp ? Date.parse(stamp) : Number.NaN;
          if (st <= t && st >= now - PLAUSIBLE_STAMP_MS) baseline = id;
          else return now;
        }
        return null;
      },
      // A probe that throws is a coordinator restarting: keep polling.
      // Past the deadline already: one probe, which reads the recent checkpoints' stamps.
      Date.now() >= deadline
        ? { until: Date.now() + 5000, probes: 1, intervalMs: 0, signal: this.opts.signal, ignoreErrors: true }
        : { until: deadline, intervalMs: 500, signal: this.opts.signal, ignoreErrors: true },
    );
    return seen ?? null;
  }
}
