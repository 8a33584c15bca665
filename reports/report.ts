/**
 * report.md: the qualification report of one run, written from its evidence files alone
 * (lib/evidence.ts), in the structure of QUAL-03 (../shared/QUAL-03.md): the claim and
 * the verdict, a lead paragraph, provenance, how it was measured, the workload, what the
 * engine survived, the measured outcome, claim boundaries, caveats and the raw evidence.
 *
 * Every figure is read from the run directory; none is written into this file. Missing
 * evidence (an aborted run) is named where it is missing. The output depends on nothing
 * but the evidence (no clock, no absolute path), so a stored run re-reported later gives
 * the same bytes.
 */
import { zombiesSection } from './zombies.ts';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { COUNTER_NAMES, type CounterName, type FailureClass, type FaultKind } from '../lib/evidence.ts';
import { checkpointTimes } from '../lib/checkpoint-clock.ts';
import { classifiedReasons, failureClasses } from '../lib/failure-class.ts';
import { FAULT_KINDS } from '../chaos/kinds.ts';
import { FAULT_SPECS } from '../chaos/kinds.ts';
import { EVIDENCE_DESCRIPTIONS, readRunEvidence, soakEndedEarly, type RunEvidence } from './evidence.ts';
import { compositionSummaries, faultOutcomes, isDecisive, pointCoverage, summaryByKind, unsyncedBytesLost, type FaultOutcome } from './faults.ts';
import { cell, fmtClock, fmtDuration, fmtEvidence, fmtInt, listWords, median, plural, secondsBetween, table } from './format.ts';
import { renderJunit } from './junit.ts';
import { attachFindings, findingsSection, type WithFindings } from './findings.ts';
import { resourcesSection } from './resources.ts';
import { seedComparisonSection } from './seed-comparison.ts';
import { claimUnderTest, storeDownDuringRecovery } from './claim.ts';
import { storeDefectsFor } from './store-defects.ts';
import { storeBitrotSection } from './store-bitrot.ts';
import { stateCorruptionSection } from './state-corruption.ts';
import { describeSampleErrorTiming, sampleErrorTiming } from './sample-errors.ts';
import { describeRehearsal } from './rehearsal.ts';
import { renderTimelineSvg } from './timeline-svg.ts';
import { EVIDENCE } from '../lib/run-store.ts';

const KIND_LABELS: Record<FaultKind, string> = Object.fromEntries(Object.entries(FAULT_SPECS).map(([k, spec]) => [k, spec.label])) as Record<FaultKind, string>;

const COUNTER_LABELS: Record<CounterName, { row: string; words: string }> = {
  duplicates: { row: 'Duplicates (an event id committed twice)', words: 'duplicates' },
  gaps: { row: "Gaps (a missing sequence below a partition's highest committed one)", words: 'gaps' },
  foreign: { row: 'Foreign records (outside the generated range, or not matching the seed)', words: 'foreign records' },
  corrupted: { row: 'Zero-byte or corrupted objects', words: 'zero-byte or corrupted objects' },
  mutations: { row: 'Committed objects changed or gone after being judged', words: 'mutated objects' },
  pastProduced: { row: 'Partitions committed past what the generator produced', words: 'partitions committed past what was produced' },
};

const MISSING = (file: string) => `Not available: \`${file}\` is not in the run directory.`;

interface Ctx {
  ev: RunEvidence;
  outcomes: FaultOutcome[];
  verdict: string;
  pass: boolean;
  engine: string;
  sink: string;
  produced?: number;
  distinct?: number;
  runS?: number;
}

function capital(s: string): string {
  return s ? s[0]!.toUpperCase() + s.slice(1) : s;
}

/** The run's last recorded moment on the harness's clock (a checkpoint at its harness time, lib/checkpoint-clock.ts). */
function lastStamp(ev: RunEvidence): string | undefined {
  const ms = [...ev.chaos.map((c) => Date.parse(c.t)), ...ev.samples.map((s) => Date.parse(s.t)), ...checkpointTimes(ev.checkpoints).ms].filter((t) => Number.isFinite(t));
  return ms.length ? new Date(Math.max(...ms)).toISOString() : undefined;
}

/** The store the run ran against: provenance.json's store, or (a run recorded before a campaign could choose) its store-like component. */
function storeComponent(ev: RunEvidence): { name: string; version: string; drives?: number } | undefined {
  const p = ev.provenance;
  if (p?.store) return p.store;
  return p?.components.find((c) => /minio|seaweed|versity|s3/i.test(c.name));
}

/** The store's name, version and (when provenance.json records it) MinIO's drive layout: "minio V, erasure-coded on 4 drives". */
export function storeWithLayout(store: { name: string; version: string; drives?: number }): string {
  const layout = store.drives === undefined ? '' : store.drives > 1 ? `, erasure-coded on ${store.drives} drives` : ', single drive';
  return `${store.name} ${store.version}${layout}`;
}

function countersPhrase(c: Record<CounterName, number> | undefined): string {
  if (!c) return 'no counters recorded';
  return listWords(COUNTER_NAMES.map((n) => `${c[n] === 0 ? 'zero' : fmtInt(c[n])} ${COUNTER_LABELS[n].words}`));
}

/** The recount's counters as the verdict judges the engine: the harness's own tampering (store-tamper faults) taken out. */
function engineRecountCounters(ev: RunEvidence): Record<CounterName, number> | undefined {
  return ev.verdict?.recount ?? ev.recount?.counters;
}

function harnessMutationWords(ev: RunEvidence): string {
  const n = ev.verdict?.tamper?.harnessMutations.recount ?? 0;
  return n > 0 ? ` (and ${plural(n, 'mutated object')} that the harness's own store-tamper faults changed, reported apart)` : '';
}

/** The bundled engine's sink, as the lead describes it when the provenance names no other mechanism. */
const CLINK_SINK_MECHANISM = 'it buffers a checkpoint interval of records, stages them as multipart parts at the barrier, and makes the object visible with CompleteMultipartUpload only after the checkpoint is durable.';

/**
 * The engine's own words on how it tells its object from another after NoSuchUpload
 * (Engine.commitCheck, in provenance). Runs recorded before the field existed were Clink's
 * when the engine was named clink, so they keep the sentence they were rendered with.
 */
function commitCheckClause(engine: { name: string; commitCheck?: string } | undefined): string {
  const check = engine?.commitCheck ?? (engine?.name === 'clink' ? "Clink checks the object's ETag, size and its own token in the metadata" : undefined);
  return check ? ` (${check})` : '';
}

/**
 * The verdict line of a run that did not PASS. A FAIL says which kinds of failure it is
 * (lib/failure-class.ts): safety (the engine shown wrong) before liveness before coverage,
 * "only" when one kind alone failed it.
 */
