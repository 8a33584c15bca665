/**
 * One CLI grammar (issue 29 item 7), walked through the CLI for every command: its help exits
 * 0 and ends with the one 'Exit codes:' section; example run ids have the form the runner
 * gives (<campaign>-<YYYYMMDDTHHMMSS>-<4 hex>); every duration option takes the one grammar
 * and says so; an unknown option exits 254 with one clean line; the program and a command
 * group without a command print their overview and exit 0; -v is --version; `help test` is
 * `test --help`, the runner's own usage.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import t from 'tap';
import { commands } from '../../../bin/commands/index.ts';
import { USAGE } from '../../../bin/run-tests.ts';
import { parseDuration } from '../../../campaigns/overrides.ts';
import { DURATION_GRAMMAR, parseDurationOption } from '../../../lib/cli.ts';
import { repoRoot } from '../../../lib/paths.ts';

const cli = path.join(repoRoot, 'bin', 'clink-qual.ts');
const run = (...args: string[]) => spawnSync(process.execPath, [cli, ...args], { cwd: repoRoot, encoding: 'utf8', timeout: 60_000, env: { ...process.env, CLINK_QUAL_RUNS: '/nonexistent/runs' } });

/** The run id the runner creates (campaigns/runner/run-dir.ts): <campaign>-<YYYYMMDDTHHMMSS>-<4 hex>. */
const RUN_ID = /^[a-z0-9][a-z0-9-]*-\d{8}T\d{6}-[0-9a-f]{4}$/;

t.test("every command's help, through the CLI: exit 0, one 'Exit codes:' section, last; real run ids; one duration grammar", async (t) => {
  t.ok(commands.some((c) => c.name === 'test'), "'test' is a command of the CLI");
  for (const e of commands) {
    const words = e.name.split(' ');
    const r = run(...words, '--help');
    t.equal(r.status, 0, `${e.name} --help exits 0`);
    const out = r.stdout.trimEnd();
    const exitLines = out.split('\n').filter((l) => /^\s*Exit( codes)?\s*:/i.test(l));
    t.same(exitLines.length, 1, `${e.name}: one exit-code section`);
    t.match(exitLines[0] ?? '', /^Exit codes: /, `${e.name}: headed 'Exit codes:'`);
    const last = out.split('\n\n').at(-1)!;
    t.ok(last.startsWith('Exit codes: '), `${e.name}: the exit codes are the help's last section`);
    t.match(last, /\b0\b/, `${e.name}: exit 0 stated`);
    t.match(last, /254/, `${e.name}: bad input's 254 stated`);
    // Run ids, wherever the help names a stored run (runs/<id>, runs show <id>, --replay/--rehearsal <id>).
    const ids = [...out.matchAll(/runs\/([A-Za-z0-9._-]+)/g)].map((m) => m[1]!).filter((id) => !['index.html', 'latest'].includes(id));
    ids.push(...[...out.matchAll(/runs show ([A-Za-z0-9._-]+)(?![A-Za-z0-9._/-])/g)].map((m) => m[1]!).filter((id) => id !== 'latest' && id !== 'ID'));
    for (const id of ids) t.match(id, RUN_ID, `${e.name}: run id ${id} has the runner's form`);
    for (const m of out.matchAll(/e\.g\. ([a-z0-9-]+-\d{8}[^\s),]*)/g)) t.match(m[1]!, RUN_ID, `${e.name}: example id ${m[1]}`);
    // Durations: one value name and one grammar, stated in the option's line.
    t.notMatch(out, /--[a-z-]+ SECONDS\b/, `${e.name}: no option takes bare SECONDS`);
    for (const line of out.split('\n').filter((l) => /^\s+(-\w, )?--[a-z-]+ DURATION\b/.test(l))) {
      t.ok(line.includes('300, 90s, 5m, 2h, 1h30m'), `${e.name}: ${line.trim().split(' ')[0]} states the grammar`);
    }
  }
});

t.test('duration options: each takes the grammar, and a bad value names the option (254, nothing run)', async (t) => {
  // parseDurationOption is the grammar --soak always had (campaigns/overrides.ts parseDuration).
  for (const v of ['300', '90s', '5m', '2h', '1h30m', '1.5m', ' 45 ']) t.equal(parseDurationOption(v, 'x'), parseDuration(v), `${v}`);
  for (const v of ['5 m', 'm5', '1.2s', '0', '-3', '8d']) t.throws(() => parseDurationOption(v, 'x'), /--x: /, `'${v}' refused`);
  t.ok(DURATION_GRAMMAR.includes('1h30m'));
  const cases: [string[], RegExp][] = [
    [['campaign', 'plan', 'campaigns/quick.yaml', '--soak', '5 m'], /--soak: /],
    [['campaign', 'run', '--replay', 'test/fixtures/run-fail', '--soak', '6m'], /--soak: '6m' is 360 s: give from 1 s to the stored soak \(300\)/],
    [['campaign', 'run', '--replay', 'test/fixtures/run-fail', '--soak-s', '1x'], /--soak-s: '1x' is not a duration/],
    [['campaign', 'run', '--replay', 'test/fixtures/run-fail', '--soak', '1m', '--soak-s', '60'], /same option/],
    [['campaign', 'shrink', 'test/fixtures/run-fail', '--margin', 'soon'], /--margin: 'soon' is not a duration \(seconds, or with units: 300, 90s, 5m, 2h, 1h30m\)/],
    [['campaign', 'shrink', 'test/fixtures/run-fail', '--max-time', '1.5s'], /--max-time: '1.5s' is 1.5 s: give whole seconds/],
  ];
  for (const [args, msg] of cases) {
    const r = run(...args);
    t.equal(r.status, 254, args.join(' '));
    t.match(r.stderr, msg, args.join(' '));
  }
});

