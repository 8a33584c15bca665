import { existsSync, lstatSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Command } from '../../lib/cli.ts';
import { QualError } from '../../lib/errors.ts';
import { runsDir } from '../../lib/paths.ts';
import { formatRunsTable, latestTarget, listRuns, repairLatest } from '../../reports/runs-list.ts';

const command: Command = {
  name: 'runs',
  summary: 'List the stored runs (newest first): campaign, engine, seed, revision, verdict, duration, first finding',
  description: `Reads every run directory under the runs folder (runs/, or CLINK_QUAL_RUNS, or --runs-dir)
from its evidence alone: provenance.json (campaign, engine, seed, revision, start),
verdict.json (verdict, end, counters, reasons) and findings.jsonl (the first finding, as
"counter: detail"). A run without verdict.json (still going, or killed) shows NO VERDICT,
and its duration runs to its last sample or phase mark (marked +). A FAIL without
findings.jsonl shows its first reason instead.

A listing writes nothing. runs/latest, the symlink to the newest run, is set by
'campaign run' when a run starts; when it is missing or names another run than the newest,
runs says so on stderr, and --repair-latest points it at the newest (the one thing it
writes).

  clink-qual runs show ID    one run's summary (ID may be 'latest')
  clink-qual runs html       write runs/index.html and each run's report.html

With --json: {"schemaVersion": 1, "runsDir", "latest", "runs": [...]}, one object per run
with id (the directory's name), recordedId (the run id its evidence records), dir, campaign, engine, mutant, seed, revision, dirty, verdict (null without
verdict.json), exitCode, startedAt, endedAt, endedFrom, durationS, produced,
committedDistinct, counters, firstFinding, findings, reasons, failureClasses (safety, liveness,
coverage: the kinds of failure among the reasons), warnings, report, timeline.`,
  exitCodes: '0 listed (also when there are no runs), 254 bad arguments (--runs-dir not a directory), 255 internal error.',
  options: {
    json: { type: 'boolean', description: 'Print the runs as JSON' },
    'runs-dir': { type: 'string', valueName: 'DIR', description: 'The runs folder (default: CLINK_QUAL_RUNS, else runs/ in the checkout)' },
    'repair-latest': { type: 'boolean', description: 'Point runs/latest at the newest run when it is missing or names another (then list)' },
  },
  examples: ['clink-qual runs', 'clink-qual runs --json | jq -r \'.runs[] | select(.verdict == "FAIL") | .id\''],
  async run({ values }) {
    const root = (values['runs-dir'] as string | undefined) ?? runsDir();
    if (existsSync(root) && !statSync(root).isDirectory()) throw new QualError(values['runs-dir'] !== undefined ? 'BAD_ARGUMENTS' : 'BAD_INPUT_FILE', `${values['runs-dir'] !== undefined ? '--runs-dir: ' : ''}${root} is not a directory`);
    const runs = listRuns(root);
    if (values['repair-latest']) {
      // A runs/latest that is a real directory or file is not ours to replace: said, and the list still printed.
      let repaired: string | null;
      try {
        repaired = repairLatest(root, runs);
      } catch (err) {
        repaired = `${(err as Error).message} (runs/latest is the symlink 'campaign run' sets; move it away to let --repair-latest repair it)`;
      }
      if (repaired) console.error(`runs: ${repaired}`);
    } else {
      const stale = staleLatest(root, runs[0]?.id);
      if (stale) console.error(`runs: ${stale}${stale.endsWith('left alone') ? '' : "; 'clink-qual runs --repair-latest' points it at the newest"}`);
    }
    if (values.json) console.log(JSON.stringify({ schemaVersion: 1, runsDir: root, latest: latestTarget(root), runs }, null, 2));
    // On a terminal the first finding is cut to its width; piped, lines are whole.
    else console.log(formatRunsTable(runs, process.stdout.isTTY ? { width: process.stdout.columns || 160 } : { width: Infinity }));
  },
};
export default command;

/** What is wrong with root/latest, read only: missing, or naming another run than the newest (null: nothing). */
export function staleLatest(root: string, newest: string | undefined): string | null {
  const link = path.join(root, 'latest');
  try {
    if (!lstatSync(link).isSymbolicLink()) return `${link} exists and is not a symlink; left alone`;
  } catch {
    // absent: said below
  }
  const current = latestTarget(root);
  const resolves = existsSync(path.join(root, 'latest'));
  if (!newest) return current !== null && !resolves ? `latest names ${current}, which is gone` : null;
  if (current === null) return `there is no latest, and the newest run is ${newest}`;
  if (current !== newest || !resolves) return `latest names ${current}, not the newest run ${newest}`;
  return null;
}
