#!/usr/bin/env node
/**
 * The one test command (`npm test`, and `.ci/run` calls it):
 *   1. type-check the whole tree (tsc, strict);
 *   2. unit tests (test/unit), no rig needed: they see a state directory of their own
 *      (CLINK_QUAL_STATE, empty), so never the rig's state or its lock;
 *   3. install what the rig needs (Flink's parts only for the Flink rig test: rigInstallArgs),
 *      bring the local rig up, run the integration tests
 *      (test/rig, one file at a time: they share the rig), and tear the rig down, also
 *      when a test fails or the run is interrupted.
 * It ends with one line 'tests: N passed, N failed' whose numbers are tap's own counts
 * (the `# { total, pass, fail, ... }` comment tap prints last), summed over the unit and
 * rig runs; the steps around them (type-check, rig install/up/down) are listed apart.
 * Before it, where the time went (bin/test-times.ts): each test file's wall time, the
 * slowest 15, and the total.
 *
 * When both run, the unit tests run beside step 3 (issue 31 item 3), at nice 19 so the rig's
 * processes come first: the rig tests spend most of their time waiting on soaks at a few
 * hundred events a second, and the unit suite fills the idle CPU. Their output goes to a file
 * (named when they start) and is printed whole after the rig tests; one line says when they
 * end. --serial runs them first, as before. A unit test file is killed and failed after
 * UNIT_FILE_TIMEOUT_S (15 minutes); the rig's files have .taprc's hour.
 *
 * The rig tests run one file at a time, but for those that bring up a rig of their own
 * (RIG_OWN_HOSTS: test/rig/inventory-bare.test.ts, eight bare hosts in cqb-* namespaces on their
 * own bridge and subnet, its own state directory): they run beside the others from the start,
 * their output to a file printed when they end, and the last files (test/rig/zz-*, which take
 * the local rig down) wait for them. --serial runs them in line with the others.
 *
 * Options: --unit (only 1 and 2), --serial, or file paths to run just those tests (with the
 * rig when any is under test/rig). Anything else is refused (exit 254) before anything runs.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { EXIT } from '../lib/errors.ts';
import { repoRoot } from '../lib/paths.ts';
import { fmtDuration } from '../reports/format.ts';
import { formatTimeSummary, parseFileTimes, readProcessTimes, withProcessTimes, type FileTime } from './test-times.ts';

export const USAGE = `Usage: clink-qual test [--unit | --serial] [FILE.test.ts ...]

Type-checks the tree, runs the unit tests (test/unit), then brings the local rig up, runs
the integration tests (test/rig) one file at a time and tears the rig down.

By default the unit tests run beside the rig's install, rig up and the rig tests, at nice 19
(their output is printed whole after the rig tests), and the rig tests that bring up a rig
on hosts of their own (test/rig/inventory-bare.test.ts) run beside the other rig tests.

Options:
  --unit        only the type-check and the unit tests (no rig)
  --serial      the unit tests first, then the rig tests, one file at a time
  -h, --help    show this help
Arguments:
  FILE          run just these test files (the rig comes up only if one is under test/rig)

The last line is 'tests: N passed, N failed', tap's own assertion counts.

Exit codes: 0 all passed, 1 a test or step failed, 2 interrupted, 254 bad arguments.`;

export interface TestArgs {
  help: boolean;
  unitOnly: boolean;
  serial: boolean;
  files: string[];
}

/** Parses the runner's arguments; throws a UsageError (exit 254) on an unknown flag or a missing file. */
export function parseTestArgs(argv: readonly string[], exists: (p: string) => boolean = (p) => existsSync(path.resolve(repoRoot, p))): TestArgs {
  const out: TestArgs = { help: false, unitOnly: false, serial: false, files: [] };
  const missing: string[] = [];
  for (const a of argv) {
    if (a === '--help' || a === '-h') out.help = true;
    else if (a === '--unit') out.unitOnly = true;
    else if (a === '--serial') out.serial = true;
    else if (a.startsWith('-')) throw new UsageError(`unknown option '${a}'`);
    else if (!exists(a)) missing.push(a);
    else out.files.push(a);
  }
  if (!out.help && missing.length) throw new UsageError(`no such test file: ${missing.join(', ')}`);
  return out;
}

