/**
 * The campaign run: gate → soak → drain → recount → report, every piece of evidence
 * written to runs/<run-id>/ as it happens (lib/evidence.ts lists the files).
 *
 * Order of trust: the rig is checked (every host answers over SSH with its pinned key)
 * before anything is touched; the gate must show the pipeline working before any soak;
 * the chaos controller records every fault as it moves; the oracle samples the bucket
 * the way a downstream reader would; after the drain a separate process recounts the
 * settled bucket from scratch; the verdict compares the two and lists every reason.
 *
 * On abort (SIGINT, SIGTERM, SIGHUP, an error) every active fault is healed, the logs are still
 * collected, the run is marked ABORTED, and a report says so.
 */
import { sleep } from '../../lib/sleep.ts';
import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ChaosController } from '../../chaos/controller.ts';
import type { FaultContext } from '../../chaos/fault.ts';
import { engineDescription, type Engine, type EngineHealth } from '../../engine/engine.ts';
import { loadEngine } from '../../engine/index.ts';
import { QualError } from '../../lib/errors.ts';
import { zeroCounters, type ChaosRecord, type Counters, type GateCondition, type GateResult, type PlannedFault, type Provenance, type Recount, type Verdict } from '../../lib/evidence.ts';
import { repoRoot, runsDir } from '../../lib/paths.ts';
import { auditInput } from '../../oracle/input-audit.ts';
import { IncrementalJudge } from '../../oracle/judge.ts';
import { EventProducer, ensureTopic } from '../../oracle/producer.ts';
import { Sampler } from '../../oracle/sampler.ts';
import { writeReports } from '../../reports/report.ts';
import { healAll } from '../../rig/faults.ts';
import { shQuote } from '../../rig/process.ts';
import { readManifest } from '../../rig/install.ts';
import { closeAllRemotes, remoteFor } from '../../rig/ssh.ts';
import { readRigState, readStoreCredentials } from '../../rig/state.ts';
import { STALE_UPLOADS_EXPIRY } from '../../rig/store.ts';
import type { RigState } from '../../rig/types.ts';
import { rigUp } from '../../rig/up.ts';
import { loadCampaign } from '../load.ts';
import { replaySchedule, type ReplayInput } from '../replay.ts';
import { formatPlanJson, planCampaign } from '../plan.ts';
import { applyOverrides, describeOverrides, noOverrides, type OverriddenCampaign, type Overrides } from '../overrides.ts';
import type { ResolvedCampaign } from '../types.ts';
import { MANDATORY_FAULT_POINTS } from '../types.ts';
import { countPendingUploads } from './pending-uploads.ts';
import { Progress, progressTiming } from './progress.ts';
import { RunDir, checkRunId, newRunId } from './run-dir.ts';
import { pointLatest } from '../../reports/runs-list.ts';
import { preflight } from './preflight.ts';
import { decideVerdict } from './verdict.ts';
import { ResourceSampler, readResources } from './resources.ts';
import { RUN_PHASES, type RunPhase } from '../../lib/evidence.ts';
import { readLedger } from './tamper.ts';

export interface RunOptions {
  campaignFile: string;
  inventory?: string;
  mutant?: string;
  runId?: string;
  /** Bring the local rig up when none is (the smoke rehearsal). */
  rigUpIfMissing?: boolean;
  progress?: Progress;
  /** Aborts the run from outside (tests); SIGINT/SIGTERM do the same. */
  signal?: AbortSignal;
  /** Drive this engine plug instead of the one the campaign names (another engine, or a wrapped one in tests). */
  engine?: Engine;
  /** Run a stored run's exact schedule (campaign --replay, shrink candidates) instead of planning campaignFile. */
  replay?: ReplayInput;
  /** --seed, --soak, --rate: applied to the loaded campaign before planning, recorded in campaign.resolved.json (not with replay). */
  overrides?: Overrides;
}

