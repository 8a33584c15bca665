#!/usr/bin/env node
/**
 * Benchmarks (not timed tests): `npm run bench -- <name> [options]`.
 *
 * Each benchmark is one file, bench/<name>.ts, registered below, run in its own Node
 * process with --expose-gc (so it can measure memory after a collection). Its last line of
 * output is `RESULT <name> key=value ...`. To add one: write bench/<name>.ts and add a line
 * to BENCHES, saying whether it uses the rig.
 *
 * A benchmark that uses the rig takes the rig lock (bench/cli.ts takeRigLock) before it
 * touches the rig, and exits 2 naming the holder while another command uses it; one that
 * never touches the rig runs without it, beside a campaign.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { RECOUNT_NODE_FLAGS } from '../oracle/recount-flags.ts';

const here = path.dirname(fileURLToPath(import.meta.url));

/** Whether a benchmark uses the rig (and so takes the rig lock), as its listing says. */
type RigUse = 'rig' | 'rig-store' | 'no-rig';
const RIG_USE: Record<RigUse, string> = {
  rig: 'rig, takes the rig lock',
  'rig-store': "the rig's store under the rig lock; no rig with CLINK_QUAL_S3_ENDPOINT",
  'no-rig': 'no rig, no lock',
};

const BENCHES: Record<string, { file: string; summary: string; rig: RigUse }> = {
  oracle: { file: 'oracle.ts', summary: 'Recount throughput vs a raw GET of the same objects, and the oracle memory per event', rig: 'rig-store' },
  engine: { file: 'engine.ts', summary: 'Exactly-once throughput on the local rig vs raw produce -> consume -> put, same run', rig: 'rig' },
  'engine-sustained': { file: 'engine-sustained.ts', summary: "Max sustained rate of Clink and of raw consume -> put, each climbed to its limit under the producer's own ceiling (or over --rates), p50/p99 latency, where the time goes; same run", rig: 'rig' },
  scale: { file: 'scale.ts', summary: 'The scale curve: engine-sustained and oracle at 4, 16 and 64 partitions, growth against the first, same run', rig: 'rig' },
  'input-probes': { file: 'input-probes.ts', summary: "Issue 29's input probes through the CLI: wall time (median) vs clink-qual --version, max RSS, against 5 s / 300 MB", rig: 'no-rig' },
};

const [name, ...rest] = process.argv.slice(2);
if (!name || name === '--help' || name === '-h' || !BENCHES[name]) {
  console.log('Usage: npm run bench -- <name> [options]   (<name> --help for its options)\n\nBenchmarks:');
  const width = Math.max(...Object.keys(BENCHES).map((n) => n.length)) + 1;
  for (const [n, b] of Object.entries(BENCHES)) console.log(`  ${n.padEnd(width)} ${b.summary}\n  ${''.padEnd(width)} (${RIG_USE[b.rig]})`);
  console.log('\nA benchmark on the rig exits 2, naming the holder, while another command uses the rig.');
  process.exitCode = name && name !== '--help' && name !== '-h' ? 254 : 0;
} else {
  // The oracle bench measures the recount: in a process started as `clink-qual verify` is.
  const flags = name === 'oracle' ? RECOUNT_NODE_FLAGS : [];
  const child = spawn(process.execPath, ['--expose-gc', ...flags, path.join(here, BENCHES[name].file), ...rest], { stdio: 'inherit' });
  child.on('close', (code, signal) => {
    process.exitCode = code ?? (signal ? 2 : 0);
  });
}