export class UsageError extends Error {
  override name = 'UsageError';
}

/** tap's own counts, as its root test prints them last: `# { total: 45, pass: 44, fail: 1 }`. */
export interface TapCounts {
  total: number;
  pass: number;
  fail: number;
  skip: number;
  todo: number;
}

export function emptyCounts(): TapCounts {
  return { total: 0, pass: 0, fail: 0, skip: 0, todo: 0 };
}

export function addCounts(a: TapCounts, b: TapCounts): TapCounts {
  return { total: a.total + b.total, pass: a.pass + b.pass, fail: a.fail + b.fail, skip: a.skip + b.skip, todo: a.todo + b.todo };
}

/**
 * The counts from the last top-level `# { total: …, pass: … }` comment of a tap run's output,
 * or null when tap printed none (it crashed, or was killed). The comment is util.format's
 * rendering of the root's Counts, so it may wrap onto further `# ` lines.
 */
export function parseTapCounts(output: string): TapCounts | null {
  const lines = output.split(/\r?\n/);
  let found: TapCounts | null = null;
  for (let i = 0; i < lines.length; i++) {
    if (!/^# \{/.test(lines[i]!)) continue;
    let text = lines[i]!.slice(2);
    let j = i;
    while (!text.trimEnd().endsWith('}') && j + 1 < lines.length && lines[j + 1]!.startsWith('# ')) text += ' ' + lines[++j]!.slice(2);
    const fields = new Map<string, number>();
    for (const m of text.matchAll(/(\w+): (\d+)/g)) fields.set(m[1]!, Number(m[2]));
    if (!fields.has('total') || !fields.has('pass')) continue;
    found = {
      total: fields.get('total')!,
      pass: fields.get('pass')!,
      fail: fields.get('fail') ?? 0,
      skip: fields.get('skip') ?? 0,
      todo: fields.get('todo') ?? 0,
    };
    i = j;
  }
  return found;
}

/**
 * The failed assertions of a tap run, each as its path `file > subtest > assertion`, for the
 * closing list. A subtest's own summary line is not an assertion: it is named only when it
 * failed with no failed assertion inside it (a file that crashed before asserting anything).
 * TODO failures are not failures; YAML diagnostics blocks are skipped.
 */
export function failedAssertions(output: string): string[] {
  const failures: string[] = [];
  const open: { indent: number; name: string; failuresAtStart: number }[] = [];
  let yamlIndent = -1;
  for (const line of output.split(/\r?\n/)) {
    const indent = line.length - line.trimStart().length;
    const body = line.trim();
    if (yamlIndent >= 0) {
      if (indent === yamlIndent && body === '...') yamlIndent = -1;
      continue;
    }
    if (body === '---') {
      yamlIndent = indent;
      continue;
    }
    const sub = /^# Subtest: (.*)$/.exec(body);
    if (sub) {
      open.push({ indent, name: sub[1]!, failuresAtStart: failures.length });
      continue;
    }
    const point = /^(not ok|ok) \d+(?: - (.*?))?(?: # (.*))?$/.exec(body);
    if (!point) continue;
    const [, status, name = '', directive = ''] = point;
    while (open.length && open[open.length - 1]!.indent > indent) open.pop();
    const top = open[open.length - 1];
    const parents = open.filter((o) => o.indent < indent).map((o) => o.name);
    if (top && top.indent === indent && top.name === name) {
      open.pop();
      if (status === 'not ok' && failures.length === top.failuresAtStart) failures.push([...parents, name].join(' > '));
      continue;
    }
    if (status === 'not ok' && !/^(TODO|SKIP)\b/i.test(directive)) failures.push([...parents, name].join(' > '));
  }
  return failures;
}

interface RunResult {
  code: number;
  output: string;
}

/** The children running now: a signal ends them before the rig comes down. */
const live = new Set<ChildProcess>();

/**
 * Runs a command, its stdout echoed (or, with `log`, its stdout and stderr written to that
 * file instead) and kept when `capture` asks.
 */
function run(cmd: string, argv: string[], opts: { capture?: boolean; env?: NodeJS.ProcessEnv; log?: string } = {}): Promise<RunResult> {
  return new Promise((resolve) => {
    const child = spawn(cmd, argv, { cwd: repoRoot, stdio: ['ignore', 'pipe', opts.log ? 'pipe' : 'inherit'], env: opts.env ?? process.env });
    live.add(child);
    const chunks: Buffer[] = [];
    const file = opts.log ? createWriteStream(opts.log) : undefined;
    child.stderr?.on('data', (d: Buffer) => file?.write(d));
    child.stdout!.on('data', (d: Buffer) => {
      if (file) file.write(d);
      else process.stdout.write(d);
      if (opts.capture) chunks.push(d);
    });
    child.on('close', (code) => {
      live.delete(child);
      const done = () => resolve({ code: code ?? 1, output: Buffer.concat(chunks).toString() });
      if (file) file.end(done);
      else done();
    });
  });
}

/** The unit tests' environment: a state directory of their own, so they never see (or lock) a rig. */
export function unitEnv(env: NodeJS.ProcessEnv, state: string): NodeJS.ProcessEnv {
  return { ...env, CLINK_QUAL_STATE: state };
}

/** Whether the unit tests run beside the rig's steps: both kinds of test are asked for, and not --serial. */
export function unitBesideRig(args: TestArgs, unitFiles: readonly string[], rigFiles: readonly string[]): boolean {
  return !args.serial && unitFiles.length > 0 && rigFiles.length > 0;
}

/**
 * Rig tests that bring up a rig of their own, on their own hosts, subnet and state directory:
 * they share only the machine with the local rig's tests, so they run beside them.
 */
export const RIG_OWN_HOSTS: readonly string[] = ['test/rig/inventory-bare.test.ts'];

/**
 * The rig test files in the order they run: `main` one at a time on the local rig, `beside`
 * (RIG_OWN_HOSTS) alongside `main` from its start, then `last` (test/rig/zz-*: they take the
 * local rig down) once both have ended. --serial: everything in `main`, in name order.
 */
export function rigTestLanes(rigFiles: readonly string[], serial: boolean): { main: string[]; beside: string[]; last: string[] } {
  if (serial) return { main: [...rigFiles], beside: [], last: [] };
  const isLast = (f: string) => path.basename(f).startsWith('zz-');
  const beside = rigFiles.filter((f) => RIG_OWN_HOSTS.includes(f));
  return { main: rigFiles.filter((f) => !beside.includes(f) && !isLast(f)), beside, last: rigFiles.filter((f) => !beside.includes(f) && isLast(f)) };
}

/**
 * The `rig install` arguments of a test run: the rig's own parts; Flink's too when the Flink
 * rig test will run (CLINK_QUAL_FLINK=1 turns it on, test/rig/flink-cluster.test.ts), so they
 * are installed in this step, timed, rather than inside the test (whose deploy would install
 * them on first use all the same). A default CI run never deploys Flink: its Flink unit tests
 * build the job and the agent with Maven themselves, so it installs none of Flink's parts.
 */
export function rigInstallArgs(env: NodeJS.ProcessEnv): string[] {
  return ['rig', 'install', ...(env.CLINK_QUAL_FLINK === '1' ? ['--engine', 'flink'] : [])];
}

/**
 * Seconds a unit test file may run before tap kills it and fails it. .taprc allows an hour
 * for the rig's long files (the kill table). The slowest unit file,
 * test/unit/engine/flink/fault-points.agent.test.ts, took 1 min 9 s to 3 min 28 s in the five
 * logs of docs/qualification/test-loop-2026-12-05; a hung one would otherwise stall the run
 * for an hour of CI's 90 minutes.
 */
export const UNIT_FILE_TIMEOUT_S = 900;

/** tap's command line: its files, at nice 19 when asked, with a per-file timeout when given. */
export function tapCommand(tap: string, files: readonly string[], opts: { nice?: boolean; timeoutS?: number } = {}): [string, string[]] {
  const argv = [...(opts.timeoutS !== undefined ? [`--timeout=${opts.timeoutS}`] : []), ...files];
  return opts.nice ? ['nice', ['-n', '19', tap, ...argv]] : [tap, argv];
}

export function listTests(dir: string): string[] {
  const abs = path.join(repoRoot, dir);
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = path.join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (name.endsWith('.test.ts')) out.push(path.relative(repoRoot, p));
    }
  };
  try {
    walk(abs);
  } catch {
    /* no such folder */
  }
  return out.sort();
}