export function verdictHeadline(verdict: string, classes: readonly FailureClass[], why: string): string {
  if (verdict !== 'FAIL' || !classes.length) return `**Verdict: ${verdict}.** This run does not support the claim: ${why}.`;
  const kinds = classes.length === 1 ? `${classes[0]} only` : listWords([...classes]);
  if (classes.includes('safety')) {
    const also = classes.length > 1 ? ` (it also failed for ${listWords(classes.filter((c) => c !== 'safety'))})` : '';
    return `**Verdict: FAIL (safety).** The engine was shown wrong${also}: ${why}.`;
  }
  if (classes.includes('liveness')) {
    const cov = classes.includes('coverage') ? ', and the run did not reach everything it must exercise' : '';
    return `**Verdict: FAIL (${kinds}).** Nothing was shown wrong, but the run did not recover or settle within its deadlines${cov}, so it does not support the claim: ${why}.`;
  }
  return `**Verdict: FAIL (${kinds}).** Nothing was shown either way: the run did not reach everything it must exercise, so it does not support the claim: ${why}.`;
}

/**
 * What every restore does with the restored checkpoint's commits, as the engine declares it
 * (Engine.restoreRecommit, in provenance), so that the kill after the commit is not read as
 * the only repeated commit of the run; nothing when the engine declares nothing.
 */
function restoreRecommitSentence(x: Ctx): string {
  const r = x.ev.provenance?.engine.restoreRecommit;
  return r ? ` Those kills are not the only repeated commits: ${capital(x.engine)} declares that ${r}, so every restore in this run repeated commits as well.` : '';
}

function title(x: Ctx): string[] {
  const name = x.ev.campaign?.name ?? x.ev.provenance?.campaign ?? x.ev.dirName;
  const mutant = x.ev.provenance?.engine.mutant ?? x.ev.verdict?.engine?.mutant;
  const mutantWords = mutant && mutant !== 'none' ? ` (mutant run: sink mutant \`${mutant}\`, broken on purpose)` : '';
  const out = [`# ${name}${mutantWords}: exactly-once from Kafka into S3-compatible storage — ${x.verdict}`, ''];
  out.push(`**Claim under test.** ${claimUnderTest(capital(x.engine), x.sink, x.outcomes)}`);
  out.push('');
  const v = x.ev.verdict;
  if (x.pass) {
    out.push(`**Verdict: PASS** (exit code ${v!.exitCode}). The run supports the claim within the boundaries below.`);
    if (v!.warnings?.length) {
      out.push('', 'Warnings, from verdict.json (they do not fail the run, and nothing they name is counted as survived):', '');
      for (const w of v!.warnings) out.push(`- ${w}`);
    }
  } else {
    const why = v ? `the verdict is ${v.verdict} (exit code ${v.exitCode})` : 'the run left no verdict.json, so it is treated as ABORTED';
    const reasons = v ? classifiedReasons(v) : [];
    out.push(verdictHeadline(x.verdict, failureClasses(reasons), why));
    if (reasons.length) {
      out.push('', 'Reasons, from verdict.json, each with the kind of failure it is (safety: the engine shown wrong; liveness: not recovered or settled in time; coverage: nothing shown either way):', '');
      for (const r of reasons) out.push(`- ${r.reason} (${r.class})`);
    }
    if (v?.warnings?.length) {
      out.push('', 'Warnings, from verdict.json:', '');
      for (const w of v.warnings) out.push(`- ${w}`);
    }
    if (x.ev.missing.length) out.push('', `Evidence missing from the run directory: ${x.ev.missing.map((m) => `\`${m}\``).join(', ')}.`);
  }
  out.push('');
  return out;
}

/** The lead's first sentence for a run that did not PASS: what failed, by kind, the first reason of the gravest kind. */
function failedFirst(v: NonNullable<RunEvidence['verdict']>): string {
  const reasons = classifiedReasons(v);
  const classes = failureClasses(reasons);
  const gravest = classes[0];
  const first = reasons.find((r) => r.class === gravest)?.reason;
  const more = reasons.length - 1;
  const what = gravest === 'safety' ? 'the engine was shown wrong' : gravest === 'liveness' ? 'nothing was shown wrong, but the run did not recover or settle in time' : gravest === 'coverage' ? 'nothing was shown either way' : 'it did not pass';
  return `This run ${v.verdict === 'FAIL' ? 'FAILED' : `ended ${v.verdict}`}: ${what}${first ? ` (${first}${more > 0 ? `; ${plural(more, 'more reason')} above` : ''})` : ''}.`;
}

function lead(x: Ctx): string[] {
  const { ev } = x;
  const soak = ev.campaign?.workload.soakS;
  const hosts = ev.provenance?.rig.hosts.length;
  const parts: string[] = [];
  parts.push(
    `Object storage has no transaction manager to lean on: no key that refuses a second copy, no list of prepared transactions to reconcile. Whether an event lands once depends only on the engine: ${ev.provenance?.engine.sinkMechanism ?? CLINK_SINK_MECHANISM}`,
  );
  const v = ev.verdict;
  const failed = v !== undefined && v.verdict !== 'PASS' && v.verdict !== 'ABORTED';
  if (failed) parts.unshift(failedFirst(v));
  const faults = x.outcomes.filter((o) => o.status === 'survived').length;
  const rig = hosts !== undefined ? `${/^(8\d*|11|18)$/.test(String(hosts)) ? 'an' : 'a'} ${hosts}-host ${ev.provenance!.rig.kind} rig plus the operations host` : 'a rig not recorded in provenance.json';
  const early = soakEndedEarly(ev);
  const soakWords = early ? `${fmtDuration(early.endedAtS)} of a planned ${fmtDuration(early.plannedS)}` : soak !== undefined ? fmtDuration(soak) : 'an unrecorded time';
  const runWords = x.runS !== undefined ? fmtDuration(x.runS) : 'an unknown time';
  const finished = ev.verdict !== undefined && ev.verdict.verdict !== 'ABORTED';
  parts.push(
    finished && failed
      ? `The run kept that pipeline under faults for ${soakWords} of soak (${runWords} from start to verdict) on ${rig}; ${plural(faults, 'fault')} landed and ${faults === 1 ? 'was' : 'were'} recovered from, which does not make up for what failed.`
      : finished
      ? `This run kept that pipeline under faults for ${soakWords} of soak (${runWords} from start to verdict) on ${rig}, and ${plural(faults, 'fault')} landed and ${faults === 1 ? 'was' : 'were'} recovered from.`
      : `This run was to keep that pipeline under faults for ${soakWords} of soak on ${rig}, but it stopped ${runWords} after it started; by then ${plural(faults, 'fault')} had landed and been recovered from.`,
  );
  if (early) parts.push(`The soak ended early because the mutant was already caught (${early.counter} = ${fmtInt(early.value)}); "What the engine survived" says when and which faults were not started.`);
  if (ev.recount) {
    parts.push(
      `After the drain, a separate process re-read the settled bucket from scratch: ${fmtInt(x.produced)} events produced, ${fmtInt(x.distinct)} distinct events committed, with ${countersPhrase(engineRecountCounters(ev))}${harnessMutationWords(ev)}.`,
    );
  } else {
    parts.push('No recount was made (recount.json is missing), so nothing here is certified by a fresh re-read.');
  }
  return [parts.join(' '), '', '![Committed and produced events over time, fault windows by kind, and completed checkpoints](timeline.svg)', ''];
}

/** The Engine row's clause naming the job profile deployed (provenance.json engine.jobProfile); nothing for a plug with one job. */
function jobProfileClause(jobProfile: string | undefined): string {
  return jobProfile ? `; job profile: \`${jobProfile}\` (described under Claim boundaries)` : '';
}

