import { DURATION_GRAMMAR, parseDurationOption, type Command } from '../../lib/cli.ts';
import path from 'node:path';
import { QualError } from '../../lib/errors.ts';
import { loadStoredRun, type StoredRun } from '../../campaigns/replay.ts';
import type { PlannedFault } from '../../lib/evidence.ts';
import { runCampaign } from '../../campaigns/runner/run.ts';
import { OVERRIDE_OPTIONS, OVERRIDES_HELP, noOverrides, parseOverrides } from '../../campaigns/overrides.ts';
import { MAX_REPEAT, UNTIL_FAIL_DEFAULT_CAP, parseRepeat, repeatRuns, tallyLines } from '../../campaigns/runner/repeat.ts';
import { checkRunId } from '../../campaigns/runner/run-dir.ts';
import { runsDir } from '../../lib/paths.ts';
import { RunStore } from '../../lib/run-store.ts';
import { faultKindsHelp, mutantNamesHelp } from './help-lists.ts';
import { EVIDENCE } from '../../lib/run-store.ts';

const command: Command = {
  name: 'campaign run',
  summary: 'Run a campaign: gate, soak, drain, recount, report',
  description: `Runs the campaign on the live rig (rig up first, or --inventory FILE to deploy onto
real hosts). Every host must answer over SSH with its pinned host key before anything is
touched. Evidence goes to runs/<run-id>/ as the run goes: chaos.jsonl, samples.jsonl,
ledger.jsonl, logs/, run.log, recount.json, findings.jsonl, verdict.json, report.md,
timeline.svg, junit.xml.
Before the gate, a preflight heals what a crashed run left (iptables rules tagged clink-qual,
stopped services) and checks every service; what it healed goes to preflight.json.
Ctrl-C (SIGINT), SIGTERM and SIGHUP (a dropped SSH session) heal every active fault,
collect the logs and mark the run ABORTED.
The harness's own log goes to runs/<run-id>/run.log as well as the terminal.
--replay runs/<id> runs that run's exact stored schedule (campaign.resolved.json and
plan.json: seed, workload, mutant, fault times and targets) at the current revision;
no FILE then. The new run's replay.json and report name the run it replays.

${OVERRIDES_HELP}
With --replay, --seed and --rate are refused (a replay runs the stored ones), and --soak
shortens the replay's soak to at most the stored one (--soak-s is its old spelling).

--repeat N runs the campaign N times, each with a fresh run id (--run-id ID gives ID-1,
ID-2, ...), and stops early at the first ABORTED run. --until-fail repeats until a
verdict that is not PASS, at most --repeat N runs, else ${UNTIL_FAIL_DEFAULT_CAP}. Every repetition uses the
same seed (the file's, or --seed's): the same schedule and the same events, so what
varies is the system's own nondeterminism. Each run prints a one-line summary, then a
tally; the exit code is then the worst verdict's (FAIL, GATE_FAILED, UNKNOWN, ABORTED,
PASS, worst first).

${faultKindsHelp()}
${mutantNamesHelp()}`,
  exitCodes: '0 PASS, 1 FAIL or GATE_FAILED, 2 aborted/unknown, 254 bad input, 255 internal error.',
  positionals: [{ name: 'FILE', description: 'the campaign YAML (campaigns/quick.yaml, ...); none with --replay' }],
  options: {
    inventory: { type: 'string', valueName: 'FILE', description: 'Deploy onto the hosts of this inventory instead of the local rig' },
    mutant: { type: 'string', valueName: 'NAME', description: "Run a deliberately broken engine variant (see 'qualify-mutants --help')" },
    replay: { type: 'string', valueName: 'RUN_DIR', description: "Re-run a stored run's exact schedule (its campaign.resolved.json and plan.json)" },
    faults: { type: 'string', valueName: 'IDS', description: 'With --replay: keep only these faults of the stored plan (comma-separated ids, e.g. f002,f004), at their own times' },
    'soak-s': { type: 'string', valueName: 'DURATION', description: `With --replay, the old spelling of --soak: the replay's soak (${DURATION_GRAMMAR}; at most the stored one)` },
    rehearsal: { type: 'string', valueName: 'RUN_DIR', description: "The finished rehearsal this run follows (QUAL-03's order); checked before anything runs, recorded in rehearsal.json and named in the report's provenance" },
    'run-id': { type: 'string', valueName: 'ID', description: 'The run id (default: <campaign>-<YYYYMMDDTHHMMSS>-<4 hex>, e.g. unknowns-20261204T221219-46b6): A-Z a-z 0-9 . _ - only, and never one used before (exit 254)' },
    ...OVERRIDE_OPTIONS,
    repeat: { type: 'string', valueName: 'N', description: `Run it N times (1 to ${MAX_REPEAT}), each a fresh run id, the same seed; stop at the first ABORTED` },
    'until-fail': { type: 'boolean', description: `Repeat until a verdict that is not PASS (at most --repeat N runs, default ${UNTIL_FAIL_DEFAULT_CAP})` },
  },
  examples: [
    'clink-qual campaign run campaigns/quick.yaml',
    'clink-qual campaign run --replay runs/unknowns-20261204T221219-46b6',
    'clink-qual campaign run campaigns/quick.yaml --mutant commit-at-prepare',
    'clink-qual campaign run campaigns/quick.yaml --seed quick-7 --soak 20m --rate 500',
    'clink-qual campaign run campaigns/quick.yaml --until-fail --repeat 10',
    'clink-qual campaign run campaigns/qual03.yaml --rehearsal runs/qual03-smoke-20261204T063955-4032',
  ],
  async run({ values, positionals }) {
    const replayDir = typeof values.replay === 'string' ? values.replay : undefined;
    if (replayDir && positionals[0]) throw new QualError('BAD_ARGUMENTS', 'give either a campaign FILE or --replay RUN_DIR, not both');
    if (!replayDir && !positionals[0]) throw new QualError('BAD_ARGUMENTS', "missing argument FILE\nRun 'clink-qual campaign run --help' for usage.");
    // Every option is checked before anything runs (exit 254).
    // With --replay, --soak (or its old spelling --soak-s) shortens the replay's soak; --seed and --rate do not go with it.
    if (replayDir && values.soak !== undefined && values['soak-s'] !== undefined) throw new QualError('BAD_ARGUMENTS', '--soak and --soak-s are the same option with --replay: give one');
    const replaySoak = replayDir && values.soak !== undefined ? { value: values.soak, option: 'soak' } : { value: values['soak-s'], option: 'soak-s' };
    const overrides = parseOverrides(replayDir ? { ...values, soak: undefined } : values);
    if (replayDir && !noOverrides(overrides)) throw new QualError('BAD_ARGUMENTS', '--seed and --rate do not go with --replay: a replay runs the stored seed and rate (--soak shortens its soak)');
    const repeat = parseRepeat(values);
    const stored = replayDir ? loadStoredRun(replayDir) : undefined;
    const sub = replaySubset(stored, values.faults, replaySoak);
    const givenId = typeof values['run-id'] === 'string' ? values['run-id'] : undefined;
    const rehearsal = typeof values.rehearsal === 'string' ? values.rehearsal : undefined;
    const runIdOf = (i: number) => (givenId === undefined ? undefined : repeat ? `${givenId}-${i}` : givenId);
    if (repeat && givenId !== undefined) for (let i = 1; i <= repeat.count; i++) checkRunId(runIdOf(i)!, runsDir());
    // One command on the rig at a time (exit 2 naming the holder); released when this process ends.
    (await import('../../rig/lock.ts')).acquireRigLock('campaign run', { ...(givenId !== undefined && !repeat ? { runId: givenId } : {}), log: (l) => console.error(`rig lock: ${l}`) });
    const runOnce = (i: number) =>
      runCampaign({
        campaignFile: stored ? path.join(stored.dir, EVIDENCE.campaignYaml.file) : positionals[0]!,
        ...(stored ? { replay: { stored, ...sub } } : {}),
        ...(typeof values.inventory === 'string' ? { inventory: values.inventory } : {}),
        ...(typeof values.mutant === 'string' ? { mutant: values.mutant } : {}),
        ...(runIdOf(i) !== undefined ? { runId: runIdOf(i)! } : {}),
        ...(rehearsal ? { rehearsal } : {}),
        ...(noOverrides(overrides) ? {} : { overrides }),
      });
    if (!repeat) {
      const { runDir, verdict } = await runOnce(1);
      printVerdict(runDir, verdict);
      return verdict.exitCode;
    }
    const done: string[] = [];
    const result = await repeatRuns(
      repeat,
      async (i) => {
        const o = await runOnce(i);
        printVerdict(o.runDir, o.verdict);
        return o;
      },
      (line) => {
        done.push(line);
        console.log(`\n${line}`);
      },
    );
    console.log(`\n${done.join('\n')}`);
    for (const l of tallyLines(result)) console.log(l);
    return result.exitCode;
  },
};
export default command;

