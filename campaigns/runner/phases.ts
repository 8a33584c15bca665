/**
 * A campaign's phases, in order, over one RunContext (campaigns/runner/context.ts):
 *
 *   deploy    the input topic, the engine, the generator, the oracle, the resource sampler
 *   gate      the pipeline shown working, one fault landed and recovered (no soak without it)
 *   soak      the planned faults at their times, for the soak's length (a mutant's ends early
 *             once the oracle has caught it and no fault is in flight: soak-caught.ts)
 *   drain     the input stopped, every fault healed (but those held through the recount), wait
 *             until everything produced is committed (or, on a run the oracle has already shown
 *             wrong, until nothing has moved over several checkpoints: drain-stall.ts)
 *   settle    idle checkpoints with no input left, the engine stopped, the bucket's last sample
 *   wrap-up   always, even after an abort: heal, collect logs, count pending uploads, stop
 *   recount   the input audit finished (it has tailed the topic since deploy, so only the
 *             input's last records are left), then a separate process re-reads the settled bucket;
 *             with faults held through the recount (a committed object rotten on the store's
 *             disk), a held pass first (recount-held.json), then their heal (held-recount.ts)
 *   verdict   decided from the evidence, written with the report
 *
 * `RUN_PHASE_STEPS` lists the in-run phases the runner walks (deploy → settle); each throws to
 * end the run early and leaves its findings in `ctx.out`.
 *
 * Checkpoints asked for now. The gate, the drain and the settle wait on the engine's next
 * checkpoint; rather than wait for the periodic one (up to an interval away), they ask the
 * engine for one now (Engine.triggerCheckpoint, through CheckpointAsker): the gate while it
 * waits for the job's first completed checkpoint and, once its fault is healed, for "a
 * completed checkpoint after it"; the drain once the input has stopped and every fault is
 * healed and disarmed, and again every 2 s while it has not converged; the settle before each
 * of its idle checkpoints. This weakens nothing: a requested checkpoint is an ordinary one (the
 * same barrier, snapshot and durable completion record, counted in health() like any other),
 * and every condition is still checked as before, on checkpoints that really completed (the
 * same counts, ids and deadlines; the settle's second checkpoint still has its barrier after
 * the first completed, so after the drain converged). The engine drops a request while the
 * job is not running or a checkpoint is pending, so the phases ask again while they wait. A
 * request that fails is logged and the phase waits for the periodic checkpoint as before. The
 * soak never asks: its recovery times are measured against the periodic cadence (the gate's
 * last request has been made when the gate ends; Clink takes it within 250 ms, long before
 * the first fault, schedule.startAfterS in). The gate
 * fault's (g001) recovery time is measured to a requested checkpoint, so it is shorter than
 * a soak fault's would be; the report leaves it out of its kind's recovery median and max
 * (reports/faults.ts summaryByKind) and says so.
 *
 * The gate sees its conditions on the engine's health poll and on its own probes; during the
 * gate the health poll runs every GATE_HEALTH_POLL_MS (500 ms) and the probes every
 * GATE_POLL_MS (250 ms), not every 2 s and 1 s, which at d7fcea3 left 2–4 s of a 7–9 s gate
 * seeing what had already happened; the soak polls at the run's cadence again. While it
 * waits for the first committed objects it has the oracle sample every second
 * (GATE_SAMPLE_NOW_MS, Sampler.wake), not at the campaign's sampleIntervalS (5 s in quick),
 * which at ea7b86b and dc5a638 left 2.0 and 2.4 s between the first completed checkpoint and the gate seeing its objects.
 */