function provenance(x: Ctx): string[] {
  const { ev } = x;
  const p = ev.provenance;
  const out = ['## Provenance', ''];
  if (!p) return [...out, MISSING(EVIDENCE.provenance.file), ''];
  const v = ev.verdict;
  const sinkCond = ev.gate?.conditions.find((c) => /sink/i.test(c.name));
  const rows: unknown[][] = [
    ['Campaign run', `${p.runId} — campaign \`${p.campaign}\`, seed \`${p.seed}\``],
    ['Duration', x.runS !== undefined ? `${fmtDuration(x.runS)} (${v?.startedAt ?? p.startedAt} → ${v?.endedAt ?? lastStamp(ev) ?? 'n/a'})` : `started ${p.startedAt}, end not recorded`],
    [
      'Engine',
      p.engine.version
        ? `${p.engine.name} ${p.engine.version} (pinned and checked below), driven by the harness and its engine plug at revision \`${p.engine.revision}\`${p.engine.dirty ? ' (with uncommitted changes)' : ''}; sink mutant: ${p.engine.mutant ?? 'none'}${jobProfileClause(p.engine.jobProfile)}`
        : `${p.engine.name} at revision \`${p.engine.revision}\`${p.engine.dirty ? ' (with uncommitted changes)' : ''}; sink mutant: ${p.engine.mutant ?? 'none'}${jobProfileClause(p.engine.jobProfile)}`,
    ],
    [
      'Sink',
      sinkCond
        ? `\`${p.engine.sink}\`, ${sinkCond.passed ? 'confirmed' : 'NOT confirmed'} from the workers' open-time log before the soak: ${sinkCond.evidence}`
        : `\`${p.engine.sink}\`, not confirmed: ${ev.gate ? 'the gate has no sink condition' : 'gate.json is missing'}`,
    ],
    [
      'Rig',
      `${p.rig.kind}: ${p.rig.hosts.length} hosts (${listWords(p.rig.hosts.map((h) => h.name))}) plus the operations host, which no fault targets${p.rig.operationsHost ? ` (${plural(p.rig.operationsHost.cores, 'core')}, ${fmtInt(p.rig.operationsHost.memoryMiB / 1024, 1)} GiB of memory${p.rig.kind === 'local' ? ', shared by every host of this rig' : ''})` : ''}`,
    ],
    ['Harness', `node ${p.harness.node} on ${p.harness.platform}`],
  ];
  const store = storeComponent(ev);
  if (store) rows.splice(rows.length - 1, 0, ['Store', p.store ? `${storeWithLayout(store)} on the store host (the campaign's \`store\`)` : `${store.name} ${store.version} (the store component: this run's provenance.json names no store)`]);
  const replays = (p as { replays?: unknown }).replays;
  if (ev.rehearsal) rows.splice(1, 0, ['Rehearsal', describeRehearsal(ev.rehearsal, p.engine.revision)]);
  if (typeof replays === 'string') rows.splice(1, 0, ['Replay of', `run ${replays}: this run re-ran its stored schedule (campaign.resolved.json and plan.json; replay.json lists the faults kept) at the revision below`]);
  out.push(table(['Provenance', ''], rows), '');
  if (p.components.length) {
    out.push('Components, pinned and checked by sha256:', '');
    out.push(table(['Component', 'Version', 'sha256'], p.components.map((c) => [c.name, c.version, `\`${c.sha256.slice(0, 12)}\``])), '');
  }
  out.push('Rig hosts:', '');
  out.push(table(['Host', 'Address', 'Roles'], p.rig.hosts.map((h) => [h.name, h.address, h.roles.join(', ')])), '');
  return out;
}

function measured(x: Ctx): string[] {
  const { ev } = x;
  const c = ev.campaign;
  const out = ['## How the claim was measured', ''];
  out.push(
    `The oracle does not replay a recording. The generator is a pure function of the seed, the partition and the sequence number, so the oracle recomputes what each committed line must be and judges the bucket against that, reading only what a downstream consumer would read: it lists the bucket, fetches each object once when it first appears, and keeps an ETag ledger, so a committed object that later changes size or ETag, or disappears, is itself a finding. It sampled its running counters ${c ? `every ${fmtDuration(c.oracle.sampleIntervalS)}` : 'periodically'}; a sample unable to complete for ${c ? fmtDuration(c.deadlines.sampleStuckS) : 'the stuck-sample deadline'} would have failed the run as a stuck oracle.`,
  );
  out.push('');
  out.push(
    `Six failure modes are counted separately: ${listWords(COUNTER_NAMES.map((n) => COUNTER_LABELS[n].words))}. The verdict does not take the oracle's word for them: after the drain (input stopped, faults healed, everything produced committed or ${c ? `${fmtDuration(c.deadlines.drainS)} passed` : 'the drain deadline passed'}), the engine takes two more checkpoints with no input left (an idle barrier must commit nothing) and is stopped; then a separate process re-reads the settled bucket in full and counts again from nothing, and the two must agree.`,
  );
  out.push('');
  const points = x.outcomes.some((o) => o.kind === 'protocol-point');
  out.push(
    `The generator, the chaos controller and the oracle run on the operations host, which is outside the engine's failure domain: no fault targets it, so no fault can destroy the evidence needed to judge it.${points ? " Protocol-point faults are armed by name inside the engine's own code, so each kill lands at an exact protocol instant, not at a moment on the clock." : ''}`,
  );
  out.push('');
  out.push('### The functional gate', '');
  if (!ev.gate) return [...out, MISSING(EVIDENCE.gate.file), ''];
  out.push(
    `Nothing soaked until the gate ${ev.gate.passed ? 'had shown every condition below' : 'was passed — and it was not'}${c ? ` (deadline ${fmtDuration(c.gate.deadlineS)}, gate fault: ${c.gate.fault})` : ''}:`,
    '',
  );
  out.push(table(['Condition', 'Met', 'Evidence'], ev.gate.conditions.map((g) => [g.name, g.passed ? 'yes' : '**no**', g.evidence])), '');
  return out;
}

