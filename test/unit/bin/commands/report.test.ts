/**
 * `report`: every published run under docs/qualification/ that carries its evidence renders
 * again byte for byte (`report --check`, through the CLI); `report` writes only into a run
 * directory and never rewrites a report from incomplete evidence; the diff summary.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { diffSummary } from '../../../../bin/commands/report.ts';
import { repoRoot } from '../../../../lib/paths.ts';

const cli = (args: string[]) => spawnSync(process.execPath, [path.join(repoRoot, 'bin', 'clink-qual.ts'), ...args], { cwd: repoRoot, encoding: 'utf8', timeout: 120_000 });

/** Every directory under docs/qualification/ (nested ones too) that holds a report.md. */
function publishedReports(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const p = path.join(dir, name);
      if (!statSync(p).isDirectory()) continue;
      if (existsSync(path.join(p, 'report.md'))) out.push(p);
      walk(p);
    }
  };
  walk(root);
  return out;
}

t.test('every published run with its evidence renders again byte for byte (report --check)', async (t) => {
  const dirs = publishedReports(path.join(repoRoot, 'docs', 'qualification'));
  t.ok(dirs.length > 0, 'docs/qualification has published reports');
  const skipped: string[] = [];
  let checked = 0;
  for (const dir of dirs) {
    const rel = path.relative(repoRoot, dir);
    const archived = rel.split(path.sep).includes('archive');
    const hasEvidence = existsSync(path.join(dir, 'chaos.jsonl')) || existsSync(path.join(dir, 'chaos.jsonl.gz'));
    if (archived) {
      // docs/qualification/archive/: runs published before their evidence had to be; not claimed (its README says so).
      skipped.push(rel);
      continue;
    }
    t.ok(hasEvidence, `${rel} carries its evidence (a run published without it belongs in docs/qualification/archive/)`);
    if (!hasEvidence) continue;
    const r = cli(['report', '--check', dir]);
    t.equal(r.status, 0, `${rel} reproduces:\n${r.stdout}${r.stderr}`);
    checked++;
  }
  t.ok(checked >= 3, `${checked} published runs checked`);
  if (skipped.length) t.comment(`skipped (archive/: published without their evidence): ${skipped.join(', ')}`);
});

t.test('report writes only into a run directory', async (t) => {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'cq-report-cmd-'));
  t.teardown(() => rmSync(tmp, { recursive: true, force: true }));
  const plain = path.join(tmp, 'plain');
  mkdirSync(plain);
  writeFileSync(path.join(plain, 'verdict.json'), '{"verdict":"PASS"}\n');
  const r = cli(['report', plain]);
  t.equal(r.status, 254);
  t.match(r.stderr, /is not a run directory: it has neither provenance\.json nor campaign\.resolved\.json/);
  t.same(readdirSync(plain), ['verdict.json'], 'nothing written');
});

t.test('report never rewrites a report from incomplete evidence', async (t) => {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'cq-report-cmd-'));
  t.teardown(() => rmSync(tmp, { recursive: true, force: true }));
  // a published run without its evidence, as docs/qualification/archive/flink-quick-6f2f46f is
  const docs = path.join(tmp, 'flink-quick-6f2f46f');
  cpSync(path.join(repoRoot, 'docs', 'qualification', 'archive', 'flink-quick-6f2f46f'), docs, { recursive: true });
  const before = { md: readFileSync(path.join(docs, 'report.md')), svg: readFileSync(path.join(docs, 'timeline.svg')) };
  const r = cli(['report', docs]);
  t.equal(r.status, 254);
  t.match(r.stderr, /report\.md was not rewritten: evidence is missing \([^)]*chaos\.jsonl[^)]*\)/);
  t.same(readFileSync(path.join(docs, 'report.md')), before.md, 'report.md kept');
  t.same(readFileSync(path.join(docs, 'timeline.svg')), before.svg, 'timeline.svg kept');
  t.notOk(existsSync(path.join(docs, 'junit.xml')), 'nothing written');

  // a run that lost one file after its report was written
  const run = path.join(tmp, 'run-pass');
  cpSync(path.join(repoRoot, 'test', 'fixtures', 'run-pass'), run, { recursive: true });
  rmSync(path.join(run, 'samples.jsonl'));
  const s = cli(['report', run]);
  t.equal(s.status, 254);
  t.match(s.stderr, /evidence is missing \(samples\.jsonl\)/);
  // without a report there, what is left is rendered (and named)
  rmSync(path.join(run, 'report.md'));
  const w = cli(['report', run]);
  t.equal(w.status, 0, w.stderr);
  t.match(w.stdout, /missing evidence: samples\.jsonl/);
  t.match(readFileSync(path.join(run, 'report.md'), 'utf8'), /Missing: `samples\.jsonl`\./);
});

t.test('diffSummary: the region between the common head and tail, with context, capped', async (t) => {
  const a = ['a', 'b', 'c', 'd', 'e', 'f'].join('\n');
  const b = ['a', 'b', 'C', 'd', 'e', 'f'].join('\n');
  t.equal(diffSummary('x.md', a, b, 1), ['--- committed/x.md', '+++ rendered/x.md', '@@ -2,3 +2,3 @@', ' b', '-c', '+C', ' d'].join('\n'));
  const long = Array.from({ length: 30 }, (_, i) => `l${i}`);
  const d = diffSummary('y.svg', 'head\n' + long.join('\n'), 'head\nother', 0, 5).split('\n');
  t.same(d.slice(2), ['@@ -2,30 +2,1 @@', '-l0', '-l1', '-l2', '-l3', '-l4', '-... 25 more lines', '+other']);
  t.equal(diffSummary('z', 'one\n', 'one\ntwo\n', 2), ['--- committed/z', '+++ rendered/z', '@@ -1,2 +1,3 @@', ' one', '+two', ' '].join('\n'), 'an added line');
});