import { zombieTrails } from './zombies.ts';
import { DrainStall, drainStallRule } from './drain-stall.ts';
import { faultsInFlight, notStartedReason, SoakCaught, soakCaughtRule } from './soak-caught.ts';
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { ChaosController } from '../../chaos/controller.ts';
import type { Engine, EngineHealth } from '../../engine/engine.ts';
import type { GateCondition, GateResult, PlannedFault, Verdict } from '../../lib/evidence.ts';
import { zeroCounters } from '../../lib/evidence.ts';
import { repoRoot } from '../../lib/paths.ts';
import type { RunStore } from '../../lib/run-store.ts';
import { poll } from '../../lib/retry.ts';
import { sleep } from '../../lib/sleep.ts';
import { InputAuditor } from '../../oracle/input-audit.ts';
import { RECOUNT_NODE_FLAGS } from '../../oracle/recount-flags.ts';
import { IncrementalJudge } from '../../oracle/judge.ts';
import { EventProducer, ensureTopic } from '../../oracle/producer.ts';
import { Sampler } from '../../oracle/sampler.ts';
import { writeReports } from '../../reports/report.ts';
import { healAll } from '../../rig/faults.ts';
import { shQuote } from '../../rig/process.ts';
import type { RigState } from '../../rig/types.ts';
import type { FaultContext } from '../../chaos/fault.ts';
import type { ResolvedCampaign } from '../types.ts';
import { MANDATORY_FAULT_POINTS } from '../types.ts';
import { GATE_HEALTH_POLL_MS, HEALTH_POLL_MS, type RunContext } from './context.ts';
import { recountAroundHeld } from './held-recount.ts';
import { countPendingUploads } from './pending-uploads.ts';
import { ResourceSampler, readResources } from './resources.ts';
import { readLedger } from './tamper.ts';
import { decideVerdict } from './verdict.ts';

export type Phase = (ctx: RunContext) => Promise<void>;

/** Deploy: the input topic, the engine, the generator, the oracle, the samplers. */
export const deploy: Phase = async (ctx) => {
  const { rig, campaign, engine, topic, prefix, runId, mutant, plan, credentials, remote, store, log } = ctx.run;
  const w = campaign.workload;
  await ensureTopic(rig.kafka.bootstrap, topic, w.partitions, Math.min(3, rig.kafka.brokers.length));
  log(`topic ${topic} (${w.partitions} partitions); output s3://${rig.store.bucket}/${prefix}`);
  await engine.deploy(
    { rig, remote, credentials, runId, log },
    {
      topic,
      partitions: w.partitions,
      bucket: rig.store.bucket,
      prefix,
      checkpointIntervalMs: w.checkpointIntervalS * 1000,
      ...(mutant !== 'none' ? { mutant } : {}),
      // Clock steps need the engine's processes under a controlled clock (rig/clock.ts).
      ...(plan.some((f) => f.kind === 'clock-step') ? { controlledClock: true } : {}),
    },
  );
  await engine.start();
  log(`engine ${engine.name} started${mutant !== 'none' ? ` with mutant ${mutant}` : ''}`);
  const producer = await EventProducer.open({
    bootstrap: rig.kafka.bootstrap,
    topic,
    seed: campaign.seed,
    partitions: w.partitions,
    keys: w.keys,
    rate: w.rate,
    ...(w.totalEvents ? { total: w.totalEvents } : {}),
    clientId: `clink-qual-${runId}`.slice(0, 100),
  });
  ctx.producer = producer;
  producer.start();
  // The input audit tails the topic from here, so that after the drain only the input's last records are left to read.
  ctx.inputAuditor = new InputAuditor({
    bootstrap: rig.kafka.bootstrap,
    topic,
    seed: campaign.seed,
    partitions: w.partitions,
    keys: w.keys,
    timeoutMs: 5 * 60_000,
    onError: (err) => log(`input audit: its stream ended (${err.message}); reading on from where it was`),
  });
  ctx.inputAuditor.start();
  const judge = new IncrementalJudge({
    store: { endpoint: rig.store.endpoint, region: rig.store.region, ...credentials },
    bucket: rig.store.bucket,
    prefix,
    seed: campaign.seed,
    partitions: w.partitions,
    keys: w.keys,
    ledgerPath: store.path('ledger'),
    onFinding: (f) => log(`oracle: ${f}`),
  });
  ctx.judge = judge;
  const sampler = new Sampler({
    judge,
    produced: () => producer.produced(),
    checkpoints: () => ctx.health?.completedCheckpoints,
    samplesPath: store.path('samples'),
    intervalMs: campaign.oracle.sampleIntervalS * 1000,
    deadlineMs: campaign.deadlines.sampleStuckS * 1000,
  });
  ctx.sampler = sampler;
  sampler.start();
  ctx.resources = new ResourceSampler({
    rig,
    remote,
    path: store.path('resources'),
    intervalMs: campaign.oracle.sampleIntervalS * 1000,
    produced: () => producer.total,
    judged: () => judge.tally.distinct,
    listObjects: async () => (await judge.store.list(prefix)).length,
    oracleObjects: () => judge.objects,
    oracleLastSampleAt: () => sampler.last?.t,
  });
  ctx.resources.start();
  ctx.startHealthPolling();
};