function workload(x: Ctx): string[] {
  const { ev } = x;
  const c = ev.campaign;
  const out = ['## Workload', ''];
  const b: string[] = [];
  b.push(`- ${fmtInt(x.produced)} input events produced${c ? ` (planned at ${fmtInt(c.workload.rate)} events/s)` : ''}`);
  if (c) b.push(`- ${plural(c.workload.partitions, 'partition')}, ${fmtInt(c.workload.keys)} distinct keys`);
  else if (ev.recount) b.push(`- ${plural(ev.recount.perPartition.length, 'partition')} (from the recount; campaign.resolved.json is missing)`);
  if (c) b.push(`- Checkpoint interval ${fmtDuration(c.workload.checkpointIntervalS)}: a commit window opens that often per subtask`);
  b.push(`- ${fmtInt(ev.checkpoints.length)} completed checkpoints observed`);
  if (ev.recount) b.push(`- ${fmtInt(ev.recount.objects)} objects committed (${fmtInt(ev.recount.bytes)} bytes, ${fmtInt(ev.recount.lines)} lines in the recount); ${fmtInt(ev.ledger.length)} in the oracle's ledger`);
  else b.push(`- ${fmtInt(ev.ledger.length)} objects in the oracle's ledger (no recount)`);
  b.push(`- ${fmtInt(ev.samples.length)} oracle samples over the run`);
  return [...out, ...b, ''];
}

function survived(x: Ctx): string[] {
  const { ev, outcomes } = x;
  const out = ['## What the engine survived', ''];
  if (!ev.plan && !ev.chaos.length) return [...out, MISSING(EVIDENCE.plan.file), MISSING(EVIDENCE.chaos.file), ''];
  const kinds = summaryByKind(outcomes).filter((k) => k.planned > 0);
  const rec = ev.campaign?.deadlines.recoveryS;
  const soakOutcomes = outcomes.filter((o) => o.planned !== undefined);
  const comps = compositionSummaries(soakOutcomes, ev.chaos);
  // chaos.jsonl files from before the composition records timed every step from the composition's last heal.
  const compsUnrecorded = comps.some((c) => c.recorded < c.runs);
  out.push(
    `A fault is counted only when it landed, with evidence that it did, and a completed checkpoint followed its heal${rec !== undefined ? ` within ${fmtDuration(rec)}` : ''}. Recovery time is from the fault's own heal to that checkpoint; the figures below are the soak's faults only (the gate asks the engine for its checkpoint once its fault healed, so its recovery is not timed against the engine's own cadence).${comps.length ? " A composition's row times the composition as a whole, from its last heal to the first completed checkpoint after it; its Survived column counts the runs in which every step landed and recovered." : ''}${compsUnrecorded ? " This run's chaos log has no composition record for some compositions (it predates them): their steps were timed from the composition's last heal, not their own, and the composition's own recovery is not recorded." : ''}`,
    '',
  );
  const early = soakEndedEarly(ev);
  if (early) out.push(soakEarlyParagraph(early), '');
  const span = (xs: number[]) => (xs.length ? `${fmtDuration(median(xs))} / ${fmtDuration(Math.max(...xs))}` : 'n/a');
  out.push(
    table(
      ['Fault', 'Planned', 'Landed', 'Survived (counted)', 'Recovery, median / max'],
      [
        ...kinds.map((k) => [KIND_LABELS[k.kind], k.planned, k.landed, k.survived, span(k.recoveryS)]),
        ...comps.map((c) => {
          const recovery = c.recorded === 0 ? 'not recorded' : `${span(c.recoveryS)}${c.recovered < c.recorded ? ` (${c.recorded - c.recovered} of ${c.recorded} did not recover)` : ''}`;
          return [`Composition ${c.name} (${c.kinds.join(' + ')}), as a whole`, c.runs, c.landed, c.survived, recovery];
        }),
      ],
    ),
    '',
  );
  const bad = outcomes.filter((o) => o.status !== 'survived');
  if (bad.length) {
    out.push(`Not counted as survived (${bad.length}):`, '');
    for (const o of bad) out.push(`- ${o.id} ${o.kind}${o.point ? ` at ${o.point}` : o.target ? ` on ${o.target}` : ''}${o.composition ? ` (${o.composition})` : ''}: ${o.status === 'heal failed' ? '**heal failed** (the fault may have stayed in force; the run cannot PASS)' : o.status}${o.detail ? ` — ${o.detail}` : ''}`);
    out.push('');
  } else {
    out.push(`Every one of the ${outcomes.length} planned faults landed and was recovered from.`, '');
  }

  out.push('### Protocol points', '');
  const cov = pointCoverage(ev, outcomes);
  if (!cov.points.length) out.push('No protocol point was scheduled.', '');
  else {
    const how = ev.provenance?.engine.faultPointInjection;
    const na = ev.provenance?.engine.faultPointsNotApplicable ?? {};
    const cells = (p: (typeof cov.points)[number]) => [`\`${p.point}\``, p.mandatory ? 'yes' : 'no', `${p.survived} of ${p.planned}`, p.survived > 0 ? 'yes' : na[p.point] ? '**no** (not applicable)' : '**no**'];
    out.push(
      how
        ? table(['Point', 'Mandatory', 'Kills landed and recovered', 'Covered', 'Injected at'], cov.points.map((p) => [...cells(p), how[p.point] ?? (na[p.point] ? `not applicable: ${na[p.point]}` : 'not recorded')]))
        : table(['Point', 'Mandatory', 'Kills landed and recovered', 'Covered'], cov.points.map(cells)),
      '',
    );
    const naList = Object.entries(na);
    if (naList.length) out.push(`Points this engine cannot reach, reported as not applicable and never counted as covered: ${naList.map(([p, why]) => `\`${p}\` (${why})`).join('; ')}.`, '');
    if (!cov.mandatoryKnown) out.push("provenance.json does not record the engine's mandatory points; the table lists the points the plan scheduled and those the verdict names as uncovered.", '');
    const uncovered = cov.points.filter((p) => p.mandatory && p.survived === 0).map((p) => `\`${p.point}\``);
    if (uncovered.length) out.push(`Mandatory points not covered: ${uncovered.join(', ')}. The run cannot pass without them.`, '');
    else if (cov.mandatoryKnown) out.push('Every mandatory point was covered: kills on either side of the prepare, on either side of the completed-checkpoint record, before the commit and after it.', '');
    const after = cov.points.find((p) => p.point === 'sink.after-commit');
    if (after && after.survived > 0)
      out.push(
        `The kill after the commit (${plural(after.survived, 'time')}) is the case only an idempotent commit survives: recovery completes again an upload the store has already finalised, and when the store answers that the upload is gone, the engine must find out whether the object there is its own instead of guessing${commitCheckClause(x.ev.provenance?.engine)}.${restoreRecommitSentence(x)}`,
        '',
      );
  }

  out.push('### Compositions', '');
  if (!comps.length) out.push('No composition was scheduled.', '');
  for (const c of [...comps].sort((a, b) => Number(isDecisive(b)) - Number(isDecisive(a)))) {
    if (isDecisive(c)) {
      out.push(
        `**${c.name}** is the decisive one: the store goes down, then a worker is killed, so the recovery has to complete restored upload handles against a store that does not answer, retry through restarts without deciding anything blind, and converge once the store is back. Scheduled ${plural(c.runs, 'time')}; every step landed and recovered in ${c.survived}; the worker kill landed while the store was still down in ${c.killDuringOutage}.`,
        '',
      );
    } else {
      out.push(`**${c.name}** (${c.kinds.join(' + ')}): scheduled ${plural(c.runs, 'time')}; every step landed and recovered in ${c.survived}.`, '');
    }
  }
  out.push(...tamperSection(x));
  out.push(...storeBitrotSection(x.ev));
  out.push(...stateCorruptionSection(x.ev));
  out.push(...zombiesSection(x.ev.zombies));
  return out;
}

