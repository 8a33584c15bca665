/**
 * The test runner's argument parsing (unknown flags refused before anything runs) and its
 * counts (tap's own, not the subtest summary lines), against tap output captured from a
 * real run of test/fixtures/tap/{mixed,crash}.ts and against a fresh run of the same files.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { failedAssertions, listTests, parseTapCounts, parseTestArgs, RIG_OWN_HOSTS, rigInstallArgs, rigTestLanes, tapCommand, UNIT_FILE_TIMEOUT_S, unitBesideRig, unitEnv, UsageError } from '../../../bin/run-tests.ts';
import { repoRoot } from '../../../lib/paths.ts';

const fixtures = path.join(repoRoot, 'test', 'fixtures', 'tap');
const captured = readFileSync(path.join(fixtures, 'mixed-and-crash.tap.txt'), 'utf8');

t.test('arguments: --unit, --help/-h, files; unknown flags and missing files refused', async (t) => {
  const all = () => true;
  t.same(parseTestArgs([], all), { help: false, unitOnly: false, serial: false, files: [] });
  t.same(parseTestArgs(['--unit'], all), { help: false, unitOnly: true, serial: false, files: [] });
  t.same(parseTestArgs(['--serial'], all), { help: false, unitOnly: false, serial: true, files: [] });
  t.same(parseTestArgs(['-h'], all).help, true);
  t.same(parseTestArgs(['--help'], all).help, true);
  t.same(parseTestArgs(['test/unit/a.test.ts', 'test/rig/b.test.ts'], all).files, ['test/unit/a.test.ts', 'test/rig/b.test.ts']);
  for (const bad of ['--bogus', '--unit=1', '--serial=1', '-x', '--', '--help=yes']) {
    t.throws(() => parseTestArgs([bad], all), UsageError, `${bad} refused`);
  }
  t.throws(() => parseTestArgs(['--help', '--bogus'], all), /unknown option '--bogus'/, 'an unknown flag is refused even beside --help');
  t.throws(() => parseTestArgs(['test/unit/nope.test.ts'], () => false), /no such test file: test\/unit\/nope\.test\.ts/);
  t.same(parseTestArgs(['test/unit/bin/run-tests.test.ts']).files, ['test/unit/bin/run-tests.test.ts'], 'a real file is found');
});

t.test('through the CLI: --bogus exits 254 before the type-check, --help prints the usage and exits 0', async (t) => {
  const script = path.join(repoRoot, 'bin', 'run-tests.ts');
  const started = Date.now();
  const bogus = spawnSync(process.execPath, [script, '--bogus'], { cwd: repoRoot, encoding: 'utf8', timeout: 30_000 });
  t.equal(bogus.status, 254);
  t.equal(bogus.stderr, "clink-qual test: unknown option '--bogus'. Run 'clink-qual test --help' for its options.\n", 'one clean line naming the option and pointing at --help');
  t.notMatch(bogus.stdout, /type-check/, 'nothing ran');
  const help = spawnSync(process.execPath, [script, '--help'], { cwd: repoRoot, encoding: 'utf8', timeout: 30_000 });
  t.equal(help.status, 0);
  t.match(help.stdout, /^Usage: clink-qual test/);
  t.notMatch(help.stdout, /# type-check/, 'help runs nothing');
  t.ok(Date.now() - started < 30_000, 'both answered at once');
});

t.test('counts: tap\'s own summary, not the subtest lines', async (t) => {
  // mixed.ts: 5 passes, 1 failed assertion, 1 skipped subtest, 1 TODO; crash.ts throws before
  // asserting anything, which tap counts as one failure.
  t.same(parseTapCounts(captured), { total: 9, pass: 5, fail: 2, skip: 1, todo: 1 });
  // What the old runner counted: every indented ok line, subtest summaries included.
  const indentedOk = captured.split('\n').filter((l) => /^\s+ok \d+/.test(l) && !/# SKIP/.test(l)).length;
  t.ok(indentedOk > 5, `the indented ok lines (${indentedOk}) overcount the 5 passes`);
  t.equal(parseTapCounts('TAP version 14\n1..1\n'), null, 'no summary: null');
  t.same(
    parseTapCounts('    # { total: 99, pass: 99 }\n# { total: 12, pass: 10,\n#   fail: 1, todo: 1 }\n# time=1ms\n'),
    { total: 12, pass: 10, fail: 1, skip: 0, todo: 1 },
    'only the top-level comment, also when it wraps',
  );
});

t.test('failed assertions: leaves by path; a subtest line only when nothing inside it failed', async (t) => {
  t.same(failedAssertions(captured), ['test/fixtures/tap/crash.ts', 'test/fixtures/tap/mixed.ts > failing subtest > arithmetic is wrong on purpose']);
});

t.test('a fresh tap run of the fixtures prints the captured counts', async (t) => {
  // Outside this tap run: tap prints its counts only in a process-root run (no TAP_* env).
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^_?TAP/.test(k)));
  const tap = path.join(repoRoot, 'node_modules', '.bin', 'tap');
  const r = spawnSync(tap, ['test/fixtures/tap/mixed.ts', 'test/fixtures/tap/crash.ts'], { cwd: repoRoot, env, encoding: 'utf8', timeout: 120_000 });
  t.equal(r.status, 1, 'tap fails the run');
  t.same(parseTapCounts(r.stdout), parseTapCounts(captured));
  // tap may run the two files in either order (it has put crash.ts last here under load).
  t.same(failedAssertions(r.stdout).sort(), failedAssertions(captured).sort());
});

t.test("a unit test file that hangs: cut at the unit tests' own timeout and failed, not the hour .taprc gives the rig's files", async (t) => {
  const taprc = Number(/^timeout:\s*(\d+)/m.exec(readFileSync(path.join(repoRoot, '.taprc'), 'utf8'))?.[1]);
  t.ok(UNIT_FILE_TIMEOUT_S < taprc, `the unit files' ${UNIT_FILE_TIMEOUT_S} s below .taprc's ${taprc} s`);
  t.same(tapCommand('tap', ['a.test.ts', 'b.test.ts'], { nice: true, timeoutS: 900 }), ['nice', ['-n', '19', 'tap', '--timeout=900', 'a.test.ts', 'b.test.ts']]);
  t.same(tapCommand('tap', ['a.test.ts']), ['tap', ['a.test.ts']], "the rig's files: .taprc's timeout");
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^_?TAP/.test(k)));
  const [cmd, argv] = tapCommand(path.join(repoRoot, 'node_modules', '.bin', 'tap'), ['test/fixtures/tap/hang.ts'], { timeoutS: 3 });
  const t0 = Date.now();
  const r = spawnSync(cmd, argv, { cwd: repoRoot, env, encoding: 'utf8', timeout: 300_000 });
  t.equal(r.signal, null, 'tap ended the file itself (not the 300 s limit here)');
  t.equal(r.status, 1, 'tap fails the run');
  t.ok(Date.now() - t0 < 290_000);
  t.match(r.stdout, /expired: test\/fixtures\/tap\/hang\.ts/);
  const c = parseTapCounts(r.stdout);
  t.equal(c?.pass, 1, 'the assertion before the hang passed');
  t.ok((c?.fail ?? 0) >= 1, 'the hang counted as failed');
});

t.test('every unit test mirrors a source: test/unit/<dir>/<file>[.<aspect>].test.ts tests <dir>/<file>.ts (or <dir>/<file>.sh, a script)', async (t) => {
  const unit = path.join(repoRoot, 'test', 'unit');
  const strays: string[] = [];
  let seen = 0;
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.test.ts')) {
        seen++;
        const rel = path.relative(unit, p);
        const base = path.basename(rel).replace(/\.test\.ts$/, '').split('.')[0]!;
        if (!['.ts', '.sh'].some((ext) => existsSync(path.join(repoRoot, path.dirname(rel), `${base}${ext}`)))) strays.push(rel);
      }
    }
  };
  walk(unit);
  t.ok(seen > 50, `found the unit tests (${seen})`);
  t.same(strays, [], 'no unit test without its source');
});

t.test("rig install: Flink's parts only when the Flink rig test will run (CLINK_QUAL_FLINK=1)", async (t) => {
  t.same(rigInstallArgs({}), ['rig', 'install'], 'a default run (CI) installs no part of Flink');
  t.same(rigInstallArgs({ CLINK_QUAL_FLINK: '0' }), ['rig', 'install']);
  t.same(rigInstallArgs({ CLINK_QUAL_FLINK: '1' }), ['rig', 'install', '--engine', 'flink'], 'the Flink rig test: installed in the install step');
  const gate = readFileSync(path.join(repoRoot, 'test', 'rig', 'flink-cluster.test.ts'), 'utf8');
  t.match(gate, /process\.env\.CLINK_QUAL_FLINK !== '1'/, 'the Flink rig test is gated on the same variable');
});

t.test('the unit tests run beside the rig only when both kinds run and --serial is not given; they never see the rig\'s state', async (t) => {
  const all = () => true;
  const unit = ['test/unit/a.test.ts'];
  const rig = ['test/rig/b.test.ts'];
  t.equal(unitBesideRig(parseTestArgs([], all), unit, rig), true, 'the whole suite: beside');
  t.equal(unitBesideRig(parseTestArgs(['--serial'], all), unit, rig), false, '--serial: one after the other');
  t.equal(unitBesideRig(parseTestArgs(['--unit'], all), unit, []), false, '--unit: no rig to be beside');
  t.equal(unitBesideRig(parseTestArgs([], all), [], rig), false, 'rig files only: no unit tests');
  t.equal(unitBesideRig(parseTestArgs([], all), unit, []), false, 'unit files only: no rig');
  const env = unitEnv({ PATH: '/bin', CLINK_QUAL_STATE: '/var/lib/clink-qual', CLINK_QUAL_CACHE: '/c' }, '/tmp/x/state');
  t.equal(env.CLINK_QUAL_STATE, '/tmp/x/state', "a state directory of their own, never the rig's (nor its lock)");
  t.equal(env.CLINK_QUAL_CACHE, '/c', 'the rest of the environment kept');
  t.equal(env.PATH, '/bin');
});

t.test('rig test lanes: a rig of its own beside the others, test/rig/zz-* after both; --serial: one line in name order', async (t) => {
  const rig = listTests('test/rig');
  t.ok(RIG_OWN_HOSTS.every((f) => rig.includes(f)), `every file run beside is a rig test: ${RIG_OWN_HOSTS.join(', ')}`);
  const lanes = rigTestLanes(rig, false);
  t.same(lanes.beside, RIG_OWN_HOSTS, 'beside: the tests with hosts of their own');
  t.same(lanes.last, rig.filter((f) => path.basename(f).startsWith('zz-')), 'last: the files that take the local rig down');
  t.ok(lanes.last.includes('test/rig/zz-rig-down.test.ts'));
  t.same([...lanes.main, ...lanes.beside, ...lanes.last].sort(), rig, 'every rig file runs once');
  t.ok(lanes.main.includes('test/rig/campaign-mutant.test.ts') && !lanes.main.some((f) => lanes.beside.includes(f) || lanes.last.includes(f)), 'the rest in main');
  t.same(rigTestLanes(rig, true), { main: rig, beside: [], last: [] }, '--serial: all in main, in name order');
  t.same(rigTestLanes(['test/rig/rig-ssh.test.ts'], false), { main: ['test/rig/rig-ssh.test.ts'], beside: [], last: [] }, 'a file asked for alone');
  t.same(rigTestLanes(['test/rig/inventory-bare.test.ts'], false), { main: [], beside: ['test/rig/inventory-bare.test.ts'], last: [] });
});
