/**
 * The campaign run: prepare (load, plan, rig, preflight, the run's store), then the phases
 * of campaigns/runner/phases.ts (deploy → gate → soak → drain → settle, wrap-up always,
 * recount, verdict) over one RunContext; every piece of evidence is written to
 * runs/<run-id>/ as it happens (lib/run-store.ts names the files).
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
import { spawnSync } from 'node:child_process';
import { appendFileSync, copyFileSync, existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ChaosController } from '../../chaos/controller.ts';
import { engineDescription, type Engine } from '../../engine/engine.ts';
import { loadEngine } from '../../engine/index.ts';
import { QualError } from '../../lib/errors.ts';
import type { Provenance, Verdict } from '../../lib/evidence.ts';
import { repoRoot, runsDir } from '../../lib/paths.ts';
import { RunStore } from '../../lib/run-store.ts';
import { describeRehearsal, readRehearsal } from '../../reports/rehearsal.ts';
import { pointLatest } from '../../reports/runs-list.ts';
import { installForEngine, readManifest } from '../../rig/install.ts';
import { closeAllRemotes, remoteFor } from '../../rig/ssh.ts';
import { readRigState, readStoreCredentials } from '../../rig/state.ts';
import { describeStoreLayout, MINIO_MULTI_DRIVE_ENV, STALE_UPLOADS_EXPIRY, storeDrivesOf, storeKindOf } from '../../rig/store.ts';
import type { RigState } from '../../rig/types.ts';
import { rigUp, switchStore } from '../../rig/up.ts';
import { inventoryNeedsOf } from '../inventory-needs.ts';
import { applyOverrides, describeOverrides, noOverrides, type OverriddenCampaign, type Overrides } from '../overrides.ts';
import { campaignForMutant, loadForEngine } from '../per-mutant.ts';
import { formatPlanJson, planCampaign } from '../plan.ts';
import { replaySchedule, type ReplayInput } from '../replay.ts';
import { RunContext, type RunInputs } from './context.ts';
import { decide, recount, RUN_PHASE_STEPS, wrapUp } from './phases.ts';
import { preflight } from './preflight.ts';
import { Progress } from './progress.ts';
import { checkRunId, newRunId } from './run-dir.ts';

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
  /** The finished rehearsal this run follows (a run directory): checked before anything is touched, recorded in rehearsal.json. */
  rehearsal?: string;
  /** --seed, --soak, --rate: applied to the loaded campaign before planning, recorded in campaign.resolved.json (not with replay). */
  overrides?: Overrides;
  /** Lines, each stamped and ending in a newline, that open run.log before the run's own (smoke's rig up, run before the run). */
  earlierLog?: readonly string[];
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

/**
 * Loads the campaign, checked against the engine's own fault points and mutants, as a run
 * of `mutant` (default: the file's engine.mutant) uses it: with that mutant's own schedule
 * when the file has one (perMutant), recorded under overrides.mutantSchedule
 * (campaigns/per-mutant.ts).
 */
export function loadForRun(file: string, plug?: Engine, mutant?: string): { campaign: OverriddenCampaign; engine: Engine } {
  const { campaign, engine } = loadForEngine(file, plug);
  return { campaign: campaignForMutant(campaign, mutant ?? campaign.engine.mutant), engine };
}

export async function runCampaign(opts: RunOptions): Promise<RunResult> {
  const run = await prepareRun(opts);
  const ctx = new RunContext(
    run,
    (c) =>
      new ChaosController({
        plan: run.plan,
        ctx: { rig: run.rig, remote: run.remote, engine: run.engine, credentials: run.credentials, checkpointIntervalMs: run.campaign.workload.checkpointIntervalS * 1000, recoveryDeadlineMs: run.campaign.deadlines.recoveryS * 1000, prefix: run.prefix, log: run.log },
        record: (r) => c.record(r),
        recoveryDeadlineS: run.campaign.deadlines.recoveryS,
        signal: c.signal,
      }),
    opts.signal,
  );
  try {
    for (const phase of RUN_PHASE_STEPS) await phase(ctx);
  } catch (err) {
    ctx.failWith(err);
  } finally {
    await wrapUp(ctx);
  }
  await recount(ctx);
  const verdict = decide(ctx);
  ctx.close();
  run.progress.end();
  await closeAllRemotes().catch(() => {});
  const fatal = ctx.out.fatal;
  if (fatal && !(fatal instanceof QualError && fatal.code === 'ABORTED')) run.log(`the run ended early: ${(fatal as Error).message}`);
  return { runDir: run.store.dir, verdict };
}