/** The engine's reaction to each store-tamper fault, and the mutations the harness's own tampering caused (verdict.tamper). */
function tamperSection(x: Ctx): string[] {
  const t = x.ev.verdict?.tamper;
  if (!t) return [];
  const out = ['### Store tampering', ''];
  out.push(
    'A foreign writer (the harness) tampered with committed objects under the prefix. The correct reaction, when the engine meets one at a key it re-completes, is a loud integrity stop; accepting it as its own fails the run. Mutations the oracle saw on the tampered keys inside the tamper window are the harness\'s and are not counted against the engine.',
    '',
  );
  out.push(table(['Fault', 'Variant', 'Key', 'Engine reaction'], t.reactions.map((r) => [r.faultId, r.variant, r.keys.map((k) => `\`${k}\``).join(', '), r.reaction === 'accepted' ? '**accepted (took it as its own)**' : (r.reaction ?? 'not healed')])), '');
  out.push(`Harness-caused mutations reported apart: ${t.harnessMutations.oracle} seen by the oracle, ${t.harnessMutations.recount} by the recount.`, '');
  return out;
}

function outcome(x: Ctx): string[] {
  const { ev } = x;
  const out = ['## Measured outcome', ''];
  const r = ev.recount;
  const v = ev.verdict;
  const last = ev.samples[ev.samples.length - 1];
  // Both columns on the verdict's basis: the engine's (verdict.json's oracle and recount
  // counters have the harness's own store-tamper mutations taken out); without a verdict,
  // both are the raw counts.
  const oracle = v?.oracle ?? last?.counters;
  const recounted = r ? engineRecountCounters(ev) : undefined;
  const agree = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined ? 'n/a' : a === b ? 'yes' : '**no**');
  const rows: unknown[][] = [
    ['Events produced', fmtInt(x.produced), fmtInt(last?.produced), ''],
    ['Distinct events committed', fmtInt(r?.distinctEvents), fmtInt(v?.committedDistinct ?? last?.events), agree(r?.distinctEvents, v?.committedDistinct ?? last?.events)],
    ['Objects', fmtInt(r?.objects), fmtInt(last?.objects), agree(r?.objects, last?.objects)],
    ...COUNTER_NAMES.map((n) => [COUNTER_LABELS[n].row, fmtInt(recounted?.[n]), fmtInt(oracle?.[n]), agree(recounted?.[n], oracle?.[n])]),
  ];
  out.push(table(['Property', 'Recount (fresh full re-read)', 'Oracle (running)', 'Agree'], rows), '');
  const harness = v?.tamper?.harnessMutations;
  if (harness && (harness.oracle > 0 || harness.recount > 0)) {
    out.push(
      `The counters above are the engine's: the mutations the harness's own store-tamper faults caused are taken out of both columns and shown apart here: ${fmtInt(harness.recount)} in the recount (${fmtInt(r?.counters.mutations)} counted in all), ${fmtInt(harness.oracle)} seen by the oracle.`,
      '',
    );
  }
  if (!r) out.push(MISSING(EVIDENCE.recount.file), '');
  const a = ev.inputAudit;
  if (a) {
    out.push(
      a.clean
        ? `The input was audited apart from the engine: the topic read back in full held ${fmtInt(a.records)} records, with no duplicate, no hole and no line that differs from the seed, so no finding (if any) comes from the input${(ev as WithFindings).storeLoss ? "; the collected logs show the store's own loss of data (see Findings), so not every finding is the engine's" : ": each is the engine's"}.`
        : `The input audit found anomalies in the topic itself, reported apart from the engine's findings: ${fmtInt(a.duplicates)} duplicate, ${fmtInt(a.holes)} missing, ${fmtInt(a.mismatched)} mismatched and ${fmtInt(a.misplaced)} misplaced records out of ${fmtInt(a.records)} (${a.findings.slice(0, 3).join('; ')}).`,
      '',
    );
    if (a.tail) {
      out.push(
        `The audit tailed the topic from offset 0 while the run produced; when the run ended, ${fmtInt(a.tail.leftAtFinish)} records were left to read, read in ${fmtDuration(a.tail.finishMs / 1000)}${a.tail.reopened ? ` (its stream was re-opened ${plural(a.tail.reopened, 'time')}, each time from the next unread offset)` : ''}.`,
        '',
      );
    }
  }
  if (v) {
    out.push(
      `${v.recountAgrees ? 'The recount agrees with the oracle' : 'The recount does NOT agree with the oracle'}; the drain ${v.drainConverged ? 'converged: everything produced was committed before its deadline' : v.drainStalled ? `did not converge: it ${v.drainStalled}` : 'did not converge before its deadline'}.${r ? ` The recount took ${fmtDuration(r.durationS)}.` : ''}`,
      '',
    );
    if (r?.perPartition.length) {
      out.push(
        table(
          ['Partition', 'Produced', 'Distinct committed', 'Highest sequence'],
          r.perPartition.map((p) => [p.partition, fmtInt(p.produced), fmtInt(p.distinct), fmtInt(p.highestSeq)]),
        ),
        '',
      );
    }
  } else out.push(MISSING(EVIDENCE.verdict.file), '');
  return out;
}