async function main(argv: string[]): Promise<number> {
  let args: TestArgs;
  try {
    args = parseTestArgs(argv);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    console.error(`clink-qual test: ${e.message}. Run 'clink-qual test --help' for its options.`);
    return EXIT.badInput;
  }
  if (args.help) {
    console.log(USAGE);
    return EXIT.ok;
  }

  const node = process.execPath;
  const cli = path.join(repoRoot, 'bin', 'clink-qual.ts');
  const tap = path.join(repoRoot, 'node_modules', '.bin', 'tap');
  const startedAt = Date.now();
  let counts = emptyCounts();
  const failures: string[] = [];
  const steps: string[] = [];
  const times: FileTime[] = [];
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'clink-qual-test-'));
  const took = (since: number) => fmtDuration((Date.now() - since) / 1000);
  const step = async (name: string, cmd: string, cmdArgs: string[]): Promise<boolean> => {
    console.log(`# ${name}`);
    const t0 = Date.now();
    const ok = (await run(cmd, cmdArgs)).code === 0;
    steps.push(`${name} ${ok ? 'ok' : 'FAILED'} (${took(t0)})`);
    if (!ok) failures.push(name);
    return ok;
  };
  // tap clears .tap/processinfo when a run starts, so a run beside another would lose the
  // records written before the other began: each gathers its own files' records as it goes.
  // `log`: a run beside others, its output to this file; `nice`: at nice 19.
  const tapRun = async (name: string, files: string[], opts: { env?: NodeJS.ProcessEnv; log?: string; nice?: boolean; timeoutS?: number } = {}) => {
    if (!opts.log) console.log(`# ${name}`);
    const t0 = Date.now();
    const own = new Set(files);
    const records = new Map<string, number>();
    const gather = () => {
      for (const [f, ms] of readProcessTimes(path.join(repoRoot, '.tap', 'processinfo'))) if (own.has(f)) records.set(f, ms);
    };
    const timer = setInterval(gather, 5_000);
    const [cmd, argv] = tapCommand(tap, files, opts);
    const { code, output } = await run(cmd, argv, { capture: true, env: opts.env, log: opts.log });
    clearInterval(timer);
    gather();
    const c = parseTapCounts(output);
    times.push(...withProcessTimes(parseFileTimes(output), records));
    if (!c) failures.push(`${name}: tap printed no counts (exit ${code})`);
    else counts = addCounts(counts, c);
    failures.push(...failedAssertions(output));
    if (code !== 0 && (!c || c.fail === 0)) failures.push(`${name}: tap exited ${code}`);
    steps.push(`${name} ${c ? `${c.pass} passed, ${c.fail} failed` : `exit ${code}`} (${took(t0)})`);
    return c;
  };

  await step('type-check', path.join(repoRoot, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.json']);

  const unitFiles = args.files.length ? args.files.filter((f) => !f.includes('test/rig/')) : listTests('test/unit');
  const rigFiles = args.unitOnly ? [] : args.files.length ? args.files.filter((f) => f.includes('test/rig/')) : listTests('test/rig');
  const env = unitEnv(process.env, path.join(scratch, 'state'));

  if (rigFiles.length) {
    // The rig tests bring the rig up: one command on the rig at a time (their children run under
    // this lock). Taken before any test starts, so a held rig stops the run before anything runs.
    const { acquireRigLock } = await import('../rig/lock.ts');
    try {
      acquireRigLock('test', { log: (l) => console.log(`# rig lock: ${l}`) });
    } catch (err) {
      console.error(`clink-qual test: ${(err as Error).message}`);
      rmSync(scratch, { recursive: true, force: true });
      return EXIT.unknown;
    }
  }

  let besideLog: string | undefined;
  let beside: Promise<unknown> | undefined;
  if (unitFiles.length && unitBesideRig(args, unitFiles, rigFiles)) {
    besideLog = path.join(scratch, 'unit-tests.tap');
    const t0 = Date.now();
    console.log(`# unit tests: ${unitFiles.length} files beside the rig's steps, at nice 19; their output goes to ${besideLog} and is printed after the rig tests`);
    beside = tapRun('unit tests (beside the rig)', unitFiles, { env, log: besideLog, nice: true, timeoutS: UNIT_FILE_TIMEOUT_S }).then((c) =>
      console.log(`# unit tests (beside the rig) ended after ${took(t0)}: ${c ? `${c.pass} passed, ${c.fail} failed` : 'tap printed no counts'}`),
    );
  } else if (unitFiles.length) await tapRun('unit tests', unitFiles, { env, timeoutS: UNIT_FILE_TIMEOUT_S });

  if (rigFiles.length) {
    let rigUp = false;
    const down = async () => {
      if (!rigUp) return;
      rigUp = false;
      // --purge: the test run leaves nothing of the rig on the machine, uploaded binaries included.
      await step('rig down --purge', node, [cli, 'rig', 'down', '--purge']);
    };
    const onSignal = async () => {
      for (const c of live) if (c.pid) c.kill('SIGTERM');
      await down();
      rmSync(scratch, { recursive: true, force: true });
      process.exit(EXIT.unknown);
    };
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    process.once('SIGHUP', onSignal);
    const install = rigInstallArgs(process.env);
    if (await step(install.join(' '), node, [cli, ...install])) {
      rigUp = true;
      if (await step('rig up', node, [cli, 'rig', 'up'])) {
        const lanes = rigTestLanes(rigFiles, args.serial);
        const ownLog = path.join(scratch, 'rig-own-hosts.tap');
        let own: Promise<unknown> | undefined;
        if (lanes.beside.length) {
          const t0 = Date.now();
          console.log(`# rig tests on hosts of their own (${lanes.beside.join(', ')}) beside the others; their output goes to ${ownLog} and is printed when they end`);
          own = tapRun('rig tests on hosts of their own (beside the others)', lanes.beside, { log: ownLog }).then((c) =>
            console.log(`# rig tests on hosts of their own ended after ${took(t0)}: ${c ? `${c.pass} passed, ${c.fail} failed` : 'tap printed no counts'}`),
          );
        }
        if (lanes.main.length) await tapRun('integration tests on the rig', lanes.main);
        if (own) {
          await own;
          console.log(`# rig tests on hosts of their own, their output from ${ownLog}:`);
          process.stdout.write(readFileSync(ownLog));
        }
        if (lanes.last.length) await tapRun('integration tests on the rig, last', lanes.last);
      }
      await down();
    }
  }

  if (beside) {
    await beside;
    console.log(`# unit tests (run beside the rig), their output from ${besideLog}:`);
    process.stdout.write(readFileSync(besideLog!));
  }
  rmSync(scratch, { recursive: true, force: true });

  for (const line of formatTimeSummary(times, undefined)) console.log(line);
  if (failures.length) console.log(`# failed: ${failures.join('; ')}`);
  console.log(`# steps: ${steps.join(', ')}; ${took(startedAt)} in all`);
  const extra = [counts.skip ? `${counts.skip} skipped` : '', counts.todo ? `${counts.todo} todo` : ''].filter(Boolean);
  console.log(`tests: ${counts.pass} passed, ${counts.fail} failed${extra.length ? ', ' + extra.join(', ') : ''}`);
  return failures.length || counts.fail ? EXIT.fail : EXIT.ok;
}

if (import.meta.main) process.exitCode = await main(process.argv.slice(2));
