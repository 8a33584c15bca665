import type { Command } from '../../lib/cli.ts';
import { QualError } from '../../lib/errors.ts';
import { runsDir } from '../../lib/paths.ts';
import { findRun, formatRunSummary, isRunDir, readRunListing } from '../../reports/runs-list.ts';

const command: Command = {
  name: 'runs show',
  summary: "Print one stored run's summary (ID may be 'latest')",
  description: `Prints what 'clink-qual runs' knows of one run, in full: directory, campaign, engine
(and mutant), seed, revision (and whether the checkout had uncommitted changes), start, end,
duration, verdict and exit code, events produced and committed, the counters the recount
raised, every reason and warning from verdict.json, the findings in findings.jsonl and the
first of them, and where the report and the timeline are.

ID is a run directory's name under the runs folder, 'latest' (runs/latest, else the
newest run), or the path of a run directory anywhere. Nothing is written.

A live run (the rig lock's holder is running it: no verdict yet) is shown with its phase,
progress (events produced and committed, faults landed, checkpoints) and the soak's ETA,
from its own files.`,
  exitCodes: '0 printed (whatever the run\'s verdict: \'clink-qual report RUN_DIR\' exits with that), 254 no such run or bad arguments, 255 internal error.',
  positionals: [{ name: 'ID', description: 'A run id (a directory name under runs/), latest, or a run directory', required: true }],
  options: {
    json: { type: 'boolean', description: 'Print the summary as JSON (one object, as in runs --json)' },
    'runs-dir': { type: 'string', valueName: 'DIR', description: 'The runs folder (default: CLINK_QUAL_RUNS, else runs/ in the checkout)' },
  },
  examples: ['clink-qual runs show latest', 'clink-qual runs show unknowns-20261204T221219-46b6 --json', 'clink-qual runs show docs/qualification/unknowns-b970126'],
  async run({ values, positionals }) {
    const root = (values['runs-dir'] as string | undefined) ?? runsDir();
    const id = positionals[0]!;
    const run = findRun(root, id) ?? (id.includes('/') && isRunDir(id) ? readRunListing(id) : undefined);
    if (!run) throw new QualError('BAD_ARGUMENTS', `no run '${id}' under ${root} ('clink-qual runs' lists them)`);
    const { rigHolder } = await import('../../rig/lock.ts');
    const { readRunEvidence } = await import('../../reports/evidence.ts');
    const { isLiveRun, liveProgress } = await import('../../reports/live-run.ts');
    const holder = rigHolder();
    const ev = readRunEvidence(run.dir);
    const live = holder && isLiveRun(ev, holder) ? liveProgress(ev, holder, Date.now()) : undefined;
    if (values.json) console.log(JSON.stringify(live ? { ...run, live } : run, null, 2));
    else console.log(live ? `${formatRunSummary(run).replace(/\nreport {5}none \(write it: .*\)$/m, '\nreport     none yet (the run is live; its report is written when it ends)')}\n${live.join('\n')}` : formatRunSummary(run));
  },
};
export default command;