/** Where the run ran, from provenance.json: a local rig's namespaces on one kernel and what they share, or an inventory's hosts. */
function rigWords(p: RunEvidence['provenance']): string {
  if (!p) return 'a rig not recorded (provenance.json is missing)';
  const n = p.rig.hosts.length;
  const ops = p.rig.operationsHost;
  if (p.rig.kind === 'local') {
    const shared = ops ? `${plural(ops.cores, 'core')}, ${fmtInt(ops.memoryMiB / 1024, 1)} GiB of memory and one disk` : 'one disk (core count not recorded)';
    return `a local rig: ${plural(n, 'network namespace')} on one kernel, with the operations host in the root namespace, all sharing ${shared}`;
  }
  if (p.rig.kind === 'inventory') return `${plural(n, 'inventory host')} plus the operations host${ops ? ` (${plural(ops.cores, 'core')}, ${fmtInt(ops.memoryMiB / 1024, 1)} GiB of memory)` : ''}`;
  return `a ${p.rig.kind} rig of ${plural(n, 'host')} plus the operations host`;
}

/** QUAL-03's Unknown classes, and the fault kinds whose landing shows each (docs/faults.md). */
const QUAL03_UNKNOWN: { words: string; shownBy: FaultKind[] }[] = [
  { words: 'disk corruption', shownBy: ['state-corruption', 'lost-unsynced-writes'] },
  { words: 'object-store data corruption', shownBy: ['store-bitrot'] },
  { words: 'clock steps', shownBy: ['clock-step'] },
];

function boundaries(x: Ctx): string[] {
  const { ev, outcomes } = x;
  const c = ev.campaign;
  const p = ev.provenance;
  const store = storeComponent(ev);
  const kinds = summaryByKind(outcomes);
  const survivedKinds = kinds.filter((k) => k.survived > 0).map((k) => `${k.kind} ×${k.survived}`);
  const downDuringRecovery = storeDownDuringRecovery(outcomes);
  const out = ['## Claim boundaries', '', 'In the honesty categories the qualification programme uses:', ''];
  const wl = c ? `${fmtInt(c.workload.rate)} events/s over ${plural(c.workload.partitions, 'partition')} and ${fmtInt(c.workload.keys)} keys with ${fmtDuration(c.workload.checkpointIntervalS)} checkpoints` : 'the workload above';
  const during = `${c ? fmtDuration(c.workload.soakS) : 'an unrecorded'} soak`;
  const rev = p ? `revision \`${p.engine.revision}\`` : 'an unrecorded revision';
  const storeWords = store ? storeWithLayout(store) : 'the rig\'s S3-compatible store (version not in provenance.json)';
  const rig = rigWords(p);
  if (x.pass) {
    out.push(
      `- **Demonstrated:** exactly-once from a Kafka source into \`${x.sink}\` under this battery (${survivedKinds.length ? survivedKinds.join(', ') : 'no fault landed and recovered'})${downDuringRecovery ? `, including ${plural(downDuringRecovery, 'store outage')} during a worker's recovery` : ''}, for ${wl}, through a ${during}, at ${rev}, against ${storeWords}, on ${rig}.`,
    );
  } else {
    out.push(`- **Demonstrated:** nothing. The verdict is ${x.verdict}, so this run cannot stand behind the claim, whatever else it shows. It ran on ${rig}.`);
  }
  const profile = p?.engine.profile;
  const jobProfile = p?.engine.jobProfile;
  out.push(
    `- **The engine as deployed${jobProfile ? ` (job profile \`${jobProfile}\`)` : ''}:** ${profile ? `${profile} Another job shape, state backend or failover strategy${jobProfile ? " (the plug's other job profiles included)" : ''} is not covered by this run.` : 'the engine plug recorded no profile of the job it deployed (provenance.json has none), so the job\'s shape is not stated here.'}`,
  );
  const recS = kinds.flatMap((k) => k.recoveryS);
  out.push(
    `- **Tested but bounded:** recovery liveness. ${recS.length ? `Each counted fault was followed by a completed checkpoint, the slowest after ${fmtDuration(Math.max(...recS))}` : 'No recovery was measured'}; that holds for this topology's restart pacing and the ${c ? fmtDuration(c.deadlines.recoveryS) : 'configured'} recovery deadline, not in general.`,
  );
  const defects = storeDefectsFor(store);
  out.push(
    defects.length
      ? `- **Known defects of this store** (${storeWords}), which a run against it may meet: ${defects.map((d) => `${d.id}: ${d.summary} (\`${d.doc}\`)`).join('; ')}.`
      : `- **Known defects of this store:** none of the harness's registry applies to ${storeWords}.`,
  );
  out.push(
    `- **Architecturally supported but not qualified:** the same guarantee against AWS S3 and managed S3-compatible services, whose answers to a repeated CompleteMultipartUpload and whose defects this run did not meet; ${p?.rig.kind === 'local' ? 'separate machines, with their own cores, disks and network; ' : ''}more than ${c ? plural(c.workload.partitions, 'partition') : 'the tested partitions'} or ${p ? plural(p.rig.hosts.filter((h) => h.roles.includes('worker')).length, 'worker') : 'the tested workers'}; runs longer than this one; other engines behind the same engine plug.`,
  );
  const unscheduled = FAULT_KINDS.filter((k) => !kinds.find((s) => s.kind === k && s.planned > 0));
  const landedOf = (k: FaultKind) => outcomes.filter((o) => o.kind === k && o.planned !== undefined && o.landedAt !== undefined);
  const landed = (k: FaultKind) => landedOf(k).length;
  // A crash that found every durable file at its synced length lost no write: it showed a crash, not lost writes.
  const cutNothing = landedOf('lost-unsynced-writes').filter((o) => unsyncedBytesLost(o.landedEvidence) === 0).length;
  const showing = (k: FaultKind) => (k === 'lost-unsynced-writes' ? landed(k) - cutNothing : landed(k));
  const shown = (u: (typeof QUAL03_UNKNOWN)[number]) => u.shownBy.filter((k) => showing(k) > 0);
  const unknown = QUAL03_UNKNOWN.filter((u) => shown(u).length === 0).map((u) => u.words);
  const notUnknown = QUAL03_UNKNOWN.filter((u) => shown(u).length > 0).map((u) => `${u.words} (${listWords(shown(u).map((k) => `${plural(showing(k), `${k} fault`)}${k === 'lost-unsynced-writes' ? ' that cut unsynced bytes' : ''}`))} landed in this run)`);
  const lookalikes = [
    ...(landed('disk-full') ? ['a full disk, which this run scheduled, is not disk corruption'] : []),
    ...(landed('store-tamper') ? ["an object changed through the S3 API, as this run's store-tamper faults did, is not corruption of the store's own data"] : []),
    ...(cutNothing ? [`${cutNothing === landed('lost-unsynced-writes') ? (cutNothing === 1 ? 'the' : `all ${cutNothing}`) : `${cutNothing} of the ${landed('lost-unsynced-writes')}`} lost-unsynced-writes fault${cutNothing === 1 && landed('lost-unsynced-writes') === 1 ? '' : 's'} that found every durable file at its last synced length (nothing written but not yet synced at the crash, so no write was lost: a crash, not lost writes)`] : []),
  ];
  out.push(
    `- **Unknown:** ${[
      ...(unknown.length ? [`the fault classes QUAL-03 names as Unknown that this run did not show (${listWords(unknown)})`] : []),
      ...(unscheduled.length ? [`the fault kinds this campaign did not schedule (${unscheduled.join(', ')})`] : []),
    ].join(', and ') || 'nothing QUAL-03 names as Unknown, and no fault kind this harness has, went unscheduled'}.${notUnknown.length ? ` No longer Unknown here: ${listWords(notUnknown)}.` : ''}${lookalikes.length ? ` Look-alikes that do not count: ${listWords(lookalikes)}.` : ''}`,
  );
  out.push('');
  return out;
}

