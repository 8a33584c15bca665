import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Command } from '../../lib/cli.ts';
import { QualError } from '../../lib/errors.ts';
import { repoRoot, runsDir } from '../../lib/paths.ts';
import { loadForRun, runCampaign } from '../../campaigns/runner/run.ts';
import type { Sample } from '../../lib/evidence.ts';

const command: Command = {
  name: 'qualify-mutants',
  summary: 'Run the quick campaign once per sink mutant and expect each to be caught',
  description: `A harness that cannot fail proves nothing. For every deliberately broken variant
the engine ships (its mutants: mechanism and the counters that must catch it), this runs the
campaign with that mutant on the live rig and expects a FAIL with at least one of those
counters raised by the separate recount. It writes a kill table (Markdown) and exits 1 if
any mutant survives. A surviving mutant is a defect of the harness, not of the mutant.`,
  options: {
    campaign: { type: 'string', valueName: 'FILE', description: 'The campaign to run per mutant', default: 'campaigns/quick.yaml' },
    only: { type: 'string', valueName: 'A,B', description: 'Only these mutants (comma-separated)' },
  },
  async run({ values }) {
    const file = path.resolve(repoRoot, String(values.campaign));
    const { engine } = loadForRun(file);
    const only = typeof values.only === 'string' ? values.only.split(',').map((s) => s.trim()).filter(Boolean) : null;
    for (const n of only ?? []) if (!engine.mutants.some((m) => m.name === n)) throw new QualError('BAD_ARGUMENTS', `unknown mutant '${n}' (known: ${engine.mutants.map((m) => m.name).join(', ')})`);
    const mutants = engine.mutants.filter((m) => !only || only.includes(m.name));
    const t0 = Date.now();
    const rows: string[] = [];
    let survivors = 0;
    for (const m of mutants) {
      console.error(`\n=== mutant ${m.name}: expect ${m.caughtBy.join(' or ')}`);
      const { runDir, verdict } = await runCampaign({ campaignFile: file, mutant: m.name });
      const raised = Object.entries(verdict.recount).filter(([, v]) => v > 0).map(([k, v]) => `${k}=${v}`);
      const caught = verdict.verdict === 'FAIL' && m.caughtBy.some((c) => verdict.recount[c] > 0);
      if (!caught) survivors++;
      const first = firstFinding(path.join(runDir, 'samples.jsonl'), m.caughtBy);
      rows.push(`| ${m.name} | ${m.mechanism.replace(/\|/g, '/')} | ${verdict.verdict} | ${raised.join(', ') || 'none'} | ${first ?? 'after the drain (recount)'} | ${caught ? 'caught' : '**SURVIVED**'} | ${path.basename(runDir)} |`);
      console.error(`=== mutant ${m.name}: ${caught ? 'caught' : 'SURVIVED'} (${verdict.verdict}; ${raised.join(', ') || 'no counter raised'})`);
    }
    const wall = Math.round((Date.now() - t0) / 1000);
    const table = [
      `# Mutant kill table`,
      '',
      `Campaign: ${path.relative(repoRoot, file)}; engine ${engine.name}; ${mutants.length} mutants; wall time ${Math.floor(wall / 60)} min ${wall % 60} s.`,
      '',
      '| mutant | mechanism | verdict | counters raised (recount) | first finding | result | run |',
      '|---|---|---|---|---|---|---|',
      ...rows,
      '',
      survivors ? `${survivors} mutant(s) survived: the harness has a defect to fix.` : 'Every mutant was caught.',
      '',
    ].join('\n');
    const out = path.join(runsDir(), `mutants-${new Date().toISOString().replace(/[:.]/g, '-')}.md`);
    writeFileSync(out, table);
    console.log(table);
    console.log(`kill table: ${out}`);
    return survivors ? 1 : 0;
  },
};
export default command;

/** Seconds into the run of the first sample that showed one of the counters. */
function firstFinding(samplesPath: string, counters: readonly string[]): string | null {
  let text = '';
  try {
    text = readFileSync(samplesPath, 'utf8');
  } catch {
    return null;
  }
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    const s = JSON.parse(line) as Sample;
    const hit = counters.find((c) => (s.counters as Record<string, number>)[c]! > 0);
    if (hit) return `${s.elapsedS} s (${hit})`;
  }
  return null;
}