/** Gate: each condition shown within the deadline, then one fault landed and recovered. */
export const gate: Phase = async (ctx) => {
  const { campaign, engine, store, log } = ctx.run;
  ctx.enterPhase('gate');
  const healed = (faultId: string) => ctx.chaos.some((r) => r.faultId === faultId && r.phase === 'healed');
  // The gate's conditions are seen on the health poll: faster during the gate, back to the run's cadence for the soak.
  await ctx.pollHealthEvery(GATE_HEALTH_POLL_MS);
  try {
    ctx.out.gate = await runGate(campaign, engine, ctx.controller, () => ctx.producer!.total, () => ctx.sampler!.last?.objects ?? 0, () => ctx.health, ctx.signal, log, { healed, sampleNow: () => ctx.sampler!.wake() });
  } finally {
    await ctx.pollHealthEvery(HEALTH_POLL_MS);
  }
  store.write('gate', ctx.out.gate);
  ctx.throwIfAborted();
  log(ctx.out.gate.passed ? 'gate passed: soak begins' : 'GATE FAILED: no soak');
};

/**
 * Soak: the plan's faults at their times, for the soak's length (only after a passed gate).
 * A mutant's soak ends early once the oracle has counted what the mutant must raise and every
 * fault planned up to then has ended its episode; later faults are not started
 * (campaigns/runner/soak-caught.ts).
 */
export const soak: Phase = async (ctx) => {
  if (!ctx.out.gate?.passed) return;
  const { campaign, engine, mutant, plan, log } = ctx.run;
  const soakStart = Date.now();
  ctx.out.soakStartMs = soakStart;
  ctx.enterPhase('soak', soakStart);
  const plannedEnd = soakStart + campaign.workload.soakS * 1000;
  const rule = soakCaughtRule(mutant, engine.mutants ?? [], campaign.workload.checkpointIntervalS);
  if (!rule) {
    await ctx.controller.run(soakStart);
    await sleep(plannedEnd - Date.now(), ctx.signal);
  } else {
    const caught = new SoakCaught(rule);
    let walked = false;
    const walk = ctx.controller.run(soakStart).finally(() => (walked = true));
    let stopped = false;
    while (!ctx.aborted && !(walked && Date.now() >= plannedEnd)) {
      const c = caught.observe(ctx.sampler?.last, (Date.now() - soakStart) / 1000);
      if (c && !stopped) {
        stopped = true;
        log(`soak: the oracle has caught mutant ${rule.mutant} (${c.counter} = ${c.value} in its sample at ${c.sampleT}); no fault planned after +${c.seenAtS.toFixed(1)} s is started, and the soak ends once those up to then are over`);
        ctx.controller.stopWalk(c.seenAtS, notStartedReason(c));
      }
      if (c && walked && faultsInFlight(plan, ctx.chaos, c.seenAtS).length === 0) {
        const endedAtS = Math.round((Date.now() - soakStart) / 100) / 10;
        ctx.out.soakEndedEarly = { endedAtS, plannedS: campaign.workload.soakS, caughtAtS: Math.round(c.seenAtS * 10) / 10, counter: c.counter, value: c.value, sampleT: c.sampleT, notStarted: ctx.controller.notStartedIds };
        log(`soak: ended early at +${endedAtS} s of ${campaign.workload.soakS} s: mutant ${rule.mutant} already caught (${c.counter} = ${c.value}); ${ctx.out.soakEndedEarly.notStarted.length} planned fault(s) not started`);
        break;
      }
      const left = plannedEnd - Date.now();
      await sleep(left > 0 ? Math.min(SOAK_WATCH_MS, left) : SOAK_WATCH_MS, ctx.signal);
    }
    await walk;
  }
  if (ctx.sampler!.stuck) ctx.out.stuck = ctx.sampler!.stuckError?.message;
  ctx.throwIfAborted();
};

/** How often a mutant's soak looks at the oracle's latest sample and the walk (ms). */
export const SOAK_WATCH_MS = 500;