/** "72h" → seconds (h, m, s suffixes); undefined when unparseable. */
function parseExpiry(s: string | undefined): number | undefined {
  const m = /^(\d+(?:\.\d+)?)(h|m|s)$/.exec(s ?? '');
  if (!m) return undefined;
  return Number(m[1]) * (m[2] === 'h' ? 3600 : m[2] === 'm' ? 60 : 1);
}

function caveats(x: Ctx): string[] {
  const { ev } = x;
  const c = ev.campaign;
  const v = ev.verdict;
  const out = ['## Caveats', ''];
  if (!v || v.verdict === 'ABORTED') {
    out.push(
      `- **The run was aborted**${v ? ` at ${v.endedAt}` : ''}: the evidence is incomplete${ev.missing.length ? ` (missing: ${ev.missing.map((m) => `\`${m}\``).join(', ')})` : ''}, and nothing in this report certifies the engine.`,
    );
  }
  out.push('- Correctness is claimed only for the workload, fault battery and duration above. It says nothing about other connectors, larger state or longer runs.');
  if (p(ev)?.engine.mutant && p(ev)!.engine.mutant !== 'none')
    out.push(`- This run deployed the sink mutant \`${p(ev)!.engine.mutant}\` on purpose: it qualifies the harness (does it catch the bug?), not the engine.`);
  if (p(ev)?.engine.dirty) out.push('- The engine revision had uncommitted changes when the run started; the revision alone does not identify the code that ran.');
  const hidden = ev.recount?.hiddenObjects;
  if (hidden)
    out.push(
      `- ${plural(hidden, 'object')} under the run's prefix had a hidden name (its last path segment starts with \`_\` or \`.\`: a writer's staging file, such as the unfinished tail of a part that Flink's S3 RecoverableWriter puts beside the output at a checkpoint) when the recount listed the settled bucket, and ${hidden === 1 ? 'was' : 'were'} left unjudged, as a downstream consumer that follows that convention leaves them. A consumer that reads every object would also read those.`,
    );
  if (v) {
    const expiryRaw = ev.provenance?.storeSettings?.MINIO_API_STALE_UPLOADS_EXPIRY;
    const expiryS = parseExpiry(expiryRaw);
    let fit = '';
    if (expiryS !== undefined && x.runS !== undefined) {
      fit =
        expiryS > x.runS
          ? ` — longer than this ${fmtDuration(x.runS)} run, so no pending upload that a durable checkpoint still referenced could be swept during it`
          : ` — **not** longer than this ${fmtDuration(x.runS)} run: a pending upload that a durable checkpoint still referenced could have been swept during it`;
    }
    const storeName = storeComponent(ev)?.name ?? '';
    const minio = /minio/i.test(storeName) || expiryRaw !== undefined;
    const seaweedfs = /seaweed/i.test(storeName);
    const expiry = expiryRaw
      ? `\`MINIO_API_STALE_UPLOADS_EXPIRY\`, set to ${expiryRaw} for this rig${fit}`
      : "`MINIO_API_STALE_UPLOADS_EXPIRY` (its value is not recorded in this run's provenance.json)";
    const pu = ev.pendingUploads;
    // A count that failed at the wrap-up (an unreadable journal, say) is no count: say so, not "0".
    if (pu?.error !== undefined) out.push(`- Multipart uploads left pending after the run were **not counted**: ${pu.error}. The run's figure of ${v.pendingUploads} is no measurement.`);
    else out.push(
      `- ${pu?.errors ? 'At least ' : ''}${plural(v.pendingUploads, 'multipart upload')} ${v.pendingUploads === 1 ? 'was' : 'were'} left pending after the run, counted ${pu?.method ? `by the engine plug: ${pu.method}` : "from the engine's own journal of started uploads, each key listed exactly"}${pu?.errors ? ` (the listing of ${plural(pu.errors, 'key')} failed, so this is a lower bound)` : ''}. They are expected, not defects: a worker killed after staging parts but before its checkpoint became durable leaves its upload incomplete, and an incomplete upload has no visible object, so no consumer can read it. They only cost storage until removed.${minio ? ` MinIO does not implement the \`AbortIncompleteMultipartUpload\` lifecycle rule that the sink's documentation would otherwise call for; it sweeps stale uploads itself once they are older than ${expiry}.` : ''}${seaweedfs ? ' The rig set no lifecycle rule on the SeaweedFS bucket; whether SeaweedFS removes stale uploads on its own was not measured (`docs/stores.md`).' : ''}`,
    );
  }
  const outages = x.outcomes.filter((o) => o.kind === 'store-outage' && o.planned !== undefined && o.landedAt !== undefined).length;
  out.push(
    outages
      ? `- The store was self-hosted so that its availability could be a scheduled fault (${plural(outages, 'store outage')} landed in this run): a managed service cannot be paused on command.`
      : '- The store was self-hosted; this run scheduled no store outage that landed, so nothing here shows the engine meeting an unavailable store.',
  );
  const timing = sampleErrorTiming(ev, x.outcomes);
  const withErr = ev.samples.filter((s) => (s.errors ?? 0) > 0);
  if (timing.errors > 0) {
    const examples = [...new Set(withErr.map((s) => s.lastError).filter((e): e is string => !!e))].slice(0, 3);
    out.push(
      `- The oracle met ${plural(timing.errors, 'transient store error')} in ${plural(timing.samples, 'sample')} (of ${fmtInt(ev.samples.length)}): ${describeSampleErrorTiming(timing)}${examples.length ? `; e.g. ${examples.map((e) => `\`${cell(e)}\``).join('; ')}` : ''}. Each was retried and the sample judged normally; an error lasting ${c ? fmtDuration(c.deadlines.sampleStuckS) : 'past the stuck-sample deadline'} would have failed the run as a stuck oracle.`,
    );
  } else if (ev.samples.length) {
    out.push(`- The oracle met no transient store errors in its ${plural(ev.samples.length, 'sample')}.`);
  }
  for (const u of ev.unreadable) out.push(`- Evidence that could not be read in full: ${u}.`);
  out.push('');
  return out;
}