export interface RunResult {
  runDir: string;
  verdict: Verdict;
}


function gitRevision(): { revision: string; dirty: boolean } {
  const rev = spawnSync('git', ['rev-parse', '--short=12', 'HEAD'], { cwd: repoRoot, encoding: 'utf8' });
  const st = spawnSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: repoRoot, encoding: 'utf8' });
  return { revision: rev.status === 0 ? rev.stdout.trim() : 'unknown', dirty: st.status === 0 ? st.stdout.trim().length > 0 : true };
}

/** Loads the campaign, checked against the engine's own fault points and mutants. */
export function loadForRun(file: string, plug?: Engine): { campaign: ResolvedCampaign; engine: Engine } {
  const engine = plug ?? loadEngine(loadCampaign(file).engine.name);
  const campaign = loadCampaign(file, { faultPoints: engine.faultPoints, mutants: engine.mutants.map((m) => m.name) });
  return { campaign, engine };
}

export async function runCampaign(opts: RunOptions): Promise<RunResult> {
  const progress = opts.progress ?? new Progress();
  // The harness's log: the terminal, and runs/<id>/run.log once the run directory exists (earlier lines are kept and written then).
  let runLog: string | undefined;
  const earlyLog: string[] = [];
  const log = (l: string) => {
    progress.log(l);
    const line = `${new Date().toISOString()} ${l}\n`;
    if (runLog) appendFileSync(runLog, line);
    else earlyLog.push(line);
  };
  const replayed = opts.replay ? replaySchedule(opts.replay) : undefined;
  const loaded = replayed ? { campaign: replayed.campaign, engine: opts.engine ?? loadEngine(replayed.campaign.engine.name) } : loadForRun(opts.campaignFile, opts.engine);
  if (replayed && opts.overrides && !noOverrides(opts.overrides)) throw new QualError('BAD_ARGUMENTS', '--seed, --soak and --rate do not go with --replay');
  const { engine } = loaded;
  const campaign: OverriddenCampaign = opts.overrides ? applyOverrides(loaded.campaign, opts.overrides) : loaded.campaign;
  // A given run id is checked before anything is touched (exit 254 on a bad or reused one).
  if (opts.runId !== undefined) checkRunId(opts.runId, runsDir());
  const mutant = opts.mutant ?? campaign.engine.mutant;
  if (mutant !== 'none' && !engine.mutants.some((m) => m.name === mutant)) {
    throw new QualError('BAD_ARGUMENTS', `unknown mutant '${mutant}' for engine ${engine.name} (known: ${engine.mutants.map((m) => m.name).join(', ')})`);
  }
  const plan = replayed ? replayed.plan : planCampaign(campaign);
  const planIds = new Set(plan.map((f) => f.id));

  // The rig: from an inventory, the live local rig, or (smoke) a local rig brought up now.
  let rig: RigState;
  const inventory = opts.inventory ?? (campaign.rig.kind === 'inventory' ? campaign.rig.file : undefined);
  if (inventory) rig = await rigUp({ inventory, log });
  else {
    try {
      rig = readRigState();
    } catch (err) {
      if (!opts.rigUpIfMissing) throw err;
      log('no rig is up: bringing up the local rig');
      rig = await rigUp({ log });
    }
  }
  // Preflight (campaigns/runner/preflight.ts): SSH with pinned keys, then heal what a crashed
  // controller left (tagged rules, paused services) and check every service before the gate.
  const pre = await preflight(rig, (n) => remoteFor(rig.hosts.find((h) => h.name === n)!), log);
  const credentials = readStoreCredentials(rig);

  const runId = opts.runId ?? newRunId(campaign.name + (mutant !== 'none' ? `-${mutant}` : ''));
  const run = new RunDir(path.join(runsDir(), runId), { fresh: true });
  runLog = run.path('run.log');
  appendFileSync(runLog, earlyLog.join(''));
  log(`run ${runId}: evidence in ${run.dir}`);
  // runs/latest names the newest run from its first second (`clink-qual runs` repairs it if this fails).
  try {
    pointLatest(runsDir(), runId);
  } catch (err) {
    log(`runs/latest not updated: ${(err as Error).message}`);
  }
  run.writeJson('preflight.json', pre);
  const startedAt = new Date().toISOString();
  const topic = `cq-${runId}`.slice(0, 200);
  const prefix = `runs/${runId}/`;
  if (existsSync(opts.campaignFile)) copyFileSync(opts.campaignFile, run.path('campaign.yaml'));
  if (replayed) {
    run.writeJson('replay.json', replayed.record);
    log(`replaying ${replayed.record.replays}: ${replayed.record.faults.length} of its ${replayed.record.ofFaults} faults, soak ${campaign.workload.soakS} s`);
  }
  if (campaign.overrides) log(`overrides: ${describeOverrides(campaign.overrides)}`);
  run.writeJson('campaign.resolved.json', {
    ...campaign,
    engine: { ...campaign.engine, mutant },
    runId,
    topic,
    oracle: { ...campaign.oracle, seed: campaign.seed, partitions: campaign.workload.partitions, keys: campaign.workload.keys, bucket: rig.store.bucket, prefix, endpoint: rig.store.endpoint, region: rig.store.region },
  });
  run.writeText('plan.json', formatPlanJson(plan));
  const manifest = readManifest();
  const rev = gitRevision();
  const provenance: Provenance & Record<string, unknown> = {
    runId,
    campaign: campaign.name,
    seed: campaign.seed,
    engine: { name: engine.name, revision: rev.revision, dirty: rev.dirty, sink: engine.sinkFamily, ...(mutant !== 'none' ? { mutant } : {}), faultPoints: [...engine.faultPoints], mandatoryFaultPoints: [...engine.mandatoryFaultPoints], ...engineDescription(engine) } as Provenance['engine'],
    components: manifest.components.map((c) => ({ name: c.name, version: c.version, sha256: c.sha256 })),
    rig: { kind: rig.kind, hosts: rig.hosts.map((h) => ({ name: h.name, address: h.address, roles: [...h.roles] })) },
    harness: { node: process.version, platform: `${process.platform} ${process.arch}` },
    startedAt,
    storeSettings: { MINIO_API_STALE_UPLOADS_EXPIRY: STALE_UPLOADS_EXPIRY },
    ...(replayed ? { replays: replayed.record.replays } : {}),
  };
  run.writeJson('provenance.json', provenance);

  // Abort: a signal from outside, SIGINT, SIGTERM or SIGHUP (the operator's SSH session dropped).
  const abort = new AbortController();
  let abortReason: string | undefined;
  const onSignal = (sig: string) => () => {
    if (abort.signal.aborted) return;
    abortReason = sig;
    log(`${sig}: aborting — healing every active fault, collecting logs`);
    abort.abort();
  };
  const onInt = onSignal('SIGINT');
  const onTerm = onSignal('SIGTERM');
  const onHup = onSignal('SIGHUP');
  process.on('SIGINT', onInt);
  process.on('SIGTERM', onTerm);
  process.on('SIGHUP', onHup);
  opts.signal?.addEventListener('abort', () => {
    abortReason ??= String(opts.signal?.reason ?? 'aborted');
    abort.abort();
  }, { once: true });

  const chaos: ChaosRecord[] = [];
  const record = (r: Omit<ChaosRecord, 't'> & { t?: string }) => {
    const full = { t: r.t ?? new Date().toISOString(), ...r } as ChaosRecord;
    chaos.push(full);
    run.append('chaos.jsonl', full);
    if (full.phase !== 'planned') log(`fault ${full.faultId} ${full.kind}${full.point ? ` ${full.point}` : ''}${full.target ? ` ${full.target}` : ''}: ${full.phase}${full.recoveryS !== undefined ? ` (recovery ${full.recoveryS} s)` : ''}${full.detail ? ` — ${full.detail}` : ''}`);
  };
  const remote = (name: string) => {
    const h = rig.hosts.find((x) => x.name === name);
    if (!h) throw new QualError('INTERNAL', `no host ${name}`);
    return remoteFor(h);
  };
  const ctx: FaultContext = { rig, remote, engine, credentials, checkpointIntervalMs: campaign.workload.checkpointIntervalS * 1000, recoveryDeadlineMs: campaign.deadlines.recoveryS * 1000, prefix, log };
  const controller = new ChaosController({ plan, ctx, record, recoveryDeadlineS: campaign.deadlines.recoveryS, signal: abort.signal });

  let producer: EventProducer | undefined;
  let sampler: Sampler | undefined;
  let judge: IncrementalJudge | undefined;
  let gate: GateResult | null = null;
  let drainConverged = false;
  let settleWarning: string | undefined;
  let recount: Recount | null = null;
  let recountError: string | undefined;
  let pendingUploads = 0;
  let oracleCounters: Counters = zeroCounters();
  let health: EngineHealth | undefined;
  let stuck: string | undefined;
  let fatal: unknown;
  const seenCheckpoints = new Set<number>();
  let healthTimer: NodeJS.Timeout | undefined;
  const pollHealth = async () => {
    try {
      health = await engine.health();
      for (const c of health.checkpoints ?? []) {
        if (seenCheckpoints.has(c.id)) continue;
        seenCheckpoints.add(c.id);
        run.append('checkpoints.jsonl', c);
      }
    } catch {
      /* the coordinator may be down on purpose */
    }
    const s = sampler?.last;
    progress.update({
      phase: phaseName,
      produced: producer?.total ?? 0,
      committed: s?.events ?? 0,
      checkpoints: health?.completedCheckpoints ?? 0,
      // The soak's faults (the gate's fault g001 is not part of the plan).
      landed: chaos.filter((r) => r.phase === 'landed' && planIds.has(r.faultId)).length,
      healed: chaos.filter((r) => r.phase === 'healed' && planIds.has(r.faultId)).length,
      healFailed: new Set(chaos.filter((r) => r.phase === 'heal-failed').map((r) => r.faultId)).size,
      faultsPlanned: plan.length,
      counters: s?.counters ?? zeroCounters(),
      timing: progressTiming(campaign, plan, phaseStartMs, soakStartMs),
    });
  };
  let phaseName = 'deploy';
  let phaseStartMs = Date.now();
  // Phase marks (phases.jsonl): the end of the phase left and the start of the one entered.
  const enterPhase = (name: string, at = Date.now()) => {
    const t = new Date(at).toISOString();
    if ((RUN_PHASES as readonly string[]).includes(phaseName)) run.append('phases.jsonl', { t, phase: phaseName as RunPhase, edge: 'end' });
    if ((RUN_PHASES as readonly string[]).includes(name)) run.append('phases.jsonl', { t, phase: name as RunPhase, edge: 'start' });
    phaseName = name;
    phaseStartMs = at;
  };
  let resources: ResourceSampler | undefined;
  let soakStartMs: number | undefined;

  try {
    // Deploy: the input topic, the engine, the generator, the oracle.
    await ensureTopic(rig.kafka.bootstrap, topic, campaign.workload.partitions, Math.min(3, rig.kafka.brokers.length));
    log(`topic ${topic} (${campaign.workload.partitions} partitions); output s3://${rig.store.bucket}/${prefix}`);
    await engine.deploy(
      { rig, remote, credentials, runId, log },
      {
        topic,
        partitions: campaign.workload.partitions,
        bucket: rig.store.bucket,
        prefix,
        checkpointIntervalMs: campaign.workload.checkpointIntervalS * 1000,
        ...(mutant !== 'none' ? { mutant } : {}),
        // Clock steps need the engine's processes under a controlled clock (rig/clock.ts).
        ...(plan.some((f) => f.kind === 'clock-step') ? { controlledClock: true } : {}),
      },
    );
    await engine.start();
    log(`engine ${engine.name} started${mutant !== 'none' ? ` with mutant ${mutant}` : ''}`);
    producer = await EventProducer.open({
      bootstrap: rig.kafka.bootstrap,
      topic,
      seed: campaign.seed,
      partitions: campaign.workload.partitions,
      keys: campaign.workload.keys,
      rate: campaign.workload.rate,
      ...(campaign.workload.totalEvents ? { total: campaign.workload.totalEvents } : {}),
      clientId: `clink-qual-${runId}`.slice(0, 100),
    });
    producer.start();
    judge = new IncrementalJudge({
      store: { endpoint: rig.store.endpoint, region: rig.store.region, ...credentials },
      bucket: rig.store.bucket,
      prefix,
      seed: campaign.seed,
      partitions: campaign.workload.partitions,
      keys: campaign.workload.keys,
      ledgerPath: run.path('ledger.jsonl'),
      onFinding: (f) => log(`oracle: ${f}`),
    });
    sampler = new Sampler({
      judge,
      produced: () => producer!.produced(),
      checkpoints: () => health?.completedCheckpoints,
      samplesPath: run.path('samples.jsonl'),
      intervalMs: campaign.oracle.sampleIntervalS * 1000,
      deadlineMs: campaign.deadlines.sampleStuckS * 1000,
    });
    sampler.start();
    resources = new ResourceSampler({
      rig,
      remote,
      path: run.path('resources.jsonl'),
      intervalMs: campaign.oracle.sampleIntervalS * 1000,
      produced: () => producer?.total ?? 0,
      judged: () => judge?.tally.distinct ?? 0,
      listObjects: async () => (await judge!.store.list(prefix)).length,
      oracleObjects: () => judge?.objects ?? 0,
      oracleLastSampleAt: () => sampler?.last?.t,
    });
    resources.start();
    healthTimer = setInterval(() => void pollHealth(), 2000);

    // Gate.
    enterPhase('gate');
    gate = await runGate(campaign, engine, controller, () => producer!.total, () => sampler!.last?.objects ?? 0, () => health, abort.signal, log);
    run.writeJson('gate.json', gate);
    if (abort.signal.aborted) throw new QualError('ABORTED', abortReason ?? 'aborted');
    if (!gate.passed) {
      log('GATE FAILED: no soak');
    } else {
      log('gate passed: soak begins');
      // Soak.
      const soakStart = Date.now();
      soakStartMs = soakStart;
      enterPhase('soak', soakStart);
      await controller.run(soakStart);
      await sleep(soakStart + campaign.workload.soakS * 1000 - Date.now(), abort.signal);
      if (sampler.stuck) stuck = sampler.stuckError?.message;
    }
    if (abort.signal.aborted) throw new QualError('ABORTED', abortReason ?? 'aborted');

    // Drain: stop the input, heal everything, wait until all produced is committed.
    enterPhase('drain');
    await producer.stop();
    run.writeJson('produced.json', { perPartition: producer.produced() });
    log(`drain: input stopped at ${producer.total} events; healing everything`);
    await controller.healActive();
    await healAll(rig, remote);
    await engine.disarmFaultPoints();
    await sampler.stop();
    const drainDeadline = Date.now() + campaign.deadlines.drainS * 1000;
    const target = producer.total;
    while (!abort.signal.aborted) {
      const s = await sampler.sample(abort.signal);
      if (s.stuck) {
        stuck = sampler.stuckError?.message ?? 'a sample could not complete';
        break;
      }
      if (s.events >= target) {
        drainConverged = true;
        break;
      }
      if (Date.now() > drainDeadline) break;
      await sleep(2000, abort.signal);
    }
    log(drainConverged ? `drain converged: ${sampler.last?.events} of ${target} events committed` : `drain did NOT converge: ${sampler.last?.events} of ${target} committed`);
    if (abort.signal.aborted) throw new QualError('ABORTED', abortReason ?? 'aborted');
    if (drainConverged) {
      // Settle: with no input left, let the engine take two more checkpoints (the second
      // one's barrier comes after everything was committed: an idle barrier must commit
      // nothing), then stop it, so the judge's last sample and the recount read one
      // settled bucket.
      enterPhase('settle');
      const idle = await waitCheckpoints(engine, 2, Math.max(30_000, campaign.workload.checkpointIntervalS * 4000), abort.signal);
      if (idle === null) settleWarning = `no idle checkpoint completed within ${Math.max(30, campaign.workload.checkpointIntervalS * 4)} s after the drain; idle barriers were not exercised`;
      log(idle === null ? `settle: ${settleWarning}` : `settle: checkpoint ${idle} completed with no input left`);
      await pollHealth(); // the last checkpoints into checkpoints.jsonl while the coordinator still answers
      await engine.stop();
      log('settle: engine stopped; last sample of the settled bucket');
      const last = await sampler.sample(abort.signal);
      if (last.stuck) stuck = sampler.stuckError?.message ?? 'a sample could not complete';
    }
    if (abort.signal.aborted) throw new QualError('ABORTED', abortReason ?? 'aborted');
    oracleCounters = sampler.last?.counters ?? zeroCounters();
  } catch (err) {
    fatal = err;
    if (!abort.signal.aborted) {
      abortReason = `error: ${(err as Error).message}`;
      abort.abort();
    }
    log(`run interrupted: ${(err as Error).message}`);
  } finally {
    enterPhase('wrap-up');
    if (healthTimer) clearInterval(healthTimer);
    await controller.healActive().catch(() => {});
    await healAll(rig, remote).catch(() => {});
    await engine.disarmFaultPoints().catch(() => {});
    if (producer) {
      await producer.stop().catch(() => {});
      if (!existsSync(run.path('produced.json'))) run.writeJson('produced.json', { perPartition: producer.produced() });
    }
    await sampler?.stop().catch(() => {});
    await resources?.stop().catch(() => {});
    if (health) await pollHealth();
    // Evidence first: logs from every host, pending uploads, the input audit.
    try {
      const files = await engine.collectLogs(run.path('logs'));
      log(`collected ${files.length} engine log files`);
    } catch (err) {
      log(`could not collect engine logs: ${(err as Error).message}`);
    }
    await collectRigLogs(rig, remote, run).catch((err) => log(`could not collect rig logs: ${(err as Error).message}`));
    try {
      if (engine.startedUploads) {
        const started = await engine.startedUploads();
        const r = await countPendingUploads(rig.store, credentials, started);
        pendingUploads = r.pending;
        run.writeJson('pending-uploads.json', { started: started.length, ...r });
      } else if (engine.pendingUploads) {
        const r = await engine.pendingUploads(rig.store, credentials);
        pendingUploads = r.pending;
        run.writeJson('pending-uploads.json', r);
      }
    } catch (err) {
      log(`could not count pending uploads: ${(err as Error).message}`);
    }
    await engine.stop().catch((err) => log(`engine stop: ${(err as Error).message}`));
    judge?.close();
  }

  if (!abort.signal.aborted && producer) {
    try {
      const audit = await auditInput({ bootstrap: rig.kafka.bootstrap, topic, seed: campaign.seed, partitions: campaign.workload.partitions, keys: campaign.workload.keys, timeoutMs: 5 * 60_000 });
      run.writeJson('input-audit.json', audit);
      log(`input audit: ${audit.records} records, ${audit.clean ? 'clean' : `anomalies: ${audit.findings.slice(0, 3).join('; ')}`}`);
    } catch (err) {
      log(`input audit failed: ${(err as Error).message}`);
    }
    // The separate recount: its own process, from scratch.
    enterPhase('recount');
    log('recount: a separate process re-reads the settled bucket');
    const r = await runRecount(run.dir, Math.max(120, campaign.deadlines.recountS * 4) * 1000);
    if (r.ok) recount = JSON.parse(readFileSync(run.path('recount.json'), 'utf8')) as Recount;
    else recountError = r.error;
    enterPhase('report');
  }

  const verdict = decideVerdict({
    runId,
    subject: { campaign: campaign.name, seed: campaign.seed, engine: { name: engine.name, mutant }, revision: { revision: rev.revision, dirty: rev.dirty } },
    startedAt,
    endedAt: new Date().toISOString(),
    aborted: abort.signal.aborted,
    ...(abortReason ? { abortReason } : {}),
    gate,
    chaos,
    mandatoryPoints: engine.mandatoryFaultPoints.length ? engine.mandatoryFaultPoints : MANDATORY_FAULT_POINTS,
    oracle: oracleCounters,
    recount,
    ...(recountError ? { recountError } : {}),
    produced: producer?.total ?? 0,
    drainConverged,
    pendingUploads,
    ...(stuck ? { stuckOracle: stuck } : {}),
    ...(settleWarning ? { settleWarning } : {}),
    ...(chaos.some((c) => c.kind === 'store-tamper') ? { ledger: readLedger(run.path('ledger.jsonl')) } : {}),
    resources: readResources(run.path('resources.jsonl')),
    ...(soakStartMs !== undefined ? { soakStartMs } : {}),
  });
  run.writeJson('verdict.json', verdict);
  try {
    writeReports(run.dir);
  } catch (err) {
    log(`report failed: ${(err as Error).message}`);
  }
  process.off('SIGINT', onInt);
  process.off('SIGTERM', onTerm);
  process.off('SIGHUP', onHup);
  progress.end();
  await closeAllRemotes().catch(() => {});
  if (fatal && !(fatal instanceof QualError && fatal.code === 'ABORTED')) log(`the run ended early: ${(fatal as Error).message}`);
  return { runDir: run.dir, verdict };
}