t.test('an unknown option: 254 and one clean line naming it and pointing at --help', async (t) => {
  for (const e of commands) {
    const words = e.name.split(' ');
    const r = run(...words, '--no-such-option');
    t.equal(r.status, 254, `${e.name} --no-such-option`);
    const lines = r.stderr.trimEnd().split('\n');
    t.equal(lines.length, 1, `${e.name}: one line (${r.stderr})`);
    t.match(lines[0], /'--no-such-option'/, `${e.name}: names the option`);
    t.match(lines[0], new RegExp(`'clink-qual ${e.name} --help'`), `${e.name}: points at its --help`);
    t.notMatch(r.stderr, /To specify a positional|ERR_PARSE_ARGS|at .*\.js/, `${e.name}: none of parseArgs' own text`);
  }
  const missing = run('campaign', 'plan', 'campaigns/quick.yaml', '--seed');
  t.equal(missing.status, 254);
  t.equal(missing.stderr, "clink-qual: campaign plan: option '--seed' needs a value (S). Run 'clink-qual campaign plan --help' for its options.\n");
  const top = run('--no-such-option');
  t.equal(top.status, 254);
  t.equal(top.stderr, "clink-qual: unknown option '--no-such-option'. Run 'clink-qual --help' for the commands and options.\n");
});

t.test('the program and each command group without a command: the overview, exit 0', async (t) => {
  const bare = run();
  t.equal(bare.status, 0, 'clink-qual');
  t.match(bare.stdout, /^clink-qual: /);
  t.match(bare.stdout, /\n\nExit codes: [^\n]*\n?$/, 'its exit codes last');
  for (const e of commands) t.ok(bare.stdout.includes(`  ${e.name} `), `lists ${e.name}`);
  const groups = [...new Set(commands.filter((c) => c.name.includes(' ')).map((c) => c.name.split(' ')[0]!))];
  t.ok(groups.includes('campaign') && groups.includes('rig'));
  for (const g of groups.filter((x) => !commands.some((c) => c.name === x))) {
    const r = run(g);
    t.equal(r.status, 0, `clink-qual ${g}`);
    t.match(r.stdout, new RegExp(`^Usage: clink-qual ${g} <command>`));
    t.match(r.stdout.trimEnd().split('\n\n').at(-1)!, /^Exit codes: /, `clink-qual ${g}: exit codes last`);
    t.equal(run(g, '--help').stdout, r.stdout, `clink-qual ${g} --help is the same`);
  }
});

t.test('-v and --version; help test and test --help print the runner\'s usage', async (t) => {
  const long = run('--version');
  const short = run('-v');
  t.equal(long.status, 0);
  t.equal(short.status, 0, '-v is accepted');
  t.equal(short.stdout, long.stdout);
  t.match(long.stdout, /^clink-qual \S+ \(revision /);
  const a = run('help', 'test');
  const b = run('test', '--help');
  t.equal(a.status, 0, 'help test');
  t.equal(b.status, 0, 'test --help');
  t.equal(a.stdout, `${USAGE}\n`, "help test prints bin/run-tests.ts's USAGE");
  t.equal(b.stdout, a.stdout);
  t.notMatch(a.stderr, /unknown command/);
  t.equal(run('help', 'rig', 'up').stdout, run('rig', 'up', '--help').stdout, 'help CMD is CMD --help');
});

t.test("the benchmarks' --duration-s takes the same grammar", async (t) => {
  const { parseOptions } = await import('../../../bench/engine-sustained.ts');
  const { parseScaleOptions } = await import('../../../bench/scale.ts');
  t.equal((parseOptions(['--duration-s', '2m']) as { durationMs: number }).durationMs, 120_000, 'engine-sustained --duration-s 2m');
  t.equal((parseOptions(['--duration-s', '30']) as { durationMs: number }).durationMs, 30_000, 'plain seconds still work');
  t.equal((parseScaleOptions(['--duration-s', '1m30s']) as { durationS: number }).durationS, 90, 'scale --duration-s 1m30s');
  t.throws(() => parseOptions(['--duration-s', 'soon']), /--duration-s: 'soon' is not a duration/);
});