/** Drain: stop the input, heal everything, wait until all produced is committed. */
export const drain: Phase = async (ctx) => {
  const { campaign, engine, rig, remote, store, log } = ctx.run;
  const producer = ctx.producer!;
  const sampler = ctx.sampler!;
  ctx.throwIfAborted();
  ctx.enterPhase('drain');
  await producer.stop();
  store.write('produced', { perPartition: producer.produced() });
  log(`drain: input stopped at ${producer.total} events; healing everything`);
  // Faults held through the recount stay in force for its first pass (held-recount.ts).
  await ctx.controller.healActive({ keepHeld: true });
  await healAll(rig, remote);
  await engine.disarmFaultPoints();
  // The tail committed by a checkpoint asked for now, not at the next periodic one (after the
  // heals and the disarm, so no armed point fires on it); again while it has not converged.
  const asker = new CheckpointAsker(engine, 'drain', log);
  await asker.ask();
  await sampler.stop();
  const target = producer.total;
  // A run the oracle has already shown wrong, on which nothing moves any more, ends here rather than at the deadline.
  const stallRule = drainStallRule(campaign.workload.checkpointIntervalS);
  const stall = new DrainStall(stallRule);
  let stalledS: number | undefined;
  const end = await poll(
    async () => {
      await asker.askEvery(DRAIN_ASK_AGAIN_MS);
      const s = await sampler.sample(ctx.signal);
      if (s.stuck) return 'stuck' as const;
      if (s.events >= target) return 'converged' as const;
      if (stall.observe(s, Date.now())) {
        stalledS = stall.stillS(Date.now());
        return 'stalled' as const;
      }
      return undefined;
    },
    { deadlineMs: campaign.deadlines.drainS * 1000, intervalMs: 2000, signal: ctx.signal },
  );
  if (end === 'stuck') ctx.out.stuck = sampler.stuckError?.message ?? 'a sample could not complete';
  ctx.out.drainConverged = end === 'converged';
  if (end === 'stalled' && stalledS !== undefined) {
    ctx.out.drainStalled = `ended early, the run already shown wrong by the oracle and nothing committed for ${stalledS.toFixed(1)} s over ${stallRule.checkpoints} or more completed checkpoints (${sampler.last?.events} of ${target} committed)`;
  }
  log(ctx.out.drainConverged ? `drain converged: ${sampler.last?.events} of ${target} events committed` : ctx.out.drainStalled ? `drain did NOT converge: ${ctx.out.drainStalled}` : `drain did NOT converge: ${sampler.last?.events} of ${target} committed`);
  ctx.throwIfAborted();
};

/**
 * Settle: with no input left, let the engine take two more checkpoints (the second one's
 * barrier comes after everything was committed: an idle barrier must commit nothing), then
 * stop it, so the judge's last sample and the recount read one settled bucket. Only after a
 * drain that converged. Each idle checkpoint is asked for now (CheckpointAsker), not waited
 * for at the periodic cadence.
 */
export const settle: Phase = async (ctx) => {
  const { campaign, engine, log } = ctx.run;
  const sampler = ctx.sampler!;
  if (ctx.out.drainConverged) {
    ctx.enterPhase('settle');
    const waitS = Math.max(30, campaign.workload.checkpointIntervalS * 4);
    const idle = await waitCheckpoints(engine, 2, waitS * 1000, ctx.signal, new CheckpointAsker(engine, 'settle', log));
    if (idle === null) ctx.out.settleWarning = `no idle checkpoint completed within ${waitS} s after the drain; idle barriers were not exercised`;
    log(idle === null ? `settle: ${ctx.out.settleWarning}` : `settle: checkpoint ${idle} completed with no input left`);
    await ctx.pollHealth(); // the last checkpoints into checkpoints.jsonl while the coordinator still answers
    await engine.stop();
    log('settle: engine stopped; last sample of the settled bucket');
    const last = await sampler.sample(ctx.signal);
    if (last.stuck) ctx.out.stuck = sampler.stuckError?.message ?? 'a sample could not complete';
  }
  ctx.throwIfAborted();
  ctx.out.oracleCounters = sampler.last?.counters ?? zeroCounters();
};

/** The phases that run in order until one throws; wrap-up runs after them whatever happened. */
export const RUN_PHASE_STEPS: readonly Phase[] = [deploy, gate, soak, drain, settle];

