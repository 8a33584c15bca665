import { spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { DURATION_GRAMMAR, parseDurationOption, type Command } from '../../lib/cli.ts';
import { QualError } from '../../lib/errors.ts';
import type { PlannedFault } from '../../lib/evidence.ts';
import { repoRoot, runsDir } from '../../lib/paths.ts';
import { shQuote } from '../../rig/process.ts';
import { loadStoredRun } from '../../campaigns/replay.ts';
import { failingCounter, shrink, type CandidateRun } from '../../campaigns/shrink.ts';
import { RUN_ID_PATTERN } from '../../campaigns/runner/run-dir.ts';
import { EVIDENCE } from '../../lib/run-store.ts';

/** Seconds from `90`, `90s`, `45m`, `2h`. */
function positiveInt(v: unknown, what: string, dflt: number): number {
  if (v === undefined) return dflt;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new QualError('BAD_ARGUMENTS', `${what}: a whole number >= 1`);
  return n;
}

const command: Command = {
  name: 'campaign shrink',
  summary: "Shrink a FAILed run's schedule to a minimal one that still fails with the same counter",
  description: `Delta debugging (ddmin) over the FAILed run's faults, a composition's faults kept
together: each candidate replays the run (same seed, workload and mutant) with only the chosen
faults at their own times, and a soak that ends --margin after the last chosen fault
ends. A candidate still fails when its verdict is FAIL and its recount raises the counter
(default: the run's first raised recount counter). Each candidate is a child
'campaign run --replay RUN_DIR --faults ... --soak-s ... --run-id ...' whose output goes to
RUN_DIR/shrink/<candidate-run-id>.log.
With --rig-lock FILE each candidate takes the lock (flock) for itself alone and brings the
local rig up before and down after, so others can use the rig between candidates.
State: RUN_DIR/shrink/state.json records each candidate's run id and verdict; run the same
command again after an interrupt and it continues where it stopped. Results:
RUN_DIR/shrink/report.md ("the failure needs only these faults: ...") and minimal.yaml, a
campaign file with the minimal schedule ('campaign run' takes it).`,
  exitCodes: '0 minimal found, 2 stopped by the budget (the smallest failing schedule so far is written), 254 bad input (not a FAILed run), 255 internal error.',
  positionals: [{ name: 'RUN_DIR', description: 'a FAILed run (runs/<id>)', required: true }],
  options: {
    'max-runs': { type: 'string', valueName: 'N', description: 'At most N candidate runs in all, resumes included (default 12)' },
    'max-time': { type: 'string', valueName: 'DURATION', description: `At most this wall time in all, resumes included (${DURATION_GRAMMAR}; default 2h); a running candidate is finished` },
    counter: { type: 'string', valueName: 'NAME', description: "The counter a candidate must raise (default: the run's first raised recount counter)" },
    margin: { type: 'string', valueName: 'DURATION', description: `Soak kept after the last chosen fault ends (${DURATION_GRAMMAR}; default 45)` },
    'rig-lock': { type: 'string', valueName: 'FILE', description: 'Run each candidate under flock FILE with the local rig brought up and down around it' },
  },
  examples: ['clink-qual campaign shrink runs/flink-tamper-20261204T220122-cc59 --max-runs 8 --rig-lock /tmp/clink-qual-rig.lock'],
  async run({ values, positionals }) {
    const dir = positionals[0]!;
    // Every option is checked before anything is read or written (exit 254).
    const maxRuns = positiveInt(values['max-runs'], '--max-runs', 12);
    const maxTimeS = typeof values['max-time'] === 'string' ? parseDurationOption(values['max-time'], 'max-time') : 7200;
    const marginS = typeof values.margin === 'string' ? parseDurationOption(values.margin, 'margin') : 45;
    const stored = loadStoredRun(dir);
    let verdict: { verdict?: string; recount?: Record<string, number> };
    try {
      verdict = JSON.parse(readFileSync(path.join(dir, EVIDENCE.verdict.file), 'utf8')) as typeof verdict;
    } catch {
      throw new QualError('BAD_ARGUMENTS', `${dir}/verdict.json is missing or unreadable: only a finished FAILed run can be shrunk`);
    }
    if (verdict.verdict !== 'FAIL') throw new QualError('BAD_ARGUMENTS', `${dir} is ${verdict.verdict ?? 'without a verdict'}, not FAIL: nothing to shrink`);
    const counter = typeof values.counter === 'string' ? values.counter : failingCounter(dir);
    if (!counter) throw new QualError('BAD_ARGUMENTS', `${dir}: the recount raised no counter (a FAIL for another reason); give --counter`);
    if (!((verdict.recount?.[counter] ?? 0) > 0)) throw new QualError('BAD_ARGUMENTS', `${dir}: the recount did not raise ${counter}`);
    const lock = typeof values['rig-lock'] === 'string' ? values['rig-lock'] : undefined;
    const shrinkDir = path.join(dir, 'shrink');
    mkdirSync(shrinkDir, { recursive: true });
    // CLINK_QUAL_SHRINK_CLI: another executable taking the same arguments (the command's test uses a fake rig).
    const cli = process.env.CLINK_QUAL_SHRINK_CLI ?? path.join(repoRoot, 'clink-qual');
    let interrupted = false;
    const onInt = () => {
      interrupted = true;
      console.error('interrupt: the running candidate is aborted and will run again on the next shrink');
    };
    process.on('SIGINT', onInt);
    process.on('SIGTERM', onInt);

    const readRun = (runId: string): CandidateRun | null => {
      try {
        const v = JSON.parse(readFileSync(path.join(runsDir(), runId, EVIDENCE.verdict.file), 'utf8')) as { verdict: string; recount?: Record<string, number> };
        if (v.verdict === 'ABORTED') return null; // an interrupted candidate decides nothing
        return { verdict: v.verdict, counterValue: v.recount?.[counter] ?? 0 };
      } catch {
        return null;
      }
    };
    const runCandidate = async (runId: string, plan: PlannedFault[], soakS: number): Promise<CandidateRun | null> => {
      const args = ['campaign', 'run', '--replay', stored.dir, '--faults', plan.map((f) => f.id).join(','), '--soak-s', String(soakS), '--run-id', runId];
      const q = [cli, ...args].map(shQuote).join(' ');
      const [cmd, argv] = lock
        ? ['flock', [lock, 'bash', '-c', `${shQuote(cli)} rig up && ${q}; rc=$?; ${shQuote(cli)} rig down; exit $rc`]]
        : [cli, args];
      const out = createWriteStream(path.join(shrinkDir, `${runId}.log`));
      const child = spawn(cmd, argv as string[], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'], env: process.env });
      child.stdout.pipe(out, { end: false });
      child.stderr.pipe(out, { end: false });
      const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
      out.end();
      if (interrupted) throw new QualError('ABORTED', `interrupted during candidate run ${runId}; run the same command again to continue`);
      const got = readRun(runId);
      if (!got) console.error(`  candidate run ${runId} ended (exit ${code}) without a verdict; see ${path.join(shrinkDir, `${runId}.log`)}`);
      return got;
    };
    const newRunId = (k: number): string => {
      let id = `${stored.runId}-shrink-${k}`.slice(-128).replace(/^[^A-Za-z0-9]+/, '');
      while (existsSync(path.join(runsDir(), id))) id = `${id}x`;
      if (!RUN_ID_PATTERN.test(id)) throw new QualError('INTERNAL', `candidate run id ${id} is not a run id`);
      return id;
    };
    const t0 = Date.now();
    try {
      const st = await shrink({
        stored,
        dir: shrinkDir,
        counter,
        maxRuns,
        maxTimeS,
        marginS,
        newRunId,
        runCandidate,
        readRun,
        log: (l) => console.error(`[shrink ${Math.round((Date.now() - t0) / 1000)} s] ${l}`),
      });
      const r = st.result!;
      console.log(`\n${r.complete ? 'minimal' : `stopped (${r.stoppedBy})`}: ${r.minimal.join(' ')} of ${st.units.length} units; ${st.candidates.length} candidates, ${Math.round(st.spentS)} s in all`);
      console.log(`report: ${path.join(shrinkDir, 'report.md')}\nschedule: ${path.join(shrinkDir, 'minimal.yaml')}`);
      return r.complete ? 0 : 2;
    } finally {
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onInt);
    }
  },
};
export default command;
