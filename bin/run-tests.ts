#!/usr/bin/env node
/**
 * The one test command (`npm test`, and `.ci/run` calls it):
 *   1. type-check the whole tree (tsc, strict);
 *   2. unit tests (test/unit), no rig needed;
 *   3. install what the rig needs, bring the local rig up, run the integration tests
 *      (test/rig, one file at a time: they share the rig), and tear the rig down, also
 *      when a test fails or the run is interrupted.
 * It ends with one line 'tests: N passed, N failed'.
 *
 * Options: --unit (only 1 and 2), or file paths to run just those tests (with the rig
 * when any is under test/rig).
 */
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../lib/paths.ts';

const args = process.argv.slice(2);
const unitOnly = args.includes('--unit');
const files = args.filter((a) => !a.startsWith('--'));

let passed = 0;
let failed = 0;
const failures: string[] = [];

function run(cmd: string, argv: string[], opts: { parseTap?: boolean } = {}): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(cmd, argv, { cwd: repoRoot, stdio: ['ignore', 'pipe', 'inherit'], env: process.env });
    let buf = '';
    child.stdout.on('data', (d: Buffer) => {
      process.stdout.write(d);
      if (!opts.parseTap) return;
      buf += d.toString();
      let i;
      while ((i = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        // Top-level test points are one per file; count assertions from the nested ones.
        const m = /^(\s*)(not ok|ok) \d+ - (.*?)(?: # .*)?$/.exec(line);
        if (m && m[1]!.length > 0 && !/# SKIP/.test(line)) {
          if (m[2] === 'ok') passed++;
          else {
            failed++;
            failures.push(m[3]!);
          }
        }
      }
    });
    child.on('close', (code) => resolve(code ?? 1));
  });
}

function listTests(dir: string): string[] {
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

const node = process.execPath;
const cli = path.join(repoRoot, 'bin', 'clink-qual.ts');
const tap = path.join(repoRoot, 'node_modules', '.bin', 'tap');
let exit = 0;

console.log('# type-check (tsc --noEmit)');
if ((await run(path.join(repoRoot, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.json'])) !== 0) {
  failed++;
  failures.push('type-check');
  exit = 1;
} else passed++;

const unitFiles = files.length ? files.filter((f) => !f.includes('test/rig/')) : listTests('test/unit');
const rigFiles = unitOnly ? [] : files.length ? files.filter((f) => f.includes('test/rig/')) : listTests('test/rig');

if (unitFiles.length) {
  console.log('# unit tests');
  if ((await run(tap, unitFiles, { parseTap: true })) !== 0) exit = 1;
}

if (rigFiles.length) {
  let rigUp = false;
  const down = async () => {
    if (!rigUp) return;
    rigUp = false;
    // --purge: the test run leaves nothing of the rig on the machine, uploaded binaries included.
    console.log('# rig down --purge');
    if ((await run(node, [cli, 'rig', 'down', '--purge'])) !== 0) {
      failed++;
      failures.push('rig down');
      exit = 1;
    }
  };
  const onSignal = async () => {
    await down();
    process.exit(2);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  process.once('SIGHUP', onSignal);
  console.log('# rig install');
  if ((await run(node, [cli, 'rig', 'install'])) !== 0) {
    failed++;
    failures.push('rig install');
    exit = 1;
  } else {
    console.log('# rig up');
    rigUp = true;
    if ((await run(node, [cli, 'rig', 'up'])) !== 0) {
      failed++;
      failures.push('rig up');
      exit = 1;
    } else {
      console.log('# integration tests on the rig');
      if ((await run(tap, rigFiles, { parseTap: true })) !== 0) exit = 1;
    }
    await down();
  }
}

if (failures.length) console.log(`# failed: ${failures.join('; ')}`);
console.log(`tests: ${passed} passed, ${failed} failed`);
process.exitCode = exit || (failed ? 1 : 0);