/** Wrap-up, always: heal, stop the samplers, then evidence first (logs, pending uploads), then stop the engine. */
export const wrapUp: Phase = async (ctx) => {
  const { engine, rig, remote, store, credentials, log } = ctx.run;
  ctx.enterPhase('wrap-up');
  ctx.stopHealthPolling();
  // Held faults stay for the recount's first pass, unless the run was aborted (no recount then).
  await ctx.controller.healActive({ keepHeld: !ctx.aborted }).catch(() => {});
  await healAll(rig, remote).catch(() => {});
  await engine.disarmFaultPoints().catch(() => {});
  if (ctx.producer) {
    await ctx.producer.stop().catch(() => {});
    if (!store.has('produced')) store.write('produced', { perPartition: ctx.producer.produced() });
  }
  await ctx.sampler?.stop().catch(() => {});
  await ctx.resources?.stop().catch(() => {});
  if (ctx.health) await ctx.pollHealth();
  try {
    const files = await engine.collectLogs(store.path('logs'));
    log(`collected ${files.length} engine log files`);
  } catch (err) {
    log(`could not collect engine logs: ${(err as Error).message}`);
  }
  await collectRigLogs(rig, remote, store).catch((err) => log(`could not collect rig logs: ${(err as Error).message}`));
  try {
    const engineHosts = new Set(rig.hosts.filter((h) => h.roles.some((r) => r === 'worker' || r === 'coordinator')).map((h) => h.name));
    const trails = zombieTrails(store.lines('chaos').values, store.path('logs'), engineHosts, engine.zombieTrail?.bind(engine));
    if (trails.length) {
      store.write('zombies', trails);
      log(`zombies: ${trails.map((z) => `${z.faultId} ${z.host} ${z.outcome}`).join(', ')}`);
    }
  } catch (err) {
    log(`could not read the zombies' trails: ${(err as Error).message}`);
  }
  try {
    if (engine.startedUploads) {
      const started = await engine.startedUploads();
      const r = await countPendingUploads(rig.store, credentials, started);
      ctx.out.pendingUploads = r.pending;
      store.write('pendingUploads', { started: started.length, ...r });
    } else if (engine.pendingUploads) {
      const r = await engine.pendingUploads(rig.store, credentials);
      ctx.out.pendingUploads = r.pending;
      store.write('pendingUploads', r);
    }
  } catch (err) {
    // Recorded, so that the report says the count failed rather than "0 pending".
    const error = (err as Error).message;
    log(`could not count pending uploads: ${error}`);
    store.write('pendingUploads', { pending: 0, error });
  }
  await engine.stop().catch((err) => log(`engine stop: ${(err as Error).message}`));
  ctx.judge?.close();
};

/**
 * The input audit finished, then the separate recount in its own process (not after an abort,
 * nor when nothing was produced); with faults held through the recount, a held pass first and
 * their heal (campaigns/runner/held-recount.ts). Held faults are healed whatever happens.
 */
export const recount: Phase = async (ctx) => {
  try {
    await recountSteps(ctx);
  } finally {
    await ctx.controller.healHeld().catch((err) => ctx.run.log(`healing the held faults: ${(err as Error).message}`));
  }
};

async function recountSteps(ctx: RunContext): Promise<void> {
  const { campaign, store, log } = ctx.run;
  if (ctx.aborted || !ctx.producer || !ctx.inputAuditor) {
    await ctx.inputAuditor?.stop();
    return;
  }
  try {
    // The producer stopped in the drain (or the wrap-up): the topic's end offsets are final.
    const audit = await ctx.inputAuditor.finish();
    store.write('inputAudit', audit);
    const tail = audit.tail ? ` (tailed during the run; ${audit.tail.leftAtFinish} left to read at the end, read in ${(audit.tail.finishMs / 1000).toFixed(1)} s)` : '';
    log(`input audit: ${audit.records} records${tail}, ${audit.clean ? 'clean' : `anomalies: ${audit.findings.slice(0, 3).join('; ')}`}`);
  } catch (err) {
    log(`input audit failed: ${(err as Error).message}`);
  }
  ctx.enterPhase('recount');
  const timeoutMs = Math.max(120, campaign.deadlines.recountS * 4) * 1000;
  await recountAroundHeld({
    held: () => ctx.controller.heldFaults,
    heldPass: async () => {
      const h = await runRecount(store, timeoutMs, 'recountHeld');
      if (!h.ok) log(`recount: the held pass failed (${h.error}); recount-held.json is missing`);
    },
    healHeld: () => ctx.controller.healHeld(),
    recount: async () => {
      log('recount: a separate process re-reads the settled bucket');
      const r = await runRecount(store, timeoutMs);
      if (r.ok) ctx.out.recount = store.get('recount') ?? null;
      else ctx.out.recountError = r.error;
    },
    log,
  });
  ctx.enterPhase('report');
}