/**
 * Waits until `n` more checkpoints than now have completed; returns the count then, or
 * null past the deadline (the coordinator's health may fail meanwhile: keep polling).
 */
async function waitCheckpoints(engine: Engine, n: number, timeoutMs: number, signal: AbortSignal): Promise<number | null> {
  const count = async () => (await engine.health().catch(() => undefined))?.completedCheckpoints;
  const deadline = Date.now() + timeoutMs;
  let start = await count();
  while (Date.now() < deadline && !signal.aborted) {
    const c = await count();
    if (start === undefined) start = c;
    else if (c !== undefined && c >= start + n) return c;
    await sleep(500, signal);
  }
  return null;
}

/**
 * The functional gate: each condition with its evidence, within the deadline. The gate
 * fault (a worker kill by default) is landed through the chaos controller like any other,
 * so it is in chaos.jsonl too.
 */
async function runGate(
  campaign: ResolvedCampaign,
  engine: Engine,
  controller: ChaosController,
  produced: () => number,
  objects: () => number,
  health: () => EngineHealth | undefined,
  signal: AbortSignal,
  log: (l: string) => void,
): Promise<GateResult> {
  const deadline = Date.now() + campaign.gate.deadlineS * 1000;
  const conditions: GateCondition[] = [];
  const waitUntil = async (name: string, probe: () => Promise<string | null>): Promise<boolean> => {
    let last = 'not seen';
    while (Date.now() < deadline && !signal.aborted) {
      try {
        const ev = await probe();
        if (ev !== null) {
          conditions.push({ name, passed: true, evidence: ev });
          log(`gate: ${name} — ${ev}`);
          return true;
        }
      } catch (err) {
        last = (err as Error).message;
      }
      await sleep(1000, signal);
    }
    conditions.push({ name, passed: false, evidence: `not shown within ${campaign.gate.deadlineS} s (${last})` });
    log(`gate: ${name} NOT shown`);
    return false;
  };
  const ok =
    (await waitUntil('input flowing', async () => (produced() > 0 ? `${produced()} events produced with acks=all` : null))) &&
    (await waitUntil('job running with completed checkpoints', async () => {
      const h = health();
      return h && h.running && h.completedCheckpoints >= 1 ? `epoch ${h.epoch}, ${h.completedCheckpoints} completed checkpoints, last #${h.lastCompletedCheckpointId} at ${h.lastCompletedAt}` : null;
    })) &&
    (await waitUntil('objects committed', async () => (objects() > 0 ? `${objects()} committed objects read by the oracle` : null))) &&
    (await waitUntil(`${engine.sinkFamily} confirmed from each worker's open-time log`, async () => {
      const lines = await engine.sinkOpenLines();
      const workers = new Set((await engine.processes()).filter((p) => p.role === 'worker').map((p) => p.host));
      const good = lines.filter((l) => l.line.includes(`family=${engine.sinkFamily}`));
      const hosts = new Set(good.map((l) => l.host));
      if (workers.size === 0 || [...workers].some((w) => !hosts.has(w))) return null;
      return [...hosts].sort().map((h) => `${h}: ${good.find((l) => l.host === h)!.line.trim()}`).join(' | ');
    }));
  if (ok) {
    const gateFault: PlannedFault = { id: 'g001', kind: campaign.gate.fault, atS: 0 };
    const outcome = await controller.runOne(gateFault);
    conditions.push({ name: 'a fault landed', passed: outcome.landed, evidence: outcome.landed ? `${gateFault.kind} ${gateFault.id} landed` : `did not land: ${outcome.reason ?? ''}` });
    conditions.push({
      name: 'a completed checkpoint after it',
      passed: outcome.recovered,
      evidence: outcome.recovered ? `next completed checkpoint ${outcome.recoveryS} s after the heal` : `no recovery: ${outcome.reason ?? ''}`,
    });
  }
  const names = ['input flowing', 'job running with completed checkpoints', 'objects committed', `${engine.sinkFamily} confirmed from each worker's open-time log`, 'a fault landed', 'a completed checkpoint after it'];
  for (const n of names) if (!conditions.some((c) => c.name === n)) conditions.push({ name: n, passed: false, evidence: 'not reached: an earlier condition failed' });
  return { passed: conditions.every((c) => c.passed), conditions };
}

