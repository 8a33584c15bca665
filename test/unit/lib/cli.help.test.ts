/**
 * The CLI around the commands: --version, `help CMD`, did-you-mean with exit 254, exit codes
 * and the registries' names (mutants, fault kinds) in the help texts, `report RUN_DIR`
 * exiting with the run's verdict, and the wrapper's quiet first-run install (one line on
 * stderr, npm's output in a log, errors shown on failure).
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { FAULT_PACKAGES } from '../../../chaos/kinds.ts';
import { loadEngine } from '../../../engine/index.ts';
import { commands } from '../../../bin/commands/index.ts';
import { editDistance, renderHelp, suggestCommands } from '../../../lib/cli.ts';
import { repoRoot } from '../../../lib/paths.ts';

const cli = path.join(repoRoot, 'clink-qual');
const run = (args: string[], cwd = repoRoot) => spawnSync(cli, args, { cwd, encoding: 'utf8', timeout: 60_000 });

t.test('--version: the package version and the git revision', async (t) => {
  const r = run(['--version']);
  t.equal(r.status, 0);
  const version = (JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version;
  const rev = spawnSync('git', ['-C', repoRoot, 'rev-parse', '--short=12', 'HEAD'], { encoding: 'utf8' }).stdout.trim();
  t.match(r.stdout.trim(), new RegExp(`^clink-qual ${version.replace(/\./g, '\\.')} \\(revision ${rev}(-dirty)?\\)$`));
});

t.test('help CMD prints what CMD --help prints', async (t) => {
  const a = run(['help', 'rig', 'up']);
  const b = run(['rig', 'up', '--help']);
  t.equal(a.status, 0);
  t.equal(a.stdout, b.stdout);
  t.match(a.stdout, /^Usage: clink-qual rig up/);
});

t.test('did-you-mean', async (t) => {
  t.equal(editDistance('smoek', 'smoke'), 1, 'a transposition is one edit');
  t.equal(editDistance('kitten', 'sitting'), 3);
  t.same(suggestCommands(commands, ['docter']), ['doctor']);
  t.same(suggestCommands(commands, ['rig', 'stats']), ['rig status']);
  t.same(suggestCommands(commands, ['campain', 'run']), ['campaign run']);
  t.same(suggestCommands(commands, ['xyzzy']), []);
  const r = run(['smoek']);
  t.equal(r.status, 254, 'bad input');
  t.match(r.stderr, /unknown command 'smoek'\. Did you mean 'smoke'\?/);
  const g = run(['rig', 'stats']);
  t.equal(g.status, 254);
  t.match(g.stderr, /Did you mean 'rig status'\?/);
  const n = run(['xyzzy']);
  t.equal(n.status, 254);
  t.notMatch(n.stderr, /Did you mean/);
});

t.test("every command's help states its exit codes; names come from the registries", async (t) => {
  for (const e of commands) {
    const help = renderHelp((await e.load()).default);
    t.match(help, /^\s*Exit( codes)?:.*\b0\b/m, `${e.name}: an exit-code line`);
    t.match(help, /254/, `${e.name}: bad input's code`);
  }
  const runHelp = renderHelp((await commands.find((c) => c.name === 'campaign run')!.load()).default);
  const mutHelp = renderHelp((await commands.find((c) => c.name === 'qualify-mutants')!.load()).default);
  const planHelp = renderHelp((await commands.find((c) => c.name === 'campaign plan')!.load()).default);
  const mutants = loadEngine('clink').mutants.map((m) => m.name);
  t.ok(mutants.length > 5, `${mutants.length} Clink mutants`);
  for (const m of mutants) {
    t.ok(runHelp.replace(/\s+/g, ' ').includes(m), `campaign run help names mutant ${m}`);
    t.ok(mutHelp.replace(/\s+/g, ' ').includes(m), `qualify-mutants help names mutant ${m}`);
  }
  for (const k of Object.keys(FAULT_PACKAGES)) {
    t.ok(planHelp.includes(k), `campaign plan help names kind ${k}`);
    t.ok(runHelp.includes(k), `campaign run help names kind ${k}`);
  }
});

t.test("report RUN_DIR exits with the run's verdict", async (t) => {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'cq-report-exit-'));
  t.teardown(() => rmSync(tmp, { recursive: true, force: true }));
  for (const [fixture, verdict, code] of [['run-pass', null, 0], ['run-fail', null, 1], ['run-pass', 'ABORTED', 2], ['run-fail', 'GATE FAILED', 1]] as const) {
    const dir = path.join(tmp, `${fixture}-${verdict ?? 'as-is'}`.replace(/ /g, '_'));
    cpSync(path.join(repoRoot, 'test', 'fixtures', fixture), dir, { recursive: true });
    if (verdict) {
      const v = JSON.parse(readFileSync(path.join(dir, 'verdict.json'), 'utf8')) as Record<string, unknown>;
      writeFileSync(path.join(dir, 'verdict.json'), JSON.stringify({ ...v, verdict, exitCode: code }));
    }
    const r = run(['report', dir]);
    t.equal(r.status, code, `${fixture} ${verdict ?? '(stored verdict)'} -> exit ${code}: ${r.stderr}`);
  }
  const noVerdict = path.join(tmp, 'no-verdict');
  cpSync(path.join(repoRoot, 'test', 'fixtures', 'run-pass'), noVerdict, { recursive: true });
  rmSync(path.join(noVerdict, 'verdict.json'));
  rmSync(path.join(noVerdict, 'report.md'));
  t.equal(run(['report', noVerdict]).status, 2, 'no verdict recorded -> unknown');
  const empty = path.join(tmp, 'empty');
  mkdirSync(empty);
  t.equal(run(['report', empty]).status, 254, 'not a run directory (no provenance.json nor campaign.resolved.json) -> bad input');
  t.equal(run(['report', path.join(tmp, 'nope')]).status, 254, 'not a directory -> bad input');
});

t.test('the wrapper installs quietly on first use, and shows npm errors when it fails', async (t) => {
  const ok = mkdtempSync(path.join(os.tmpdir(), 'cq-wrapper-ok-'));
  const bad = mkdtempSync(path.join(os.tmpdir(), 'cq-wrapper-bad-'));
  t.teardown(() => {
    rmSync(ok, { recursive: true, force: true });
    rmSync(bad, { recursive: true, force: true });
  });
  // A package with no dependencies whose engines field this Node does not meet: npm ci warns
  // (EBADENGINE) and succeeds, with no network.
  for (const d of [ok, bad]) {
    cpSync(cli, path.join(d, 'clink-qual'));
    mkdirSync(path.join(d, 'bin'));
    writeFileSync(path.join(d, 'bin', 'clink-qual.ts'), "console.log('ran', process.argv.slice(2).join(' '))\n");
  }
  // Through `env -i`: tap's process tracking adds its loader hooks to children's NODE_OPTIONS,
  // and the probe's bin/clink-qual.ts is plain JS for the machine's own Node, without them.
  const clean = ['-i', `PATH=${process.env.PATH ?? '/usr/bin:/bin'}`, `HOME=${process.env.HOME ?? os.homedir()}`, `TMPDIR=${os.tmpdir()}`];
  const pkg = { name: 'cq-wrapper-probe', version: '1.0.0', engines: { node: '>=99' } };
  writeFileSync(path.join(ok, 'package.json'), JSON.stringify(pkg));
  writeFileSync(path.join(ok, 'package-lock.json'), JSON.stringify({ name: pkg.name, version: pkg.version, lockfileVersion: 3, requires: true, packages: { '': pkg } }));
  const r = spawnSync('env', [...clean, path.join(ok, 'clink-qual'), 'a', 'b'], { cwd: ok, encoding: 'utf8', timeout: 60_000 });
  t.equal(r.status, 0, r.stderr);
  t.equal(r.stdout.trim(), 'ran a b', 'the CLI ran after the install');
  t.equal(r.stderr.trim().split('\n').length, 1, `one line on stderr: ${r.stderr}`);
  t.match(r.stderr, /^clink-qual: first run: installing the npm packages/);
  t.match(readFileSync(path.join(ok, 'node_modules', '.clink-qual-npm-ci.log'), 'utf8'), /EBADENGINE/, "npm's warnings are in the log");

  writeFileSync(path.join(bad, 'package.json'), JSON.stringify({ name: 'x', version: '1.0.0' })); // no lock: npm ci refuses
  const f = spawnSync('env', [...clean, path.join(bad, 'clink-qual'), 'a'], { cwd: bad, encoding: 'utf8', timeout: 60_000 });
  t.equal(f.status, 2);
  t.match(f.stderr, /npm error/, "npm's error is shown");
  const logAt = /its full output is in (\S+)/.exec(f.stderr)?.[1];
  t.ok(logAt, 'the failure points at the log');
  if (logAt) {
    t.match(readFileSync(logAt, 'utf8'), /npm error/);
    rmSync(logAt, { force: true });
  }
  t.notMatch(f.stdout, /ran/, 'the CLI did not run');
});