/** The verdict from everything the phases found, written with the report. */
export function decide(ctx: RunContext): Verdict {
  const { runId, campaign, engine, mutant, revision, startedAt, store, log } = ctx.run;
  const o = ctx.out;
  const verdict = decideVerdict({
    runId,
    subject: { campaign: campaign.name, seed: campaign.seed, engine: { name: engine.name, mutant }, revision },
    startedAt,
    endedAt: new Date().toISOString(),
    aborted: ctx.aborted,
    ...(ctx.abortReason ? { abortReason: ctx.abortReason } : {}),
    gate: o.gate,
    chaos: ctx.chaos,
    mandatoryPoints: engine.mandatoryFaultPoints.length ? engine.mandatoryFaultPoints : MANDATORY_FAULT_POINTS,
    oracle: o.oracleCounters,
    recount: o.recount,
    ...(o.recountError ? { recountError: o.recountError } : {}),
    produced: ctx.producer?.total ?? 0,
    drainConverged: o.drainConverged,
    ...(o.drainStalled ? { drainStalled: o.drainStalled } : {}),
    ...(o.soakEndedEarly ? { soakEndedEarly: o.soakEndedEarly } : {}),
    pendingUploads: o.pendingUploads,
    ...(o.stuck ? { stuckOracle: o.stuck } : {}),
    ...(o.settleWarning ? { settleWarning: o.settleWarning } : {}),
    ...(ctx.chaos.some((c) => c.kind === 'store-tamper') ? { ledger: readLedger(store.path('ledger')) } : {}),
    resources: readResources(store.path('resources')),
    ...(o.soakStartMs !== undefined ? { soakStartMs: o.soakStartMs } : {}),
  });
  store.write('verdict', verdict);
  try {
    writeReports(store.dir);
  } catch (err) {
    log(`report failed: ${(err as Error).message}`);
  }
  return verdict;
}

/** How often the gate looks at its current condition again (ms). */
export const GATE_POLL_MS = 250;
/** How often the gate asks the oracle for a sample now while it waits for the first committed objects (ms). */
export const GATE_SAMPLE_NOW_MS = 1000;
/** How often the drain asks again for a checkpoint while it has not converged (ms). */
export const DRAIN_ASK_AGAIN_MS = 2000;
/** How often the gate and the settle ask again while the checkpoint they wait for has not completed (ms). */
export const ASK_AGAIN_MS = 1000;
/** A request not answered within this is given up like a failed one (ms). */
export const ASK_TIMEOUT_MS = 10_000;

/**
 * Asks the engine for a checkpoint now (Engine.triggerCheckpoint) while a phase outside the
 * soak waits on one. It never throws: a request that fails, or is not answered within
 * `timeoutMs`, is logged, and this asker asks no more, so the phase waits for the periodic
 * checkpoint as it always did. An engine without triggerCheckpoint is never asked. The
 * engine may drop a request (the job not running, a checkpoint pending): callers ask again.
 */
export class CheckpointAsker {
  readonly #engine: Pick<Engine, 'triggerCheckpoint'>;
  readonly #where: string;
  readonly #log: (line: string) => void;
  readonly #timeoutMs: number;
  #failed = false;
  #lastAt = Number.NEGATIVE_INFINITY;
  /** Requests made (accepted or not). */
  asked = 0;

  constructor(engine: Pick<Engine, 'triggerCheckpoint'>, where: string, log: (line: string) => void, timeoutMs = ASK_TIMEOUT_MS) {
    this.#engine = engine;
    this.#where = where;
    this.#log = log;
    this.#timeoutMs = timeoutMs;
  }

  /** Whether it still asks (the engine can be asked and no request has failed). */
  get active(): boolean {
    return typeof this.#engine.triggerCheckpoint === 'function' && !this.#failed;
  }

