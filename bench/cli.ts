/**
 * The benchmarks' command line, once: options and usage, and the rig lock a benchmark on the
 * rig takes before it touches the rig.
 */
import { QualError } from '../lib/errors.ts';
import { acquireRigLock } from '../rig/lock.ts';

/**
 * Parse the options, or print the usage for --help
 * (exit 0) or for an unusable option (its message first, exit 254). `null` means: done, do
 * not run.
 */
export function optionsOrUsage<T>(parse: (args: string[]) => T | 'help', args: string[], usage: string): T | null {
  let o: T | 'help';
  try {
    o = parse(args);
  } catch (err) {
    console.error(`${(err as Error).message}\n\n${usage}`);
    process.exitCode = 254;
    return null;
  }
  if (o === 'help') {
    console.log(usage);
    return null;
  }
  return o;
}

/**
 * Takes the rig lock (rig/lock.ts) for `bench <name>` before the benchmark touches the rig:
 * the benchmarks deploy the engine, create topics and load the store, which would wreck a
 * campaign running there (and a campaign's preflight would heal a benchmark's rig). A
 * benchmark run by another that holds the lock (scale's engine-sustained and oracle) runs
 * under it. When another command holds the rig, prints why (naming the holder), sets exit
 * code 2 and returns false: the caller must stop without touching the rig.
 */
export function takeRigLock(name: string): boolean {
  try {
    acquireRigLock(`bench ${name}`, { log: (l) => console.error(`bench ${name}: rig lock: ${l}`) });
    return true;
  } catch (err) {
    if (!(err instanceof QualError) || err.code !== 'PRECONDITION') throw err;
    console.error(`bench ${name}: ${err.message}`);
    process.exitCode = 2;
    return false;
  }
}