/**
 * Everything before the first phase: the campaign loaded and planned (or a stored run's
 * schedule replayed), the engine's own parts installed on its first use (Flink's), the rig found or brought up on the campaign's store (a running rig on
 * the other store switched after its preflight, then checked again), the preflight passed, the run's store
 * created with its campaign, plan and provenance. Nothing on the rig is touched before the
 * preflight, and a bad run id or mutant is refused before the rig is even looked at.
 */
export async function prepareRun(opts: RunOptions): Promise<RunInputs> {
  const progress = opts.progress ?? new Progress();
  // The harness's log: the terminal, and runs/<id>/run.log once the run directory exists (earlier lines are kept and written then).
  let runLog: string | undefined;
  const earlyLog: string[] = [...(opts.earlierLog ?? [])];
  const log = (l: string) => {
    progress.log(l);
    const line = `${new Date().toISOString()} ${l}\n`;
    if (runLog) appendFileSync(runLog, line);
    else earlyLog.push(line);
  };
  const replayed = opts.replay ? replaySchedule(opts.replay) : undefined;
  const loaded = replayed ? { campaign: replayed.campaign, engine: opts.engine ?? loadEngine(replayed.campaign.engine.name, replayed.campaign.engine.profile !== undefined ? { profile: replayed.campaign.engine.profile } : {}) } : loadForRun(opts.campaignFile, opts.engine, opts.mutant);
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
  const rehearsal = opts.rehearsal !== undefined ? readRehearsal(opts.rehearsal) : undefined;

  // The engine's own parts (Flink's jars, job and agent) are installed on its first use, before
  // any rig work, with rig install's progress lines; Clink needs none beyond the rig's own.
  await installForEngine(engine.name, (l) => log(`rig install: ${l}`));

  // The rig: from an inventory, the live local rig, or (smoke) a local rig brought up now,
  // running the campaign's store (a campaign resolved before stores could be chosen: MinIO).
  let rig: RigState;
  const storeKind = campaign.store ?? 'minio';
  const inventory = opts.inventory ?? (campaign.rig.kind === 'inventory' ? campaign.rig.file : undefined);
  if (inventory) rig = await rigUp({ inventory, store: storeKind, needs: inventoryNeedsOf(campaign, plan), log });
  else {
    try {
      rig = readRigState();
    } catch (err) {
      if (!opts.rigUpIfMissing) throw err;
      log('no rig is up: bringing up the local rig');
      rig = await rigUp({ store: storeKind, log });
    }
  }
  // Preflight (campaigns/runner/preflight.ts): SSH with pinned keys, then heal what a crashed
  // controller left (tagged rules, paused services) and check every service before the gate.
  // A rig on the other store, or MinIO on the other drive layout, is switched once the
  // preflight has passed, and checked again.
  let pre = await preflight(rig, (n) => remoteFor(rig.hosts.find((h) => h.name === n)!), log, { engine });
  const storeDrives = campaign.storeDrives ?? 1;
  if (storeKindOf(rig.store) !== storeKind || storeDrivesOf(rig.store) !== storeDrives) {
    log(`the campaign names store ${describeStoreLayout(storeKind, storeDrives)}; the rig runs ${describeStoreLayout(storeKindOf(rig.store), storeDrivesOf(rig.store))}`);
    rig = await switchStore(rig, storeKind, log, storeDrives);
    pre = await preflight(rig, (n) => remoteFor(rig.hosts.find((h) => h.name === n)!), log, { engine });
  }
  const credentials = readStoreCredentials(rig);
  const remote = (name: string) => {
    const h = rig.hosts.find((x) => x.name === name);
    if (!h) throw new QualError('INTERNAL', `no host ${name}`);
    return remoteFor(h);
  };

  const runId = opts.runId ?? newRunId(campaign.name + (mutant !== 'none' ? `-${mutant}` : ''));
  const store = new RunStore(path.join(runsDir(), runId), { fresh: true });
  runLog = store.path('runLog');
  appendFileSync(runLog, earlyLog.join(''));
  log(`run ${runId}: evidence in ${store.dir}`);
  // runs/latest names the newest run from its first second (`clink-qual runs` repairs it if this fails).
  try {
    pointLatest(runsDir(), runId);
  } catch (err) {
    log(`runs/latest not updated: ${(err as Error).message}`);
  }
  store.write('preflight', pre);
  const startedAt = new Date().toISOString();
  const topic = `cq-${runId}`.slice(0, 200);
  const prefix = `runs/${runId}/`;
  if (existsSync(opts.campaignFile)) copyFileSync(opts.campaignFile, store.path('campaignYaml'));
  if (replayed) {
    store.write('replay', replayed.record);
    log(`replaying ${replayed.record.replays}: ${replayed.record.faults.length} of its ${replayed.record.ofFaults} faults, soak ${campaign.workload.soakS} s`);
  }
  if (campaign.overrides) log(`overrides: ${describeOverrides(campaign.overrides)}`);
  const revision = gitRevision();
  if (rehearsal) {
    store.write('rehearsal', rehearsal);
    log(`rehearsal: ${describeRehearsal(rehearsal, revision.revision)}`);
  }
  store.write('campaign', {
    ...campaign,
    engine: { ...campaign.engine, mutant },
    runId,
    topic,
    oracle: { ...campaign.oracle, seed: campaign.seed, partitions: campaign.workload.partitions, keys: campaign.workload.keys, bucket: rig.store.bucket, prefix, endpoint: rig.store.endpoint, region: rig.store.region },
  });
  store.writeText('plan', formatPlanJson(plan));
  const manifest = readManifest();
  store.write('provenance', {
    runId,
    campaign: campaign.name,
    seed: campaign.seed,
    engine: { name: engine.name, revision: revision.revision, dirty: revision.dirty, sink: engine.sinkFamily, ...(mutant !== 'none' ? { mutant } : {}), faultPoints: [...engine.faultPoints], mandatoryFaultPoints: [...engine.mandatoryFaultPoints], ...engineDescription(engine) } as Provenance['engine'],
    components: manifest.components.map((c) => ({ name: c.name, version: c.version, sha256: c.sha256 })),
    rig: { kind: rig.kind, hosts: rig.hosts.map((h) => ({ name: h.name, address: h.address, roles: [...h.roles] })), operationsHost: operationsHostResources() },
    harness: { node: process.version, platform: `${process.platform} ${process.arch}` },
    startedAt,
    store: { name: storeKindOf(rig.store), version: rig.store.version, ...(storeKindOf(rig.store) === 'minio' ? { drives: storeDrivesOf(rig.store) } : {}) },
    ...(storeKindOf(rig.store) === 'minio' ? { storeSettings: { MINIO_API_STALE_UPLOADS_EXPIRY: STALE_UPLOADS_EXPIRY, ...(storeDrivesOf(rig.store) > 1 ? MINIO_MULTI_DRIVE_ENV : {}) } } : {}),
    ...(replayed ? { replays: replayed.record.replays } : {}),
  });
  return { runId, campaign, engine, mutant, plan, rig, credentials, remote, topic, prefix, startedAt, revision, store, progress, log };
}

/** This machine's logical cores and memory, as provenance.json records the operations host (on a local rig, every host shares them). */
export function operationsHostResources(): { cores: number; memoryMiB: number } {
  return { cores: os.availableParallelism(), memoryMiB: Math.round(os.totalmem() / 2 ** 20) };
}