/** A mutant's early soak end in plain words: when, why (the counter and the sample), and the faults it left not started. */
export function soakEarlyParagraph(e: NonNullable<ReturnType<typeof soakEndedEarly>>): string {
  const n = e.notStarted.length;
  const left = n === 0 ? 'No planned fault was left to start.' : `The ${plural(n, 'fault')} planned after that moment (${listWords(e.notStarted)}) ${n === 1 ? 'was' : 'were'} not started: ${n === 1 ? 'it is' : 'they are'} listed as not landed and ${n === 1 ? 'is' : 'are'} not counted as survived.`;
  return `The soak ended early, ${fmtDuration(e.endedAtS)} into its planned ${fmtDuration(e.plannedS)}: this run is a mutant's, and the oracle's sample at ${e.sampleT} showed ${e.counter} = ${fmtInt(e.value)}, a counter this mutant must raise, so the run was already shown wrong and the rest of the soak could only have delayed the verdict. The catch was seen ${fmtDuration(e.caughtAtS)} into the soak; every fault planned up to then had landed, been healed and had its recovery measured (or had not landed) before the soak ended. ${left} The drain, the settle and the separate recount ran as on any run.`;
}

function p(ev: RunEvidence) {
  return ev.provenance;
}

function faultLog(x: Ctx): string[] {
  if (!x.outcomes.length) return [];
  const out = [
    '## Fault log',
    '',
    "Every fault of the plan and what the chaos log says happened to it. Planned is the plan's time; Landed is when chaos.jsonl recorded the landing (both from the start of the soak; a minus sign is before it). Recovery is from the fault's own heal to the next completed checkpoint.",
    '',
  ];
  const clock = (s: number) => `${s < -0.5 ? '−' : ''}${fmtClock(Math.abs(s))}`;
  // Not landed because a mutant's soak ended early before its time (chaos/controller.ts stopWalk).
  const notStarted = new Set(x.ev.chaos.filter((r) => r.phase === 'not-landed' && r.evidence?.['notStarted'] === true).map((r) => r.faultId));
  out.push(
    table(
      ['Fault', 'Planned', 'Landed', 'Kind', 'Target / point', 'Composition', 'Outcome', 'Recovery', 'Landed evidence'],
      x.outcomes.map((o) => [
        o.id,
        o.planned ? clock(o.planned.atS) : '',
        o.landedS !== undefined ? clock(o.landedS) : o.landedAt ? 'no soak start' : '',
        o.kind,
        o.point ? `${o.point}${o.target && o.target !== 'coordinator' ? ` on ${o.target}` : ''}` : (o.target ?? ''),
        o.composition ?? '',
        notStarted.has(o.id) ? 'not started (the soak ended early)' : o.status,
        o.recoveryS !== undefined ? fmtDuration(o.recoveryS) : '',
        fmtEvidence(o.landedEvidence),
      ]),
    ),
    '',
  );
  return out;
}

function rawEvidence(x: Ctx): string[] {
  const { ev } = x;
  const out = ['## Raw evidence', '', `Everything above is read from these files in the run directory \`${ev.dirName}/\`; \`clink-qual report\` rewrites this report from them alone.`, ''];
  const rows: unknown[][] = [];
  const logs = new Map<string, { n: number; bytes: number }>();
  for (const f of ev.files) {
    const m = /^logs\/([^/]+)\//.exec(f.path);
    if (m) {
      const l = logs.get(m[1]!) ?? { n: 0, bytes: 0 };
      l.n++;
      l.bytes += f.size;
      logs.set(m[1]!, l);
    } else rows.push([`\`${f.path}\``, fmtInt(f.size), EVIDENCE_DESCRIPTIONS[f.path] ?? '']);
  }
  for (const [host, l] of logs) rows.push([`\`logs/${host}/\``, fmtInt(l.bytes), `${plural(l.n, 'log file')} collected from ${host}`]);
  out.push(table(['File', 'Bytes', 'What it holds'], rows), '');
  if (ev.missing.length) out.push(`Missing: ${ev.missing.map((m) => `\`${m}\``).join(', ')}.`, '');
  return out;
}

/** The report of the run in `runDir`, from its evidence alone. */
export function renderReport(runDir: string): string {
  return renderReportFrom(attachFindings(readRunEvidence(runDir), runDir));
}

export function renderReportFrom(ev: RunEvidence): string {
  const outcomes = faultOutcomes(ev);
  const v = ev.verdict;
  const produced = v?.produced ?? (ev.recount ? ev.recount.perPartition.reduce((n, q) => n + q.produced, 0) : ev.samples[ev.samples.length - 1]?.produced);
  const x: Ctx = {
    ev,
    outcomes,
    verdict: v?.verdict ?? 'ABORTED',
    pass: v?.verdict === 'PASS',
    engine: ev.provenance?.engine.name ?? ev.campaign?.engine.name ?? 'the engine',
    sink: ev.provenance?.engine.sink ?? 'its sink',
    ...(produced !== undefined ? { produced } : {}),
    ...((ev.recount?.distinctEvents ?? v?.committedDistinct) !== undefined ? { distinct: ev.recount?.distinctEvents ?? v!.committedDistinct } : {}),
    ...((() => {
      const s = secondsBetween(v?.startedAt ?? ev.provenance?.startedAt, v?.endedAt ?? lastStamp(ev));
      return s !== undefined ? { runS: s } : {};
    })()),
  };
  const parts = [
    ...title(x),
    // A FAIL explains itself first: what the recount found, where, and what it shares.
    ...findingsSection(ev),
    ...lead(x),
    ...provenance(x),
    ...measured(x),
    ...workload(x),
    ...survived(x),
    ...outcome(x),
    ...seedComparisonSection(ev, outcomes, x.produced, x.distinct),
    ...resourcesSection(ev),
    ...boundaries(x),
    ...caveats(x),
    ...faultLog(x),
    ...rawEvidence(x),
  ];
  return parts.join('\n').replace(/\n{3,}/g, '\n\n').trimEnd() + '\n';
}

/** Writes report.md, timeline.svg and junit.xml into the run directory; returns their paths. */
export function writeReports(runDir: string): { report: string; timeline: string; junit: string } {
  const ev = attachFindings(readRunEvidence(runDir), runDir);
  mkdirSync(runDir, { recursive: true });
  const files = { report: path.join(runDir, 'report.md'), timeline: path.join(runDir, 'timeline.svg'), junit: path.join(runDir, 'junit.xml') };
  writeFileSync(files.report, renderReportFrom(ev));
  writeFileSync(files.timeline, renderTimelineSvg(ev));
  writeFileSync(files.junit, renderJunit(ev));
  return files;
}
