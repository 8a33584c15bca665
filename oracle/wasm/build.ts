/**
 * Builds oracle/wasm/judge.wasm from oracle/wasm/judge.as.ts with the pinned AssemblyScript
 * compiler (oracle/wasm/toolchain: its package.json and lock). The compiler is installed once
 * under the cache (lib/paths.ts cacheDir(), keyed by the lock's hash), not into the repo's
 * node_modules: the oracle only needs the built module, which is committed, and the
 * compiler with its binaryen is about 100 MB.
 *
 *   npm run build:wasm            rebuild oracle/wasm/judge.wasm
 *   npm run build:wasm -- --check say whether the committed module is what the source builds to
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { QualError } from '../../lib/errors.ts';
import { cacheDir, repoRoot } from '../../lib/paths.ts';

export const WASM_DIR = path.join(repoRoot, 'oracle', 'wasm');
export const JUDGE_SOURCE = path.join(WASM_DIR, 'judge.as.ts');
export const JUDGE_WASM = path.join(WASM_DIR, 'judge.wasm');
const TOOLCHAIN = path.join(WASM_DIR, 'toolchain');

/** The compiler's flags: optimised, no runtime or GC (the module allocates nothing), no assertions, no imports. */
export const ASC_FLAGS = ['-O3', '--runtime', 'stub', '--noAssert', '--use', 'abort='];

/** Where the pinned compiler is installed: the cache, keyed by the lock file's contents. */
export function toolchainDir(): string {
  const lock = readFileSync(path.join(TOOLCHAIN, 'package-lock.json'));
  return path.join(cacheDir(), `wasm-toolchain-${createHash('sha256').update(lock).digest('hex').slice(0, 12)}`);
}

/** Installs the pinned compiler under the cache unless it is there; returns asc's entry point. */
export function ensureToolchain(log: (s: string) => void = () => {}): string {
  const dir = toolchainDir();
  const asc = path.join(dir, 'node_modules', 'assemblyscript', 'bin', 'asc.js');
  const done = path.join(dir, '.installed');
  if (existsSync(done) && existsSync(asc)) return asc;
  log(`installing the AssemblyScript compiler (pinned in oracle/wasm/toolchain) into ${dir}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const f of ['package.json', 'package-lock.json']) copyFileSync(path.join(TOOLCHAIN, f), path.join(dir, f));
  const r = spawnSync('npm', ['ci', '--no-audit', '--no-fund', '--ignore-scripts'], { cwd: dir, encoding: 'utf8' });
  if (r.status !== 0) throw new QualError('PRECONDITION', `could not install the AssemblyScript compiler (npm ci in ${dir} exited ${r.status ?? r.signal}): ${(r.stderr || r.stdout).trim().split('\n').slice(-3).join(' ')}`);
  writeFileSync(done, new Date().toISOString() + '\n');
  return asc;
}

/** Compiles the judge's source into `out`. */
export function buildJudgeWasm(out: string, log: (s: string) => void = () => {}): void {
  const asc = ensureToolchain(log);
  const r = spawnSync(process.execPath, [asc, JUDGE_SOURCE, ...ASC_FLAGS, '--outFile', out], { cwd: repoRoot, encoding: 'utf8' });
  if (r.status !== 0) throw new QualError('PRECONDITION', `asc failed on ${path.relative(repoRoot, JUDGE_SOURCE)} (exit ${r.status ?? r.signal}):\n${(r.stderr || r.stdout).trim()}`);
}

/** True when the committed module is byte for byte what the source builds to now. */
export function committedMatchesSource(log: (s: string) => void = () => {}): { matches: boolean; built: Buffer; committed: Buffer } {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'clink-qual-wasm-'));
  try {
    const out = path.join(tmp, 'judge.wasm');
    buildJudgeWasm(out, log);
    const built = readFileSync(out);
    const committed = readFileSync(JUDGE_WASM);
    return { matches: built.equals(committed), built, committed };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

const USAGE = `usage: npm run build:wasm [-- --check]

Builds oracle/wasm/judge.wasm (the oracle's compiled fast path) from oracle/wasm/judge.as.ts
with the AssemblyScript compiler pinned in oracle/wasm/toolchain, installed once under the
cache. --check builds into a scratch directory and exits 1 when the committed module differs.`;

if (import.meta.main) {
  const { values } = parseArgs({ options: { check: { type: 'boolean', default: false }, help: { type: 'boolean', short: 'h', default: false } } });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const log = (s: string): void => console.error(`build:wasm: ${s}`);
  try {
    if (values.check) {
      const r = committedMatchesSource(log);
      console.log(r.matches ? `oracle/wasm/judge.wasm is what judge.as.ts builds to (${r.built.length} bytes)` : `oracle/wasm/judge.wasm (${r.committed.length} bytes) differs from what judge.as.ts builds to (${r.built.length} bytes): run npm run build:wasm and commit it`);
      process.exit(r.matches ? 0 : 1);
    }
    buildJudgeWasm(JUDGE_WASM, log);
    console.log(`built oracle/wasm/judge.wasm (${readFileSync(JUDGE_WASM).length} bytes)`);
  } catch (err) {
    console.error(`build:wasm: ${(err as Error).message}`);
    process.exit(2);
  }
}