  /** Asks now. */
  async ask(): Promise<void> {
    if (!this.active) return;
    this.#lastAt = Date.now();
    if (this.asked++ === 0) this.#log(`${this.#where}: asking the engine for a checkpoint now, not at its periodic one`);
    let timer: NodeJS.Timeout | undefined;
    try {
      const request = Promise.resolve().then(() => this.#engine.triggerCheckpoint!());
      request.catch(() => {}); // a request given up on may still fail later
      await Promise.race([request, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${this.#timeoutMs} ms`)), this.#timeoutMs)))]);
    } catch (err) {
      this.#failed = true;
      this.#log(`${this.#where}: asking the engine for a checkpoint failed (${(err as Error).message}); waiting for its periodic checkpoint instead`);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Asks when `everyMs` have passed since it last asked (or it never did). */
  async askEvery(everyMs: number): Promise<void> {
    if (Date.now() - this.#lastAt >= everyMs) await this.ask();
  }
}

/**
 * Waits until `n` more checkpoints than now have completed; returns the count then, or
 * null past the deadline (the coordinator's health may fail meanwhile: keep polling). With
 * an asker, each of the `n` is asked for: once the count is known, and again each time it
 * moves (the next one), or after `ASK_AGAIN_MS` without a move (the engine dropped it).
 */
export async function waitCheckpoints(engine: Pick<Engine, 'health'>, n: number, timeoutMs: number, signal: AbortSignal, asker?: CheckpointAsker): Promise<number | null> {
  const count = async () => (await engine.health().catch(() => undefined))?.completedCheckpoints;
  const deadline = Date.now() + timeoutMs;
  let start = await count();
  let askedAt: number | undefined;
  const askFor = async (c: number) => {
    if (!asker) return;
    if (c !== askedAt) {
      askedAt = c;
      await asker.ask();
    } else await asker.askEvery(ASK_AGAIN_MS);
  };
  if (start !== undefined) await askFor(start);
  const reached = await poll(
    async () => {
      const c = await count();
      if (start === undefined) start = c;
      else if (c !== undefined && c >= start + n) return c;
      if (c !== undefined) await askFor(c);
      return undefined;
    },
    { until: deadline, intervalMs: 500, signal },
  );
  return reached ?? null;
}

/**
 * The functional gate: each condition with its evidence, within the deadline. The gate
 * fault (a worker kill by default) is landed through the chaos controller like any other,
 * so it is in chaos.jsonl too.
 */
export async function runGate(
  campaign: Pick<ResolvedCampaign, 'gate'>,
  engine: Pick<Engine, 'sinkFamily' | 'sinkOpenLines' | 'processes' | 'triggerCheckpoint'>,
  controller: Pick<ChaosController, 'runOne'>,
  produced: () => number,
  objects: () => number,
  health: () => EngineHealth | undefined,
  signal: AbortSignal,
  log: (l: string) => void,
  /**
   * `healed(faultId)`: whether the fault's heal was recorded (then a checkpoint after it is asked for).
   * `sampleNow()`: an oracle sample now rather than at its interval's end (asked at most every
   * GATE_SAMPLE_NOW_MS while no committed object has been seen).
   */
  opts: { healed?: (faultId: string) => boolean; sampleNow?: () => void } = {},
): Promise<GateResult> {
  const deadline = Date.now() + campaign.gate.deadlineS * 1000;
  const conditions: GateCondition[] = [];
  const asker = new CheckpointAsker(engine, 'gate', log);
  let sampledAt = 0;
  const waitUntil = async (name: string, probe: () => Promise<string | null>): Promise<boolean> => {
    let last = 'not seen';
    const ev = await poll(probe, { until: deadline, intervalMs: GATE_POLL_MS, signal, ignoreErrors: true, onError: (err) => (last = (err as Error).message) });
    if (ev !== undefined) {
      conditions.push({ name, passed: true, evidence: ev });
      log(`gate: ${name} — ${ev}`);
      return true;
    }
    conditions.push({ name, passed: false, evidence: `not shown within ${campaign.gate.deadlineS} s (${last})` });
    log(`gate: ${name} NOT shown`);
    return false;
  };
  const sinkCondition = `${engine.sinkFamily} confirmed from each worker's open-time log`;
  const ok =
    (await waitUntil('input flowing', async () => (produced() > 0 ? `${produced()} events produced with acks=all` : null))) &&
    (await waitUntil('job running with completed checkpoints', async () => {
      const h = health();
      if (h && h.running && h.completedCheckpoints >= 1) return `epoch ${h.epoch}, ${h.completedCheckpoints} completed checkpoints, last #${h.lastCompletedCheckpointId} at ${h.lastCompletedAt}`;
      if (h?.running) await asker.askEvery(ASK_AGAIN_MS);
      return null;
    })) &&
    (await waitUntil('objects committed', async () => {
      if (objects() > 0) return `${objects()} committed objects read by the oracle`;
      if (Date.now() - sampledAt >= GATE_SAMPLE_NOW_MS) {
        sampledAt = Date.now();
        opts.sampleNow?.();
      }
      return null;
    })) &&
    (await waitUntil(sinkCondition, async () => {
      const lines = await engine.sinkOpenLines();
      const workers = new Set((await engine.processes()).filter((p) => p.role === 'worker').map((p) => p.host));
      const good = lines.filter((l) => l.line.includes(`family=${engine.sinkFamily}`));
      const hosts = new Set(good.map((l) => l.host));
      if (workers.size === 0 || [...workers].some((w) => !hosts.has(w))) return null;
      return [...hosts].sort().map((h) => `${h}: ${good.find((l) => l.host === h)!.line.trim()}`).join(' | ');
    }));
  if (ok) {
    const gateFault: PlannedFault = { id: 'g001', kind: campaign.gate.fault, atS: 0 };
    const outcome = await askAfterHeal(controller.runOne(gateFault), gateFault.id, asker, opts.healed, health, signal);
    conditions.push({ name: 'a fault landed', passed: outcome.landed, evidence: outcome.landed ? `${gateFault.kind} ${gateFault.id} landed` : `did not land: ${outcome.reason ?? ''}` });
    conditions.push({
      name: 'a completed checkpoint after it',
      passed: outcome.recovered,
      evidence: outcome.recovered ? `next completed checkpoint ${outcome.recoveryS} s after the heal` : `no recovery: ${outcome.reason ?? ''}`,
    });
  }
  const names = ['input flowing', 'job running with completed checkpoints', 'objects committed', sinkCondition, 'a fault landed', 'a completed checkpoint after it'];
  for (const n of names) if (!conditions.some((c) => c.name === n)) conditions.push({ name: n, passed: false, evidence: 'not reached: an earlier condition failed' });
  return { passed: conditions.every((c) => c.passed), conditions };
}

/**
 * While `running` (the gate fault's episode) has not ended: once the fault's heal is recorded,
 * asks for a checkpoint, and again every ASK_AGAIN_MS until one newer than at the heal is seen
 * (the controller measures its recovery from the heal to that checkpoint). Every ask has
 * ended when this returns, so none outlives the gate.
 */
async function askAfterHeal<T>(running: Promise<T>, faultId: string, asker: CheckpointAsker, healed: ((faultId: string) => boolean) | undefined, health: () => EngineHealth | undefined, signal: AbortSignal): Promise<T> {
  let done = false;
  const watching = (async () => {
    if (!healed) return;
    let healedAt: number | undefined;
    let idAtHeal: number | null | undefined;
    while (!done && !signal.aborted && asker.active) {
      if (healedAt === undefined && healed(faultId)) {
        healedAt = Date.now();
        idAtHeal = health()?.lastCompletedCheckpointId ?? null;
      }
      if (healedAt !== undefined) {
        const id = health()?.lastCompletedCheckpointId ?? null;
        if (id !== null && id !== idAtHeal) return; // a checkpoint after the heal: nothing more to ask
        await asker.askEvery(ASK_AGAIN_MS);
      }
      await sleep(100, signal);
    }
  })();
  try {
    return await running;
  } finally {
    done = true;
    await watching;
  }
}

/** Runs `clink-qual verify RUN_DIR` in its own process (with the recount's Node flags); it writes recount.json. */
function runRecount(store: RunStore, timeoutMs: number, writes: 'recount' | 'recountHeld' = 'recount'): Promise<{ ok: boolean; error?: string }> {
  return new Promise((resolve) => {
    const args = [...RECOUNT_NODE_FLAGS, path.join(repoRoot, 'bin', 'clink-qual.ts'), 'verify', store.dir, '--json', ...(writes === 'recountHeld' ? ['--held'] : [])];
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-2000)));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      // verify exits 0 (clean) or 1 (findings); both wrote recount.json.
      if ((code === 0 || code === 1) && store.has(writes)) resolve({ ok: true });
      else resolve({ ok: false, error: `verify exited ${code}: ${err.trim().split('\n').slice(-3).join(' ')}` });
    });
  });
}

/** The rig's own service logs (Kafka, MinIO), tails, into logs/<host>/. */
async function collectRigLogs(rig: RigState, remote: FaultContext['remote'], store: RunStore): Promise<void> {
  for (const h of rig.hosts.filter((x) => x.roles.includes('broker') || x.roles.includes('store'))) {
    const r = remote(h.name);
    const out = await r.exec(`for f in ${shQuote(h.dataDir)}/services/*/out.log; do [ -f "$f" ] || continue; echo "=== $f"; tail -n 400 "$f"; done`, { check: false, timeoutMs: 30_000 });
    const dir = path.join(store.path('logs'), h.name);
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'services.log'), out.stdout);
  }
}