/** --faults and --soak (--soak-s) with --replay: a sub-schedule of the stored run (shrink candidates use them). */
function replaySubset(stored: StoredRun | undefined, faults: unknown, soakOption: { value: unknown; option: string }): { plan?: PlannedFault[]; soakS?: number } {
  const soak = soakOption.value;
  if (!stored) {
    if (faults !== undefined || soak !== undefined) throw new QualError('BAD_ARGUMENTS', '--faults and --soak-s go with --replay');
    return {};
  }
  const out: { plan?: PlannedFault[]; soakS?: number } = {};
  if (typeof faults === 'string') {
    const ids = faults.split(',').map((x) => x.trim()).filter(Boolean);
    const unknown = ids.filter((id) => !stored.plan.some((f) => f.id === id));
    if (!ids.length || unknown.length) throw new QualError('BAD_ARGUMENTS', `--faults: ${unknown.length ? `not in ${stored.runId}'s plan: ${unknown.join(', ')}` : 'no fault ids given'}`);
    out.plan = stored.plan.filter((f) => ids.includes(f.id));
  }
  if (typeof soak === 'string') out.soakS = parseDurationOption(soak, soakOption.option, { max: stored.campaign.workload.soakS, maxName: 'the stored soak' });
  return out;
}

/** The verdict's first line; a run that never reached its recount (aborted early) says so instead of "0 committed". */
export function verdictLine(verdict: { verdict: string; produced: number; committedDistinct: number; pendingUploads: number }, recounted: boolean): string {
  const committed = recounted ? `${verdict.committedDistinct} of ${verdict.produced} events committed (recount)` : `${verdict.produced} events produced, no recount (the run ended before it)`;
  return `${verdict.verdict}: ${committed}; ${verdict.pendingUploads} multipart uploads left pending`;
}

export function printVerdict(runDir: string, verdict: { verdict: string; reasons: string[]; warnings?: string[]; produced: number; committedDistinct: number; pendingUploads: number }): void {
  console.log(`\n${verdictLine(verdict, new RunStore(runDir).has('recount'))}`);
  for (const r of verdict.reasons) console.log(`  - ${r}`);
  for (const w of verdict.warnings ?? []) console.log(`  ! ${w}`);
  console.log(`report: ${runDir}/report.md`);
}