/** Runs `clink-qual verify RUN_DIR` in its own process; it writes recount.json. */
function runRecount(runDir: string, timeoutMs: number): Promise<{ ok: boolean; error?: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(repoRoot, 'bin', 'clink-qual.ts'), 'verify', runDir, '--json'], { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-2000)));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      // verify exits 0 (clean) or 1 (findings); both wrote recount.json.
      if ((code === 0 || code === 1) && existsSync(path.join(runDir, 'recount.json'))) resolve({ ok: true });
      else resolve({ ok: false, error: `verify exited ${code}: ${err.trim().split('\n').slice(-3).join(' ')}` });
    });
  });
}

/** The rig's own service logs (Kafka, MinIO), tails, into logs/<host>/. */
async function collectRigLogs(rig: RigState, remote: (n: string) => ReturnType<typeof remoteFor>, run: RunDir): Promise<void> {
  for (const h of rig.hosts.filter((x) => x.roles.includes('broker') || x.roles.includes('store'))) {
    const r = remote(h.name);
    const out = await r.exec(`for f in ${shQuote(h.dataDir)}/services/*/out.log; do [ -f "$f" ] || continue; echo "=== $f"; tail -n 400 "$f"; done`, { check: false, timeoutMs: 30_000 });
    const dir = run.path(path.join('logs', h.name));
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'services.log'), out.stdout);
  }
}
