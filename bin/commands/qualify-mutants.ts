import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Command } from '../../lib/cli.ts';
import { QualError } from '../../lib/errors.ts';
import { repoRoot, runsDir } from '../../lib/paths.ts';
import { runCampaign } from '../../campaigns/runner/run.ts';
import { exposable, loadForEngine, mutantSchedule } from '../../campaigns/per-mutant.ts';
import { firstFinding, isCaught, killTableExit, killTableJson, renderKillTable, type KillRow } from '../../campaigns/runner/kill-table.ts';
import { raisedCounters } from '../../lib/evidence.ts';
import { mutantNamesHelp } from './help-lists.ts';
import { EVIDENCE } from '../../lib/run-store.ts';

const command: Command = {
  name: 'qualify-mutants',
  summary: 'Run a campaign once per engine mutant (quick.yaml by default) and expect each to be caught',
  description: `A harness that cannot fail proves nothing. For every deliberately broken variant
the engine ships (its mutants: mechanism and the counters that must catch it), this runs the
campaign with that mutant on the live rig and expects a FAIL with at least one of those
counters raised by the separate recount. First it runs the correct engine under the same
campaign (the control), which must PASS. It writes a kill table under runs/ (Markdown, and
the same as JSON beside it: mutants-<time>.md and .json) and
exits 1 if any mutant survives or the control does not pass (2 if interrupted: Ctrl-C
aborts the current run, heals its faults and stops the command). A surviving mutant is a defect
of the harness, not of the mutant. About 6 minutes per run with quick.yaml.

A campaign may give mutants short schedules of their own (perMutant, e.g.
campaigns/mutants.yaml, every mutant in one command): each mutant then runs its own faults
and soak, and the control runs the base schedule, which holds every fault they use.

${mutantNamesHelp()}`,
  exitCodes: '0 the control PASSed and every mutant was caught, 1 a mutant survived or the control did not pass, 2 interrupted or the environment stopped it, 254 bad arguments (an unknown mutant in --only), 255 internal error.',
  options: {
    campaign: { type: 'string', valueName: 'FILE', description: 'The campaign to run per mutant', default: 'campaigns/quick.yaml' },
    only: { type: 'string', valueName: 'A,B', description: 'Only these mutants (comma-separated)' },
    'no-control': { type: 'boolean', description: 'Skip the control run of the correct engine (by default it runs first and must PASS)' },
  },
  async run({ values }) {
    const file = path.resolve(repoRoot, String(values.campaign));
    const { engine, campaign } = loadForEngine(file);
    const only = typeof values.only === 'string' ? values.only.split(',').map((s) => s.trim()).filter(Boolean) : null;
    for (const n of only ?? []) if (!engine.mutants.some((m) => m.name === n)) throw new QualError('BAD_ARGUMENTS', `unknown mutant '${n}' (known: ${engine.mutants.map((m) => m.name).join(', ')})`);
    // A mutant is exposable by the schedule it will run: its own (perMutant) or the base one.
    for (const m of engine.mutants.filter((x) => (!only || only.includes(x.name)) && !exposable(campaign, x))) {
      const which = mutantSchedule(campaign, m.name) ? `its own schedule in ${path.relative(repoRoot, file)} (perMutant)` : path.relative(repoRoot, file);
      console.error(`skipping mutant ${m.name}: only ${m.exposedBy!.join(' or ')} exposes it, and ${which} schedules none (try --campaign campaigns/mutants.yaml or campaigns/unknowns.yaml)`);
    }
    const mutants = engine.mutants.filter((m) => (!only || only.includes(m.name)) && exposable(campaign, m));
    // One command on the rig at a time (exit 2 naming the holder); released when this process ends.
    (await import('../../rig/lock.ts')).acquireRigLock('qualify-mutants', { log: (l) => console.error(`rig lock: ${l}`) });
    const t0 = Date.now();
    const rows: KillRow[] = [];
    const runs = [...(values['no-control'] ? [] : [null]), ...mutants];
    for (const [i, m] of runs.entries()) {
      const label = m ? `mutant ${m.name}` : 'control (the correct engine)';
      console.error(`\n=== [${i + 1}/${runs.length}] ${label}: expect ${m ? `FAIL with ${m.caughtBy.join(' or ')}` : 'PASS'}`);
      const started = Date.now();
      const { runDir, verdict } = await runCampaign({ campaignFile: file, ...(m ? { mutant: m.name } : {}) });
      let samples = '';
      try {
        samples = readFileSync(path.join(runDir, EVIDENCE.samples.file), 'utf8');
      } catch {
        // no samples: the run ended before the soak
      }
      const row: KillRow = {
        mutant: m,
        verdict: verdict.verdict,
        raised: [...raisedCounters(verdict.recount), ...(verdict.tamper?.acceptedForeign ? [`acceptedForeign=${verdict.tamper.acceptedForeign}`] : [])],
        firstFinding: m ? firstFinding(samples, m.caughtBy) : null,
        ok: m ? isCaught(m, verdict) : verdict.verdict === 'PASS',
        runId: path.basename(runDir),
        wallS: Math.round((Date.now() - started) / 1000),
        ...(verdict.soakEndedEarly ? { soakEndedEarly: { endedAtS: verdict.soakEndedEarly.endedAtS, plannedS: verdict.soakEndedEarly.plannedS } } : {}),
      };
      rows.push(row);
      if (verdict.verdict === 'ABORTED') {
        // The user (or a signal) stopped the run: stop here instead of going on to the next mutant.
        console.error(`=== ${label}: ABORTED; the remaining ${runs.length - i - 1} run(s) are not started`);
        break;
      }
      console.error(`=== ${label}: ${m ? (row.ok ? 'caught' : 'SURVIVED') : row.ok ? 'passed' : 'CONTROL FAILED'} (${verdict.verdict}; ${row.raised.join(', ') || 'no counter raised'})`);
    }
    const table = renderKillTable({ campaign: path.relative(repoRoot, file), engine: engine.name, rows, wallS: Math.round((Date.now() - t0) / 1000) });
    const out = path.join(runsDir(), `mutants-${new Date().toISOString().replace(/[:.]/g, '-')}.md`);
    writeFileSync(out, table);
    const json = out.replace(/\.md$/, '.json');
    writeFileSync(json, JSON.stringify(killTableJson({ campaign: path.relative(repoRoot, file), engine: engine.name, rows, wallS: Math.round((Date.now() - t0) / 1000) }), null, 2) + '\n');
    console.log(table);
    console.log(`kill table: ${out} (and ${path.basename(json)})`);
    return killTableExit(rows);
  },
};
export default command;
